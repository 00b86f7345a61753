"""Logic and bit instructions: and/or/xor/not/cnot (integers and predicates), shl/shr, shf, bfe/bfi,
prmt, lop3, brev/clz/popc/bfind, dp4a/dp2a — PTX ISA 9.7.1 and 9.7.7."""

from __future__ import annotations

import numpy as np

from .dtypes import SINT as SIGNED_CONTAINER
from .dtypes import mask, ptx_type, signed_view, to_bits
from .errors import accept, refuse
from .registry import handles

U32 = np.uint32


def _u64(x):
    return np.asarray(x).astype(np.uint64)


def _logic(opcode, fn, arity):
    @handles(opcode, "int", "pred")
    def handler(mods, types, *srcs):
        accept(opcode, mods, types, set())
        if len(srcs) != arity:                # a ufunc would take an extra operand as its `out`
            refuse(opcode, mods, types, f"takes {arity} source operand(s)")
        if types[0] == ".pred":
            return fn(*[np.asarray(s, bool) for s in srcs])
        t = ptx_type(types[0])
        return fn(*[np.asarray(s).astype(t.container) for s in srcs]).astype(t.container)
    return handler


and_ = _logic("and", np.bitwise_and, 2)
or_ = _logic("or", np.bitwise_or, 2)
xor = _logic("xor", np.bitwise_xor, 2)
not_ = _logic("not", np.invert, 1)


@handles("cnot", "int")
def cnot(mods, types, a):
    accept("cnot", mods, types, set())
    t = ptx_type(types[0])
    return (np.asarray(a) == 0).astype(t.container)


# -- shifts ------------------------------------------------------------------------------------

def _shift_amount(b):
    """Shift amounts are unsigned 32-bit; larger than the width means "everything shifted out"."""
    return _u64(np.asarray(b).astype(np.uint32))


def _in_range_shift(a, b, t):
    """(a, n) in a's own container when every shift amount is below the width (numpy's, i.e. C's,
    shifts are only defined there), else None."""
    n = np.asarray(b).astype(np.uint32, copy=False)
    if n.size and n.max() < t.width:
        c = SIGNED_CONTAINER[t.width] if t.signed else t.container
        return np.asarray(a).astype(t.container, copy=False).view(c), n.astype(c)
    return None


@handles("shl", "int")
def shl(mods, types, a, b):
    accept("shl", mods, types, set())
    t = ptx_type(types[0])
    fast = _in_range_shift(a, b, ptx_type(f".b{t.width}"))
    if fast is not None:
        return fast[0] << fast[1]
    n = _shift_amount(b)
    out = np.where(n >= t.width, np.uint64(0), _u64(a) << np.minimum(n, np.uint64(63)))
    return to_bits(out, t.width)


@handles("shr", "int")
def shr(mods, types, a, b):
    accept("shr", mods, types, set())
    t = ptx_type(types[0])
    fast = _in_range_shift(a, b, t)
    if fast is not None:
        return (fast[0] >> fast[1]).view(t.container)
    n = np.minimum(_shift_amount(b), np.uint64(t.width))
    if t.signed:                              # arithmetic: shifts of >= width give all sign bits
        v = signed_view(a, t.width)
        return to_bits(v >> np.minimum(n, np.uint64(63)).astype(np.int64), t.width)
    out = np.where(n >= t.width, np.uint64(0), _u64(a) >> np.minimum(n, np.uint64(63)))
    return to_bits(out, t.width)


@handles("shf", "int")
def shf(mods, types, a, b, c):
    """Funnel shift of the 64-bit {b:a}: .l keeps the upper word, .r the lower one."""
    accept("shf", mods, types, {".l", ".r", ".wrap", ".clamp"})
    if types[0] not in (".b32", ".u32", ".s32") or (".l" in mods) == (".r" in mods):
        refuse("shf", mods, types, "needs one of .l/.r on a 32-bit type")
    n = _u64(c).astype(np.uint32).astype(np.uint64)
    n = n & np.uint64(31) if ".wrap" in mods else np.minimum(n, np.uint64(32))
    pair = _u64(a) | (_u64(b) << np.uint64(32))
    if ".l" in mods:
        return to_bits((pair << n) >> np.uint64(32), 32)
    if types[0] == ".s32":                    # shf.r.s32: the high word shifts in its sign
        spair = pair.view(np.int64)
        return to_bits(spair >> n.astype(np.int64), 32)
    return to_bits(pair >> n, 32)


