"""Comparisons: setp (with its .and/.or/.xor combining predicate) and set, for integers, f32/f64;
selp/slct selections — PTX ISA 9.7.4 and 9.7.7.2."""

from __future__ import annotations

import numpy as np

from .dtypes import int_value, ptx_type
from .errors import accept, refuse
from .floatbits import SCALAR_FLOATS, decode, fmt_of
from .registry import handles

INT_COMPARES = {".eq": np.equal, ".ne": np.not_equal, ".lt": np.less, ".le": np.less_equal,
                ".gt": np.greater, ".ge": np.greater_equal}
UNSIGNED_COMPARES = {".lo": np.less, ".ls": np.less_equal, ".hi": np.greater, ".hs": np.greater_equal}


def _unordered(fn):
    return lambda a, b: fn(a, b) | np.isnan(a) | np.isnan(b)


FLOAT_COMPARES = {
    **INT_COMPARES,
    ".ne": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),    # ordered: NaN gives false
    ".equ": _unordered(np.equal), ".neu": lambda a, b: a != b,
    ".ltu": _unordered(np.less), ".leu": _unordered(np.less_equal),
    ".gtu": _unordered(np.greater), ".geu": _unordered(np.greater_equal),
    ".num": lambda a, b: ~np.isnan(a) & ~np.isnan(b), ".nan": lambda a, b: np.isnan(a) | np.isnan(b),
}
BOOL_OPS = {".and": np.logical_and, ".or": np.logical_or, ".xor": np.logical_xor}


def int_compare(opcode, mods, types, a, b, t=None):
    t = t or ptx_type(types[-1])
    if not t.is_int:
        refuse(opcode, mods, types, f"no integer comparison on {t.name}")
    ops = [m for m in mods if m in INT_COMPARES or m in UNSIGNED_COMPARES]
    if len(ops) != 1:
        refuse(opcode, mods, types, "needs exactly one integer comparison")
    op = ops[0]
    if op in UNSIGNED_COMPARES:
        va, vb = (np.asarray(x).astype(t.container).astype(np.uint64) for x in (a, b))
        return op, UNSIGNED_COMPARES[op](va, vb)
    if t.kind == "bits" and op not in (".eq", ".ne"):
        refuse(opcode, mods, types, f"{op} on a bit type")
    va, vb = (int_value(np.asarray(x).astype(t.container), t) for x in (a, b))
    return op, INT_COMPARES[op](va, vb)


def float_compare(opcode, mods, types, a, b, fmt=None, vals=None):
    fmt = fmt or fmt_of(types[-1])
    ops = [m for m in mods if m in FLOAT_COMPARES]
    if len(ops) != 1:
        refuse(opcode, mods, types, "needs exactly one float comparison")
    if vals is None:
        if ".ftz" in mods and fmt not in ("f32", "f16"):
            refuse(opcode, mods, types, ".ftz is defined for .f32 and .f16 only")
        vals = decode(a, fmt, ".ftz" in mods), decode(b, fmt, ".ftz" in mods)
    return ops[0], FLOAT_COMPARES[ops[0]](*vals)


def combine(opcode, mods, types, result, c, pair):
    """setp's optional `.bop c` and its second destination q = !cmp bop c."""
    bops = [m for m in mods if m in BOOL_OPS]
    if len(bops) > 1 or (bops and c is None) or (c is not None and not bops):
        refuse(opcode, mods, types, "a combining .and/.or/.xor needs exactly one predicate operand")
    p, q = result, ~result
    if bops:
        fn = BOOL_OPS[bops[0]]
        c = np.asarray(c, bool)
        p, q = fn(p, c), fn(q, c)
    return (p, q) if pair else p


@handles("setp", "int", "float", quiet=True)
def setp(mods, types, a, b, c=None, pair=False):
    """Returns p (a bool array), or (p, q) with pair=True for `setp... p|q, a, b`."""
    fam_float = fmt_of(types[-1]) in SCALAR_FLOATS
    allowed = set(BOOL_OPS) | (set(FLOAT_COMPARES) | {".ftz"} if fam_float
                               else set(INT_COMPARES) | set(UNSIGNED_COMPARES))
    accept("setp", mods, types, allowed)
    compare = float_compare if fam_float else int_compare
    _, result = compare("setp", mods, types, a, b)
    return combine("setp", mods, types, result, c, pair)


@handles("set", None, quiet=True)
def set_(mods, types, a, b, c=None):
    """set.CmpOp{.bop}.dtype.stype: 0xffffffff/0 for integer destinations, 1.0/0.0 for .f32."""
    if len(types) != 2:
        refuse("set", mods, types, "needs a destination and a source type")
    dtype, stype = types
    fam_float = fmt_of(stype) in SCALAR_FLOATS
    if not fam_float and not ptx_type(stype).is_int:
        refuse("set", mods, types, f"set on {stype} (packed sources) is not emulated")
    allowed = set(BOOL_OPS) | {".ftz"} | (set(FLOAT_COMPARES) if fam_float
                                         else set(INT_COMPARES) | set(UNSIGNED_COMPARES))
    accept("set", mods, types, allowed)
    if fam_float:
        _, r = float_compare("set", mods, types, a, b)
    else:
        _, r = int_compare("set", mods, types, a, b)
    r = combine("set", mods, types, r, c, False)
    if dtype == ".f32":
        return np.where(r, np.uint32(0x3F800000), np.uint32(0))
    if dtype in (".u32", ".s32", ".b32"):
        return np.where(r, np.uint32(0xFFFFFFFF), np.uint32(0))
    refuse("set", mods, types, f"destination type {dtype}")


@handles("selp", None, quiet=True)
def selp(mods, types, a, b, c):
    accept("selp", mods, types, set())
    t = ptx_type(types[0])
    return np.where(np.asarray(c, bool), np.asarray(a).astype(t.container), np.asarray(b).astype(t.container))


@handles("slct", None, quiet=True)
def slct(mods, types, a, b, c):
    """slct.dtype.s32 / .f32: a when c >= 0 (c >= 0.0 for .f32; -0.0 counts as >= 0), else b."""
    accept("slct", mods, types, {".ftz"})
    t = ptx_type(types[0])
    if types[1] == ".s32":
        pick = int_value(np.asarray(c).astype(np.uint32), ptx_type(".s32")) >= 0
    elif types[1] == ".f32":
        pick = decode(c, "f32", ".ftz" in mods) >= 0.0
    else:
        refuse("slct", mods, types, "c must be .s32 or .f32")
    return np.where(pick, np.asarray(a).astype(t.container), np.asarray(b).astype(t.container))
