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
ALU: dict[str, object] = {}


def family(type_name: str) -> str | None:
    t = TYPES.get(type_name)
    return FAMILY_OF_KIND.get(t.kind) if t else None


def handles(opcode: str, *families: str | None):
    """Register `fn(mods, types, *srcs, **extra)` for an opcode and operand families."""
    def register(fn):
        for fam in families or (None,):
            _HANDLERS[(opcode, fam)] = fn
        ALU.setdefault(opcode, _dispatcher(opcode))
        return fn
    return register


def _dispatcher(opcode):
    def dispatch(mods, types, *srcs, **extra):
        fn = _HANDLERS.get((opcode, None))
        if fn is None:
            fam = family(types[0]) if types else None
            fn = _HANDLERS.get((opcode, fam))
            if fn is None:
                refuse(opcode, mods, types, f"no {opcode} for operand type {types[0] if types else '(none)'}")
        with np.errstate(all="ignore"):        # wrap-around and NaN are PTX semantics here
            return fn(frozenset(mods), tuple(types), *srcs, **extra)
    dispatch.__name__ = f"alu_{opcode}"
    dispatch.opcode = opcode
    return dispatch
