"""Adapter between the compiler and the ptx2py DSL (transpile.dsl).

The compiler drives the DSL directly: ``begin()`` opens a recorder, the
compiler makes ordinary DSL calls (``ptx.add.s32(...)``, ``reg.b32(...)``),
``hoist(mark)`` moves the register declarations recorded last to the top of the
open function body (they are only known after the body is walked), and
``finish()`` returns the Module.
"""
from __future__ import annotations

from transpile.dsl import ptx, recorder
from transpile.names import to_python

_OPS: dict = {}


def begin():
    return recorder.begin()


def mark() -> int:
    return recorder.current().mark()


def hoist(start: int) -> None:
    """Move the statements recorded since ``start`` to the top of the open block."""
    recorder.current().move_to_top(start)


def finish():
    rec = recorder.current()
    try:
        return rec.finish()
    finally:
        recorder.end()


def abort() -> None:
    recorder.end()


def op(spec: str):
    """``op("ld.global.nc.f32")`` -> the DSL chain ``ptx.ld.global_.nc.f32`` (cached)."""
    o = _OPS.get(spec)
    if o is None:
        parts = spec.split(".")
        o = getattr(ptx, parts[0])
        for p in parts[1:]:
            o = getattr(o, to_python("." + p))
        _OPS[spec] = o
    return o
