"""One input through the whole pipeline, classified: PTX -> tree -> Python (plain and
--sugar) -> PTX must give the same bytes, or stop with a located error.

    outcome(text) -> ("identical", None) | ("located", message) | ("differs", stage)
                     | ("unlocated", traceback text)

"located" is a ParseError from the parser or the generator, `file:line:col: error:`.
Anything else (another exception, or output that is not the input) is a bug."""

from __future__ import annotations

import re
import traceback

_LOCATED = re.compile(r"[^\n]*:\d+:\d+: error: [^\n]+\n")


def outcome(text: str, filename: str = "fuzz.ptx", sugar: bool = True) -> tuple[str, str | None]:
    from ptx2py.ptxgrammar import ParseError, emit, parse
    from ptx2py.sugar import pipeline
    from ptx2py.transpile import DSLError, ptx_to_python, python_to_ptx

    stage = "parse"
    try:
        try:
            module = parse(text, filename)
        except ParseError as e:
            return _located(e, filename)
        stage = "emit"
        if emit(module) != text:
            return "differs", "parse -> emit"
        for stage, sweet in (("python", False), ("sugar", True))[: 2 if sugar else 1]:
            try:
                source = ptx_to_python(text, passes=pipeline.passes(filename=filename) if sweet else None,
                                       filename=filename)
            except ParseError as e:   # the generator refuses a statement, located
                return _located(e, filename)
            if python_to_ptx(source, filename + ".py") != text:
                return "differs", f"PTX -> Python{' --sugar' if sweet else ''} -> PTX"
    except DSLError as e:   # generated Python that does not run is a generator bug
        return "unlocated", f"{stage}: DSLError on generated Python: {e}"
    except Exception:  # noqa: BLE001 - the point is to catch every other exception
        return "unlocated", f"{stage}: " + traceback.format_exc(limit=-6)
    return "identical", None


def _located(e, filename: str) -> tuple[str, str]:
    text = str(e)
    ok = (text.startswith(f"{filename}:{e.line}:{e.column}: error: ") and e.line >= 1 and e.column >= 1
          and _LOCATED.match(text + "\n") is not None)
    return ("located", text) if ok else ("unlocated", f"badly located ParseError: {text!r}")
