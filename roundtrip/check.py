"""`ptx2py check`: the round trips of one file, stage by stage, as a result record.

Stages: `ptx` (parse -> emit), `python` (PTX -> Python -> PTX) and, when asked,
`sugar` (the same with --sugar). Each is True (byte-identical), False, or None
(not run because an earlier stage failed or it was not asked for). A failed stage's
`error` is located: `file:line:col: error: ...` (a round trip that is not byte-identical
names its first difference); `seconds` holds each stage's time.
"""

from __future__ import annotations

import time
from pathlib import Path

STAGES = ("ptx", "python", "sugar")


def check_file(path: Path, *, python_stage: bool = True, sugar: bool = False) -> dict:
    """Every asked-for round trip on one file; never raises on bad input."""
    from ptx2py.ptxgrammar import ParseError, emit, parse, read_ptx

    result: dict = {"file": str(path), "ok": False, **dict.fromkeys(STAGES), "seconds": {}}
    stage = "ptx"
    clock = _Clock(result["seconds"])
    try:
        text = read_ptx(path)
        result["bytes"] = len(text)
        module = parse(text, str(path))
        emitted = emit(module)
        result["ptx"] = emitted == text
        clock.lap("ptx")
        if not result["ptx"]:
            return _failed(result, "ptx", _not_identical(path, text, emitted, "parse -> emit"))
        from ptx2py.sugar import pipeline
        from ptx2py.transpile import ptx_to_python, python_to_ptx
        from ptx2py.transpile.generator import format_statistics

        for stage, wanted in (("python", python_stage), ("sugar", sugar)):
            if not wanted:
                continue
            source = ptx_to_python(text, passes=pipeline.passes(filename=str(path)) if stage == "sugar" else None,
                                   filename=str(path))
            back = python_to_ptx(source)
            result[stage] = back == text
            clock.lap(stage)
            if not result[stage]:
                what = f"PTX -> Python{' --sugar' if stage == 'sugar' else ''} -> PTX"
                return _failed(result, stage, _not_identical(path, text, back, what))
        if python_stage:
            result.update(format_statistics(module))
    except ParseError as e:
        return _failed(result, stage, str(e).splitlines()[0], clock)
    except OSError as e:   # unreadable, a device, gone since the folder was listed
        return _failed(result, stage, f"{path}: error: {e.strerror or e}", clock)
    except Exception as e:  # a crash is a failed check, reported, not a traceback
        result["crashed"] = True
        return _failed(result, stage, f"{type(e).__name__}: {e}", clock)
    result["ok"] = True
    return result


class _Clock:
    """Each stage's seconds, from the end of the previous one."""

    def __init__(self, seconds: dict):
        self.seconds, self.start = seconds, time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage], self.start = now - self.start, now


def _not_identical(path, text: str, got: str, what: str) -> str:
    """`file:line:col: error: ... is not byte-identical`, at the first character that differs."""
    at = next((i for i, (a, b) in enumerate(zip(text, got)) if a != b), min(len(text), len(got)))
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"{path}:{line}:{col}: error: {what} is not byte-identical (the first difference)"


def _failed(result: dict, stage: str, error: str, clock: _Clock | None = None) -> dict:
    if clock is not None:
        clock.lap(stage)
    result[stage] = False
    result["stage"] = stage
    result["error"] = error
    return result
