"""PTX <-> Python.

    source = ptx_to_python(text)          # DSL Python that rebuilds `text`
    assert python_to_ptx(source) == text  # byte for byte
"""

from __future__ import annotations

import sys

from .dsl.errors import DSLError

__all__ = ["ptx_to_python", "python_to_ptx", "DSLError"]


def ptx_to_python(text: str, *, sugar: bool = False, filename: str = "<string>", launch: str | None = None,
                  source: str | None = None) -> str:
    """Parse PTX and write the DSL Python that rebuilds it exactly (`launch`, `source`: a
    launch sidecar and a kernel source the sugar may name parameters from)."""
    from ptxgrammar import parse

    from .generator import Generator, render
    from .style import gc_paused

    with gc_paused():
        module = parse(text, filename)
    gen = Generator(module)
    stmts = gen.run()
    if sugar:
        stmts = sugar_hook(stmts, module, gen, {"filename": filename, "launch": launch, "source": source})
    return render(stmts, gen.style)


def sugar_hook(stmts, module, gen, options=None):
    """Run `sugar.pipeline.apply(stmts, module=..., generator=...)` when it exists.

    Contract: `apply` takes the Python-generation IR (a list of
    `transpile.generator.PyStmt`, each an expression IR from
    `transpile.format`) and returns a new list. Passes rewrite that IR only,
    never PTX bytes or generated text, and must keep the round trip exact:
    running the returned Python rebuilds the same module.
    """
    try:
        from sugar import pipeline
    except ImportError:
        return stmts
    apply = getattr(pipeline, "apply", None)
    if apply is None:
        return stmts
    return apply(stmts, module=module, generator=gen, options=options)


def python_to_ptx(source: str, filename: str = "<string>", *, check: bool = False) -> str:
    """Run DSL Python and emit the PTX it records (errors point at its lines).

    With `check`, each instruction is checked against the instruction tables for
    the module's `.version`/`.target` (as `ptx2py lint` does) and a violation is
    a DSLError at the Python line that made it."""
    from ptxgrammar import emit

    from .dsl import recorder

    recorder.begin(check=check)
    try:
        code = compile(source, filename, "exec")
        namespace = {"__name__": "__ptx__", "__file__": filename}
        exec(code, namespace)
        module = recorder.current().finish()
    except DSLError as e:
        raise _located(e, filename, e.__traceback__, source) from None
    except SyntaxError as e:
        raise DSLError(f"invalid Python: {e.msg}", filename, e.lineno or 0) from None
    except Exception as e:
        raise _located(DSLError(f"{type(e).__name__}: {e}"), filename, e.__traceback__) from None
    finally:
        recorder.end()
    return emit(module)


def _located(err: DSLError, filename: str, tb, source: str | None = None) -> DSLError:
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    lines = source.splitlines() if source else []
    text = lines[line - 1] if 0 < line <= len(lines) else None
    return DSLError(err.message, filename, line, text, err.token)
