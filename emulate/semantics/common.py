"""Modifier parsing shared by the handlers (state space, vector width, operand type)."""

from __future__ import annotations

from ..errors import NotEmulated
from ..types import TYPES

SPACES = {".global": "global", ".shared": "shared", ".shared::cta": "shared", ".local": "local",
          ".param": "param", ".param::entry": "kparam", ".param::func": "fparam", ".const": "const"}
VECTORS = {".v2": 2, ".v4": 4, ".v8": 8}


def space_of(mods) -> str:
    for m in mods:
        if m in SPACES:
            return SPACES[m]
        if m == ".shared::cluster":
            return "shared"      # the CTA's own offsets, or another CTA's (semantics/cluster.py)
    return "generic"


def vector_of(mods) -> int:
    return next((VECTORS[m] for m in mods if m in VECTORS), 1)


def type_of(instr, index: int = -1):
    types = [m for m in instr.modifiers if m in TYPES]
    if not types:
        raise NotEmulated(f"{instr.name}: no operand type")
    return TYPES[types[index]]


def resolve_param_space(space, sym_space, scope) -> str:
    """The concrete space of an access: a symbol's own space decides generic and .param
    accesses; a register-addressed .param access is the kernel block in an entry."""
    if sym_space is not None and space in ("generic", "param"):
        return sym_space
    if space == "param":
        return "kparam" if scope.code.is_entry else "fparam"
    return space
