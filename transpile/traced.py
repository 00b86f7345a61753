"""The DSL run with a line map: which Python line of a sugar/DSL module recorded each PTX
instruction (verify's located findings, the CPU engine's reports at Python lines)."""

from __future__ import annotations


def python_to_ptx_traced(source: str, filename: str, check: bool = False) -> tuple[str, dict[int, int] | None]:
    """Run the DSL while noting which Python line recorded each instruction; then the PTX line
    of each instruction (from the module the recorder finished) maps back to that Python line.
    Any mismatch with the recorder's internals gives no map rather than a wrong one."""
    import sys

    from ptx2py import transpile

    try:
        from ptx2py.transpile.dsl import recorder
        Recorder = recorder.Recorder
        original_record, original_finish = Recorder.record, Recorder.finish
    except (ImportError, AttributeError):
        return transpile.python_to_ptx(source, filename=filename, check=check), None
    lines: dict[int, tuple[object, int]] = {}
    finished: list = []

    def record(self, stmt, *args, **kwargs):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != filename:
            frame = frame.f_back
        if frame is not None:
            lines[id(stmt)] = (stmt, frame.f_lineno)
        return original_record(self, stmt, *args, **kwargs)

    def finish(self):
        module = original_finish(self)
        finished.append(module)
        return module

    Recorder.record, Recorder.finish = record, finish
    try:
        ptx = transpile.python_to_ptx(source, filename=filename, check=check, stepwise=False)
    finally:
        Recorder.record, Recorder.finish = original_record, original_finish
    if not finished:
        return ptx, None
    from ptx2py.lint import instruction_positions

    line_map = {}
    for instr, line, _ in instruction_positions(finished[-1]):
        hit = lines.get(id(instr))
        if hit is not None and hit[0] is instr:
            line_map[line] = hit[1]
    return ptx, line_map or None


# --- comparison ---------------------------------------------------------------------------------
