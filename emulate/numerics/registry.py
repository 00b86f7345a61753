"""The ALU table: handlers registered per (opcode, operand family), one dispatcher per opcode.

A family is what decides the semantics of an opcode's operands: integers, predicates, f32/f64,
16-bit floats (scalar and packed) or packed 16-bit integers. `cvt`-like opcodes register for
family None and see every type themselves.
"""

from __future__ import annotations

import numpy as np

from .dtypes import TYPES
from .errors import refuse

FAMILY_OF_KIND = {"uint": "int", "sint": "int", "bits": "int", "pred": "pred", "float": "float",
                  "half": "half", "packed_half": "half", "packed_int": "int16x2"}

_HANDLERS: dict[tuple[str, str | None], object] = {}
# what a handler raises when given types or operands its opcode does not take (e.g. abs.b128)
MALFORMED = (KeyError, IndexError, ValueError, TypeError, AttributeError)
ALU: dict[str, object] = {}


def family(type_name: str) -> str | None:
    t = TYPES.get(type_name)
    return FAMILY_OF_KIND.get(t.kind) if t else None


def handles(opcode: str, *families: str | None, quiet=False):
    """Register `fn(mods, types, *srcs, **extra)` for an opcode and operand families. `quiet`
    handlers make NaNs and infinities on purpose: numpy's floating-point warnings are silenced."""
    def register(fn):
        run = _quietly(fn) if quiet else fn
        for fam in families or (None,):
            _HANDLERS[(opcode, fam)] = run
        ALU.setdefault(opcode, _dispatcher(opcode))
        return fn
    return register


def _quietly(fn):
    def run(*args, **kw):
        with np.errstate(all="ignore"):
            return fn(*args, **kw)
    return run


def _resolve(opcode, types):
    fn = _HANDLERS.get((opcode, None))
    if fn is None:
        fn = _HANDLERS.get((opcode, family(types[0]) if types else None))
    return fn


def _dispatcher(opcode):
    resolved = {}

    def dispatch(mods, types, *srcs, **extra):
        types = tuple(types)
        fn = resolved.get(types)
        if fn is None:
            fn = resolved[types] = _resolve(opcode, types)
            if fn is None:
                del resolved[types]
                refuse(opcode, mods, types, f"no {opcode} for operand type {types[0] if types else '(none)'}")
        mods = mods if isinstance(mods, frozenset) else frozenset(mods)
        try:
            return fn(mods, types, *srcs, **extra)
        except MALFORMED as exc:         # a form outside the handler's types or operand counts
            _malformed(opcode, mods, types, exc)
    dispatch.__name__ = f"alu_{opcode}"
    dispatch.opcode = opcode
    return dispatch


def _malformed(opcode, mods, types, exc):
    refuse(opcode, mods, types, f"not a form of {opcode} emulated here ({type(exc).__name__}: {exc})")


def bound(opcode: str, mods, types):
    """The dispatch of one instruction done once, when it is decoded: f(*srcs, **extra) with the
    dispatcher's results and refusals (an unknown operand type still refuses when it runs)."""
    types = tuple(types)
    mods = frozenset(mods)
    fn = _resolve(opcode, types)
    if fn is None:
        dispatch = ALU[opcode]
        return lambda *srcs, **extra: dispatch(mods, types, *srcs, **extra)

    def call(*srcs, **extra):
        try:
            return fn(mods, types, *srcs, **extra)
        except MALFORMED as exc:
            _malformed(opcode, mods, types, exc)
    return call
