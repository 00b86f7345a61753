"""PTX <-> Python.

    source = ptx_to_python(text)          # DSL Python that rebuilds `text`
    assert python_to_ptx(source) == text  # byte for byte

Readability passes (`sugar/`) build on this package; `ptx2py.ptx_to_python(text, sugar=True)`
composes them with it.
"""

from __future__ import annotations

from .dsl.errors import DSLError

__all__ = ["ptx_to_python", "python_to_ptx", "DSLError"]


def ptx_to_python(text: str, *, passes=None, filename: str = "<string>") -> str:
    """Parse PTX and write the DSL Python that rebuilds it exactly.

    `passes(stmts, module=..., generator=...)`, when given, rewrites the Python-generation IR
    (a list of `transpile.generator.PyStmt`, each an expression IR from `transpile.format`)
    before it is rendered, and returns the new list: `sugar.pipeline.apply` is one
    (`ptx2py.ptx_to_python(text, sugar=True)` composes the two). Passes rewrite that IR only,
    never PTX bytes or generated text, and must keep the round trip exact: running the
    returned Python rebuilds the same module."""
    from .style import gc_paused

    # One pause for the whole pipeline: the GC comes back on only after the tree and the
    # generation IR are freed (by reference counting), so no collection walks them.
    with gc_paused():
        return _to_python(text, passes, filename)


def _to_python(text: str, passes, filename: str) -> str:
    from ptx2py.ptxgrammar import parse

    from .generator import _Unsupported, unsupported_error
    from .style import deep_trees

    module = parse(text, filename)
    with deep_trees():
        try:
            return _generate(module, passes)
        except _Unsupported as e:
            raise unsupported_error(e, module, text, filename) from None


def _generate(module, passes) -> str:
    from .generator import Generator, generate_python, render

    gen = Generator(module, tag=passes is not None)
    if passes is None:
        return generate_python(gen)
    stmts = gen.run()
    if passes is not None:
        stmts = passes(stmts, module=module, generator=gen)
    return render(stmts, gen.style, trailer=getattr(gen, "trivia_table", None))


def python_to_ptx(source: str, filename: str = "<string>", *, check: bool = False,
                  stepwise: bool = True) -> str:
    """Run DSL Python and emit the PTX it records (errors point at its lines).

    With `check`, each instruction is checked against the instruction tables for
    the module's `.version`/`.target` (as `ptx2py lint` does) and a violation is
    a DSLError at the Python line that made it. `stepwise=False` runs the module as
    one compiled piece, so every recording frame is at its own line of `filename`
    (the line maps of `transpile.traced` read them)."""
    from .dsl import recorder
    from .legacy import upgrade_header
    from .style import deep_trees

    source = upgrade_header(source, filename)
    with deep_trees():
        if stepwise:
            recorder.begin(check=check)
            try:
                out = _run_stepwise(source, filename)
            finally:
                recorder.end()
            if out is not None:
                return out
        recorder.begin(check=check)
        try:
            return _run(source, filename)
        finally:
            recorder.end()


def _run_stepwise(source: str, filename: str) -> str | None:
    """The module run statement by statement from compiled templates (`transpile.fastrun`),
    or None: outside fastrun's subset, or it raised -- then `_run` runs the module whole,
    from a fresh recorder, and locates the error."""
    from ptx2py.ptxgrammar import emit

    from . import fastrun
    from .dsl import recorder
    from .dsl.trivia_table import split_trailer

    body, trailer = split_trailer(source)
    namespace = {"__name__": "__ptx__", "__file__": filename}
    stmts = fastrun.plan(body, namespace)
    if stmts is None:
        return None
    rec = recorder.current()
    done: list = []     # the PTX of the top-level statements already finished

    def emit_finished():   # a finished function's tree is dropped as soon as it is written
        taken = rec.take_finished()
        if taken:
            done.append("".join([emit(item) for item in taken]))

    try:
        _run_trailer(trailer, filename)
        exec(fastrun.HEADER_CODE, namespace)
        fastrun.run_module(stmts, emit_finished)
        module = rec.finish()
    except Exception:
        return None
    done.append(emit(module))
    return "".join(done)


def _run(source: str, filename: str) -> str:
    from ptx2py.ptxgrammar import emit

    from .dsl import recorder
    from .dsl.trivia_table import split_trailer

    try:
        body, trailer = split_trailer(source)
        code = compile(body, filename, "exec")
        namespace = {"__name__": "__ptx__", "__file__": filename}
        _run_trailer(trailer, filename)
        exec(code, namespace)
        module = recorder.current().finish()
    except DSLError as e:
        raise _located(e, filename, e.__traceback__, source) from None
    except SyntaxError as e:
        raise DSLError(f"invalid Python: {e.msg}", filename, e.lineno or 0, e.offset or 1,
                       _line(source, e.lineno)) from None
    except RecursionError:
        raise DSLError("the module nests too deeply to run", filename, 1, 1, _line(source, 1)) from None
    except Exception as e:
        raise _located(DSLError(f"{type(e).__name__}: {e}"), filename, e.__traceback__, source) from None
    return emit(module)


def _run_trailer(trailer, filename: str) -> None:
    """The layout (ptx.style, ptx.trivia) at the end of a generated module runs before its body.
    A generated module reads its layout by the table's rules even when `ptx.trivia` has no entry
    (the comment column of LLVM's style: transpile/dsl/trivia_table.py)."""
    if trailer is not None:
        from .dsl import recorder
        from .dsl.trivia_table import TriviaTable

        recorder.current().trivia = TriviaTable({})
        exec(compile(trailer, filename, "exec"), {"__name__": "__ptx__", "ptx": _ptx()})


def _ptx():
    from .dsl import ptx

    return ptx


def _located(err: DSLError, filename: str, tb, source: str = "") -> DSLError:
    """The error at the innermost frame of the user's file: line, column, that line."""
    line, column = err.line or 0, err.column
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line, column = tb.tb_lineno, _column(tb)
        tb = tb.tb_next
    if not line:   # found at the end (finish): the module's last line
        line = len(source.rstrip().splitlines()) or 1
    text = _line(source, line)
    if err.token and err.token in text:   # the caret under the modifier the message names
        column = 1 + text.find(err.token)
    if column is None:
        column = 1 + len(text) - len(text.lstrip())
    return DSLError(err.message, filename, line, column, text, err.token)


def _column(tb) -> int | None:
    """1-based column of the call being made in a traceback entry (Python 3.11 positions)."""
    try:
        positions = list(tb.tb_frame.f_code.co_positions())
        col = positions[tb.tb_lasti // 2][2]
    except (AttributeError, IndexError):
        return None
    return None if col is None else col + 1


def _line(source: str, lineno) -> str:
    lines = source.splitlines()
    return lines[lineno - 1] if lineno and 0 < lineno <= len(lines) else ""