# -- bit fields ----------------------------------------------------------------------------------

def _field_args(b, c):
    return _u64(b) & np.uint64(0xFF), _u64(c) & np.uint64(0xFF)


def _low_mask(n):
    """Masks of n low ones, n in [0, 64]."""
    n = np.minimum(n, np.uint64(64))
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    return np.where(n >= 64, full, (np.uint64(1) << np.minimum(n, np.uint64(63))) - np.uint64(1))


@handles("bfe", "int")
def bfe(mods, types, a, b, c):
    accept("bfe", mods, types, set())
    t = ptx_type(types[0])
    pos, length = _field_args(b, c)
    w = np.uint64(t.width)
    ua = _u64(a) & mask(t.width)
    shifted = np.where(pos >= w, np.uint64(0), ua >> np.minimum(pos, w - np.uint64(1)))
    avail = np.where(pos >= w, np.uint64(0), w - np.minimum(pos, w))
    take = np.minimum(length, avail)
    field = shifted & _low_mask(take)
    if t.signed:
        msb_index = np.minimum(pos + length - np.uint64(1), w - np.uint64(1))
        sbit = ((ua >> np.where(length == 0, np.uint64(0), msb_index)) & np.uint64(1)).astype(bool)
        sbit &= length != 0
        field = np.where(sbit, field | ~_low_mask(take), field)
    return to_bits(field, t.width)


@handles("bfi", "int")
def bfi(mods, types, a, b, c, d):
    accept("bfi", mods, types, set())
    t = ptx_type(types[0])
    pos, length = _field_args(c, d)
    w = np.uint64(t.width)
    inside = pos < w
    spot = np.minimum(pos, w - np.uint64(1))
    field_mask = np.where(inside, (_low_mask(length) << spot) & mask(t.width), np.uint64(0))
    out = (_u64(b) & ~field_mask) | ((_u64(a) << spot) & field_mask)
    return to_bits(out, t.width)


# -- prmt ---------------------------------------------------------------------------------------

# Per mode, the byte of {b, a} that each destination byte takes, from the selector's low two bits
# (PTX ISA prmt, "forward/backward 4 extract", "replicate", "edge clamp").
_PRMT_MODES = {
    ".f4e": lambda s: [s + i for i in range(4)],
    ".b4e": lambda s: [(s - i) & 7 for i in range(4)],
    ".rc8": lambda s: [s] * 4,
    ".ecl": lambda s: [max(i, s) for i in range(4)],
    ".ecr": lambda s: [min(i, s) for i in range(4)],
    ".rc16": lambda s: [(s & 1) * 2, (s & 1) * 2 + 1] * 2,
}
_PRMT_TABLES = {m: np.array([f(s) for s in range(4)], dtype=np.uint64) for m, f in _PRMT_MODES.items()}


