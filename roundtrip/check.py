"""`ptx2py check`: the round trips of one file, stage by stage, as a result record.

Stages: `ptx` (parse -> emit), `python` (PTX -> Python -> PTX) and, when asked,
`sugar` (the same with --sugar). Each is True (byte-identical), False, or None
(not run because an earlier stage failed or it was not asked for).
"""

from __future__ import annotations

from pathlib import Path

STAGES = ("ptx", "python", "sugar")


def check_file(path: Path, *, python_stage: bool = True, sugar: bool = False) -> dict:
    """Every asked-for round trip on one file; never raises on bad input."""
    from ptx2py.ptxgrammar import ParseError, emit, parse, read_ptx

    result: dict = {"file": str(path), "ok": False, **dict.fromkeys(STAGES)}
    stage = "ptx"
    try:
        text = read_ptx(path)
        result["bytes"] = len(text)
        module = parse(text, str(path))
        result["ptx"] = emit(module) == text
        if not result["ptx"]:
            return _failed(result, "ptx", "parse -> emit is not byte-identical")
        from ptx2py.sugar import pipeline
        from ptx2py.transpile import ptx_to_python, python_to_ptx
        from ptx2py.transpile.generator import format_statistics

        for stage, wanted in (("python", python_stage), ("sugar", sugar)):
            if not wanted:
                continue
            source = ptx_to_python(text, passes=pipeline.passes(filename=str(path)) if stage == "sugar" else None,
                                   filename=str(path))
            result[stage] = python_to_ptx(source) == text
            if not result[stage]:
                return _failed(result, stage, f"PTX -> Python{' --sugar' if stage == 'sugar' else ''} -> PTX "
                                              "is not byte-identical")
        if python_stage:
            result.update(format_statistics(module))
    except ParseError as e:
        return _failed(result, stage, str(e).splitlines()[0])
    except OSError as e:   # unreadable, a device, gone since the folder was listed
        return _failed(result, stage, f"{path}: error: {e.strerror or e}")
    except Exception as e:  # a crash is a failed check, reported, not a traceback
        return _failed(result, stage, f"{type(e).__name__}: {e}")
    result["ok"] = True
    return result


def _failed(result: dict, stage: str, error: str) -> dict:
    result[stage] = False
    result["stage"] = stage
    result["error"] = error
    return result
