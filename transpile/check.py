"""`ptx2py check`: the round trip of one file, stage by stage, as a result record."""

from __future__ import annotations

from pathlib import Path


def check_file(path: Path, *, python_stage: bool = True, sugar: bool = False) -> dict:
    """parse -> emit (and PTX -> Python -> PTX) on one file; never raises on bad input."""
    from ptxgrammar import ParseError, emit, parse, read_ptx

    result = {"file": str(path), "ok": False, "stage": "read"}
    try:
        text = read_ptx(path)
        result["bytes"] = len(text)
        result["stage"] = "parse"
        module = parse(text, str(path))
        result["stage"] = "emit"
        if emit(module) != text:
            result["error"] = "parse -> emit is not byte-identical"
            return result
        if python_stage:
            result["stage"] = "python"
            from transpile import ptx_to_python, python_to_ptx
            from transpile.generator import format_statistics

            for use_sugar in (False, True) if sugar else (False,):
                source = ptx_to_python(text, sugar=use_sugar, filename=str(path))
                if python_to_ptx(source) != text:
                    result["error"] = f"PTX -> Python{' --sugar' if use_sugar else ''} -> PTX is not byte-identical"
                    return result
            result.update(format_statistics(module))
    except ParseError as e:
        result["error"] = str(e).splitlines()[0]
        return result
    except Exception as e:  # a crash is a failed check, reported, not a traceback
        result["error"] = f"{type(e).__name__}: {e}"
        return result
    result["stage"] = "done"
    result["ok"] = True
    return result