@handles("prmt", "int")
def prmt(mods, types, a, b, c):
    modes = set(mods) - set(types)
    accept("prmt", mods, types, set(_PRMT_MODES))
    if types[0] != ".b32" or len(modes) > 1:
        refuse("prmt", mods, types, "needs .b32 and at most one mode")
    pair = _u64(a) & np.uint64(0xFFFFFFFF) | ((_u64(b) & np.uint64(0xFFFFFFFF)) << np.uint64(32))
    sel = _u64(c)
    out = np.zeros(pair.shape, np.uint64)
    if modes:
        idx = _PRMT_TABLES[modes.pop()][(sel & np.uint64(3)).astype(np.int64)]
        for i in range(4):
            byte = (pair >> (idx[..., i] * np.uint64(8))) & np.uint64(0xFF)
            out |= byte << np.uint64(8 * i)
        return to_bits(out, 32)
    for i in range(4):
        nib = (sel >> np.uint64(4 * i)) & np.uint64(0xF)
        byte = (pair >> ((nib & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
        replicate_sign = (nib & np.uint64(8)) != 0
        byte = np.where(replicate_sign, np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)), byte)
        out |= byte << np.uint64(8 * i)
    return to_bits(out, 32)


# -- lop3 ---------------------------------------------------------------------------------------

@handles("lop3", "int")
def lop3(mods, types, a, b, c, lut):
    """Each result bit is bit (a<<2 | b<<1 | c) of immLut, with a=0xF0, b=0xCC, c=0xAA."""
    accept("lop3", mods, types, set())
    if types[0] != ".b32":
        refuse("lop3", mods, types, "only the .b32 form without a predicate output")
    a, b, c = (_u64(x) & np.uint64(0xFFFFFFFF) for x in (a, b, c))
    lut = np.broadcast_to(_u64(lut) & np.uint64(0xFF), a.shape)
    full = np.uint64(0xFFFFFFFF)
    out = np.zeros(a.shape, np.uint64)
    for k in range(8):                        # minterm k: a, b, c each taken or inverted
        term = (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c) & full
        on = ((lut >> np.uint64(k)) & np.uint64(1)).astype(bool)
        out |= np.where(on, term, np.uint64(0))
    return to_bits(out, 32)


# -- counts ------------------------------------------------------------------------------------

def _popcount64(x):
    x = _u64(x)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


def _msb(x):
    """Index of the highest set bit (-1 for zero), int64, by a vectorised binary search."""
    x = _u64(x)
    pos = np.zeros(x.shape, np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        s = np.uint64(shift)
        high = (x >> s) != 0
        pos += np.where(high, shift, 0)
        x = np.where(high, x >> s, x)
    return np.where(x == 0, -1, pos)


@handles("popc", "int")
def popc(mods, types, a):
    accept("popc", mods, types, set())
    t = ptx_type(types[0])
    return _popcount64(_u64(a) & mask(t.width)).astype(np.uint32)


@handles("clz", "int")
def clz(mods, types, a):
    accept("clz", mods, types, set())
    t = ptx_type(types[0])
    return (t.width - 1 - _msb(_u64(a) & mask(t.width))).astype(np.uint32)


@handles("brev", "int")
def brev(mods, types, a):
    accept("brev", mods, types, set())
    t = ptx_type(types[0])
    x = _u64(a)
    out = np.zeros(x.shape, np.uint64)
    for i in range(t.width):
        out |= ((x >> np.uint64(i)) & np.uint64(1)) << np.uint64(t.width - 1 - i)
    return to_bits(out, t.width)


@handles("bfind", "int")
def bfind(mods, types, a):
    """Most significant non-sign bit; 0xffffffff when there is none; .shiftamt counts from the top."""
    accept("bfind", mods, types, {".shiftamt"})
    t = ptx_type(types[0])
    x = _u64(a) & mask(t.width)
    if t.signed:
        negative = ((x >> np.uint64(t.width - 1)) & np.uint64(1)).astype(bool)
        x = np.where(negative, ~x & mask(t.width), x)
    pos = _msb(x)
    if ".shiftamt" in mods:
        pos = np.where(pos < 0, -1, t.width - 1 - pos)
    return to_bits(pos, 32)


# -- dot products ------------------------------------------------------------------------------

def _lanes(x, width, count, signed):
    x = _u64(x)
    out = []
    for i in range(count):
        v = ((x >> np.uint64(width * i)) & np.uint64((1 << width) - 1)).astype(np.int64)
        out.append(np.where(v >= (1 << (width - 1)), v - (1 << width), v) if signed else v)
    return out


@handles("dp4a", "int")
def dp4a(mods, types, a, b, c):
    accept("dp4a", mods, types, set())
    sa, sb = types[0] == ".s32", types[1] == ".s32"
    total = sum(x * y for x, y in zip(_lanes(a, 8, 4, sa), _lanes(b, 8, 4, sb)))
    signed_acc = sa or sb
    acc = signed_view(c, 32) if signed_acc else _u64(c).astype(np.int64)
    return to_bits(total + acc, 32)


@handles("dp2a", "int")
def dp2a(mods, types, a, b, c):
    accept("dp2a", mods, types, {".lo", ".hi"})
    if (".lo" in mods) == (".hi" in mods):
        refuse("dp2a", mods, types, "needs one of .lo/.hi")
    sa, sb = types[0] == ".s32", types[1] == ".s32"
    bytes_b = _lanes(b, 8, 4, sb)
    half = bytes_b[2:] if ".hi" in mods else bytes_b[:2]
    total = sum(x * y for x, y in zip(_lanes(a, 16, 2, sa), half))
    acc = signed_view(c, 32) if (sa or sb) else _u64(c).astype(np.int64)
    return to_bits(total + acc, 32)


# -- szext / bmsk / fns (PTX ISA 9.7.1.17, 9.7.1.21, 9.7.1.22; their pseudo-code, vectorised) ----

ALL_ONES = np.uint64(0xFFFFFFFF)


def _mode(opcode, mods, types):
    modes = [m for m in (".clamp", ".wrap") if m in mods]
    if len(modes) != 1:
        refuse(opcode, mods, types, "needs one of .clamp/.wrap")
    return modes[0]


@handles("szext", "int")
def szext(mods, types, a, b):
    accept("szext", mods, types, {".clamp", ".wrap"})
    mode = _mode("szext", mods, types)
    if types[0] not in (".u32", ".s32"):
        refuse("szext", mods, types, "szext is .u32/.s32 only")
    a, b = _u64(a) & ALL_ONES, _u64(b) & ALL_ONES
    b1 = b & np.uint64(0x1F)
    too_large = (b >= 32) & (mode == ".clamp")
    mask = np.where(too_large, np.uint64(0), (ALL_ONES << b1) & ALL_ONES)
    sign_pos = (b1 - np.uint64(1)) & np.uint64(0x1F)
    sign = ((a >> sign_pos) & np.uint64(1)).astype(bool) & (b1 != 0) & ~too_large & (types[0] == ".s32")
    return to_bits((a & ~mask & ALL_ONES) | np.where(sign, mask, np.uint64(0)), 32)


@handles("bmsk", "int")
def bmsk(mods, types, a, b):
    accept("bmsk", mods, types, {".clamp", ".wrap"})
    mode = _mode("bmsk", mods, types)
    a, b = _u64(a) & ALL_ONES, _u64(b) & ALL_ONES
    a1, b1 = a & np.uint64(0x1F), b & np.uint64(0x1F)
    total = a1 + b1
    mask0 = (ALL_ONES << a1) & ALL_ONES
    mask1 = (ALL_ONES << np.minimum(total, np.uint64(63))) & ALL_ONES
    overflow = total >= 32
    if mode == ".clamp":
        mask0 = np.where(a >= 32, np.uint64(0), mask0)
        overflow = overflow | (a >= 32) | (b >= 32)
    mask1 = np.where(overflow, np.uint64(0), np.where(b1 == 0, ALL_ONES, mask1))
    return to_bits(mask0 & ~mask1 & ALL_ONES, 32)


@handles("fns", "int")
def fns(mods, types, mask_bits, base, offset):
    """Position of the offset-th set bit counted from base (upwards for offset > 0, downwards for
    offset < 0; offset 0 tests base itself); 0xffffffff when there is none."""
    accept("fns", mods, types, set())
    m = _u64(mask_bits) & ALL_ONES
    base = np.asarray(base).astype(np.uint32).astype(np.int64)
    off = signed_view(np.asarray(offset).astype(np.uint32), 32)
    if np.any(base > 31):
        refuse("fns", mods, types, "base above 31 (the ISA leaves the result undefined)")
    pos = np.arange(32, dtype=np.int64)
    bits = ((m[:, None] >> pos.astype(np.uint64)[None, :]) & np.uint64(1)).astype(bool)
    up = bits & (pos[None, :] >= base[:, None])
    down = bits & (pos[None, :] <= base[:, None])
    rank_up = np.cumsum(up, axis=1)
    rank_down = np.cumsum(down[:, ::-1], axis=1)[:, ::-1]
    want = np.abs(off)[:, None]
    hit = np.where((off > 0)[:, None], up & (rank_up == want), down & (rank_down == want))
    found = hit.any(axis=1)
    lowest, highest = np.argmax(hit, axis=1), 31 - np.argmax(hit[:, ::-1], axis=1)
    first = np.where(off > 0, lowest, highest)       # the search runs up or down from base
    result = np.where(found, first, -1)
    at_base = bits[np.arange(len(base)), base]
    result = np.where(off == 0, np.where(at_base, base, -1), result)
    return to_bits(result, 32)
