"""16-bit floats and packed floats: f16/bf16 scalars run the f32/f64 handlers' exact code (their
products and sums are exact in f64 pairs); .f16x2/.bf16x2/.f32x2 split into lanes, run lane by
lane and pack again (lane 0 in the low bits). setp on a packed type writes p for the low lane and
q for the high one (PTX ISA setp: p = BoolOp(t[0], c), q = BoolOp(t[1], c))."""

from __future__ import annotations

import numpy as np

from .compare import BOOL_OPS, FLOAT_COMPARES, float_compare
from .dtypes import UINT
from .errors import accept, refuse
from .floatbits import decode, fmt_of
from .registry import _HANDLERS, handles

PACKED = {".f16x2": (".f16", 16, 2), ".bf16x2": (".bf16", 16, 2), ".f32x2": (".f32", 32, 2)}
LANEWISE = ("add", "sub", "mul", "fma", "mad", "min", "max", "neg", "abs", "copysign")


def split(bits, width, lanes):
    b = np.asarray(bits).astype(np.uint64)
    m = np.uint64((1 << width) - 1)
    return [((b >> np.uint64(width * i)) & m).astype(UINT[width]) for i in range(lanes)]


def join(parts, width):
    word = np.zeros(np.shape(parts[0]), np.uint64)
    for i, p in enumerate(parts):
        word |= np.asarray(p).astype(np.uint64) << np.uint64(width * i)
    return word.astype(UINT[width * len(parts)])


def _lanewise(opcode):
    scalar = _HANDLERS[(opcode, "float")]

    def handler(mods, types, *srcs):
        packed = PACKED.get(types[0])
        if packed is None:
            return scalar(mods, types, *srcs)
        lane_type, width, lanes = packed
        lane_mods = (mods - {types[0]}) | {lane_type}
        per_src = [split(s, width, lanes) for s in srcs]
        parts = [scalar(lane_mods, (lane_type,), *[p[i] for p in per_src]) for i in range(lanes)]
        return join(parts, width)
    handler.__name__ = f"{opcode}_half"
    return handler


def register():
    for opcode in LANEWISE:
        handles(opcode, "half")(_lanewise(opcode))


register()


@handles("setp", "half", quiet=True)
def setp(mods, types, a, b, c=None, pair=False):
    accept("setp", mods, types, set(FLOAT_COMPARES) | set(BOOL_OPS) | {".ftz"})
    bops = [m for m in mods if m in BOOL_OPS]
    if (c is None) != (not bops):
        refuse("setp", mods, types, "a combining .and/.or/.xor needs exactly one predicate operand")
    packed = PACKED.get(types[0])
    if packed is None:
        from .compare import setp as scalar_setp
        return scalar_setp(mods, types, a, b, c, pair=pair)
    lane_type, width, lanes = packed
    fmt = fmt_of(lane_type)
    ftz = ".ftz" in mods
    results = []
    for x, y in zip(split(a, width, lanes), split(b, width, lanes)):
        vals = decode(x, fmt, ftz), decode(y, fmt, ftz)
        _, t = float_compare("setp", mods, types, None, None, fmt=fmt, vals=vals)
        results.append(BOOL_OPS[bops[0]](t, np.asarray(c, bool)) if bops else t)
    return tuple(results)
