"""Integer arithmetic: add/sub (.sat, carries), mul/mad (.lo/.hi/.wide), mul24/mad24, div/rem,
abs/neg/min/max (.relu), sad — PTX ISA 9.7.1.

Everything computes on int64/uint64 numpy arrays and wraps to the destination width; the 64-bit
high halves use 32-bit limbs so that no value ever leaves 64 bits.
"""

from __future__ import annotations

import numpy as np

from .dtypes import int_range, int_value, ptx_type, to_bits
from .errors import accept, refuse
from .registry import handles


def _arr(x, t):
    return np.asarray(x).astype(t.container, copy=False)


def _sat(values, t):
    lo, hi = int_range(t)
    return np.clip(values, lo, hi)


# -- 64x64 -> 128 products -------------------------------------------------------------------

def _umul_hi64(a, b):
    """High 64 bits of the unsigned 128-bit product of two uint64 arrays."""
    m32 = np.uint64(0xFFFFFFFF)
    a_lo, a_hi = a & m32, a >> np.uint64(32)
    b_lo, b_hi = b & m32, b >> np.uint64(32)
    ll, lh, hl, hh = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (ll >> np.uint64(32)) + (lh & m32) + (hl & m32)
    return hh + (lh >> np.uint64(32)) + (hl >> np.uint64(32)) + (mid >> np.uint64(32))


def _smul_hi64(a, b):
    """High 64 bits of the signed 128-bit product (a, b: raw uint64 bits)."""
    hi = _umul_hi64(a, b)
    neg_a = (a >> np.uint64(63)).astype(bool)
    neg_b = (b >> np.uint64(63)).astype(bool)
    return hi - np.where(neg_a, b, np.uint64(0)) - np.where(neg_b, a, np.uint64(0))


def product_parts(a, b, t):
    """(lo, hi) halves of the full 2w-bit product of a and b, each as w-bit raw bits."""
    a, b = _arr(a, t), _arr(b, t)
    w = t.width
    if w == 64:
        ua, ub = a.astype(np.uint64), b.astype(np.uint64)
        hi = _smul_hi64(ua, ub) if t.signed else _umul_hi64(ua, ub)
        return ua * ub, hi
    full = int_value(a, t) * int_value(b, t)       # exact: |full| < 2^64 for w <= 32
    full = to_bits(full, 64).astype(np.uint64)
    return to_bits(full, w), to_bits(full >> np.uint64(w), w)


def _wide(lo, hi, w):
    return to_bits(lo, 2 * w).astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(w))


def multiply(mods, t, a, b):
    """mul's three shapes: .lo (or none, for 64-bit), .hi, .wide (2w-bit destination)."""
    if ".hi" not in mods and ".wide" not in mods:   # low half: the container's wrapping product
        return _arr(a, t) * _arr(b, t)
    if ".wide" in mods and t.width <= 32:           # exact in 64 bits
        wide = int_value(_arr(a, t), t) * int_value(_arr(b, t), t)
        return to_bits(wide, 2 * t.width)
    lo, hi = product_parts(a, b, t)
    if ".hi" in mods:
        return hi
    if ".wide" in mods:
        if t.width == 64:
            raise ValueError("mul.wide has no 64-bit form")
        return to_bits(_wide(lo, hi, t.width), 2 * t.width)
    return lo


# -- add / sub and their carries -----------------------------------------------------------

def _carry_add(a, b, cin, w):
    """(sum bits, carry out) of a + b + cin, unsigned, width w."""
    ua, ub = a.astype(np.uint64), b.astype(np.uint64)
    c = cin.astype(np.uint64)
    if w < 64:
        total = ua + ub + c
        return to_bits(total, w), (total >> np.uint64(w)).astype(bool)
    s1 = ua + ub
    s2 = s1 + c
    return s2, (s1 < ua) | (s2 < s1)


def _borrow_sub(a, b, bin_, w):
    ua, ub = a.astype(np.uint64), b.astype(np.uint64)
    borrow = (ua < ub) | ((ua == ub) & bin_)
    return to_bits(ua - ub - bin_.astype(np.uint64), w), borrow


def _zeros(a):
    return np.zeros(np.shape(a), dtype=bool)


# opcode -> (exact value on the integers, wrapped result with carry/borrow out, takes a carry in)
_ADD_SUB = {
    "add": (np.add, _carry_add, False), "addc": (np.add, _carry_add, True),
    "sub": (np.subtract, _borrow_sub, False), "subc": (np.subtract, _borrow_sub, True),
}


def _add_sub(opcode):
    exact, with_carry, carry_in = _ADD_SUB[opcode]

    def handler(mods, types, a, b, cc=None):
        accept(opcode, mods, types, {".cc"} | (set() if carry_in else {".sat"}))
        t = ptx_type(types[0])
        a, b = _arr(a, t), _arr(b, t)
        if ".sat" in mods:
            if t.name != ".s32":
                refuse(opcode, mods, types, ".sat is defined for .s32 only")
            return to_bits(_sat(exact(int_value(a, t), int_value(b, t)), t), 32)
        if not carry_in and ".cc" not in mods:       # the common case: wrap in the container
            return exact(a, b)
        if carry_in and cc is None:
            refuse(opcode, mods, types, "needs the carry flag (cc=)")
        cin = np.asarray(cc, bool) if carry_in else _zeros(a)
        result, carry = with_carry(a, b, cin, t.width)
        return (result, carry) if ".cc" in mods else result
    return handles(opcode, "int")(handler)


for _opcode in _ADD_SUB:
    _add_sub(_opcode)


# -- mul / mad -------------------------------------------------------------------------------

@handles("mul", "int")
def mul(mods, types, a, b):
    accept("mul", mods, types, {".lo", ".hi", ".wide"})
    t = ptx_type(types[0])
    if ".wide" in mods and t.width == 64:
        refuse("mul", mods, types, "mul.wide has no 64-bit form")
    return multiply(mods, t, a, b)


def _mad(opcode, mods, types, a, b, c, cc):
    accept(opcode, mods, types, {".lo", ".hi", ".wide", ".sat", ".cc"})
    t = ptx_type(types[0])
    if ".wide" in mods:
        if t.width == 64 or ".cc" in mods or cc is not None:
            refuse(opcode, mods, types, "no such mad.wide form")
        wt = ptx_type(f".{'s' if t.signed else 'u'}{2 * t.width}")
        prod = multiply(mods, t, a, b)
        total, _ = _carry_add(prod, _arr(c, wt), _zeros(prod), wt.width)
        return total
    if ".sat" in mods:
        if t.name != ".s32" or ".hi" not in mods:
            refuse(opcode, mods, types, ".sat is defined for mad.hi.s32 only")
        _, hi = product_parts(a, b, t)
        return to_bits(_sat(int_value(hi, t) + int_value(_arr(c, t), t), t), 32)
    part = multiply(mods, t, a, b)
    cin = _zeros(part) if cc is None else np.asarray(cc, bool)
    total, carry = _carry_add(part, _arr(c, t), cin, t.width)
    return (total, carry) if ".cc" in mods else total


@handles("mad", "int")
def mad(mods, types, a, b, c, cc=None):
    return _mad("mad", mods, types, a, b, c, None)


@handles("madc", "int")
def madc(mods, types, a, b, c, cc):
    return _mad("madc", mods, types, a, b, c, cc)


def _low24(x, t):
    v = int_value(_arr(x, t), t).astype(np.int64) & 0xFFFFFF
    return np.where(v >= 0x800000, v - 0x1000000, v) if t.signed else v


def _mul24_full(a, b, t):
    return _low24(a, t).astype(np.int64) * _low24(b, t).astype(np.int64)     # 48 bits, exact


@handles("mul24", "int")
def mul24(mods, types, a, b):
    accept("mul24", mods, types, {".lo", ".hi"})
    t = ptx_type(types[0])
    full = _mul24_full(a, b, t)
    return to_bits(full >> 16 if ".hi" in mods else full, 32)


@handles("mad24", "int")
def mad24(mods, types, a, b, c):
    accept("mad24", mods, types, {".lo", ".hi", ".sat"})
    t = ptx_type(types[0])
    full = _mul24_full(a, b, t)
    part = int_value(to_bits(full >> 16 if ".hi" in mods else full, 32), t)
    total = part + int_value(_arr(c, t), t)
    if ".sat" in mods:
        if t.name != ".s32" or ".hi" not in mods:
            refuse("mad24", mods, types, ".sat is defined for mad24.hi.s32 only")
        total = _sat(total, t)
    return to_bits(total, 32)


# -- div / rem -------------------------------------------------------------------------------

def _quot_rem(opcode, mods, types, a, b):
    t = ptx_type(types[0])
    a, b = _arr(a, t), _arr(b, t)
    if np.any(b == 0):
        refuse(opcode, mods, types, "division by zero (PTX leaves the result unspecified)")
    if not t.signed:
        ua, ub = a.astype(np.uint64), b.astype(np.uint64)
        return t, ua // ub, ua % ub
    sa, sb = int_value(a, t), int_value(b, t)
    minus_one = sb == -1
    sb_safe = np.where(minus_one, 1, sb)
    q = (_uabs64(sa) // _uabs64(sb_safe)).view(np.int64)   # |INT64_MIN| only fits unsigned
    q = np.where((sa < 0) != (sb_safe < 0), -q, q)
    q = np.where(minus_one, -sa, q)       # INT_MIN / -1 wraps to INT_MIN (two's complement)
    r = np.where(minus_one, 0, sa - q * sb_safe)
    return t, q, r


def _uabs64(s):
    u = s.view(np.uint64)
    return np.where(s < 0, (~u) + np.uint64(1), u)


@handles("div", "int")
def div(mods, types, a, b):
    accept("div", mods, types, set())
    t, q, _ = _quot_rem("div", mods, types, a, b)
    return to_bits(q, t.width)


@handles("rem", "int")
def rem(mods, types, a, b):
    accept("rem", mods, types, set())
    t, _, r = _quot_rem("rem", mods, types, a, b)
    return to_bits(r, t.width)


# -- abs / neg / min / max / sad ---------------------------------------------------------------

@handles("abs", "int")
def abs_(mods, types, a):
    accept("abs", mods, types, set())
    t = ptx_type(types[0])
    v = int_value(_arr(a, t), t)
    return to_bits(np.where(v < 0, -v, v), t.width)   # abs(INT_MIN) wraps to INT_MIN


@handles("neg", "int")
def neg(mods, types, a):
    accept("neg", mods, types, set())
    t = ptx_type(types[0])
    return to_bits(np.uint64(0) - _arr(a, t).astype(np.uint64), t.width)


def _min_max(opcode, pick, mods, types, a, b):
    accept(opcode, mods, types, {".relu"})
    t = ptx_type(types[0])
    va, vb = int_value(_arr(a, t), t), int_value(_arr(b, t), t)
    out = pick(va, vb)
    if ".relu" in mods:
        if not t.signed:
            refuse(opcode, mods, types, ".relu is defined for signed types only")
        out = np.maximum(out, 0)
    return to_bits(out, t.width)


@handles("min", "int")
def min_(mods, types, a, b):
    return _min_max("min", np.minimum, mods, types, a, b)


@handles("max", "int")
def max_(mods, types, a, b):
    return _min_max("max", np.maximum, mods, types, a, b)


@handles("sad", "int")
def sad(mods, types, a, b, c):
    accept("sad", mods, types, set())
    t = ptx_type(types[0])
    va, vb = int_value(_arr(a, t), t), int_value(_arr(b, t), t)
    ua, ub = va.astype(np.uint64), vb.astype(np.uint64)     # wrapping differences, as PTX's
    diff = np.where(va < vb, ub - ua, ua - ub)
    return to_bits(_arr(c, t).astype(np.uint64) + diff.astype(np.uint64), t.width)


# -- packed 16-bit integers (min/max .s16x2/.u16x2, lane 0 in the low half) ---------------------

def _packed16(opcode, scalar):
    def handler(mods, types, a, b):
        lane = types[0][:-2]                   # ".s16x2" -> ".s16"
        lane_mods = (mods - {types[0]}) | {lane}
        ua, ub = (np.asarray(x).astype(np.uint32) for x in (a, b))
        parts = [scalar(lane_mods, (lane,), ((ua >> s) & 0xFFFF).astype(np.uint16),
                        ((ub >> s) & 0xFFFF).astype(np.uint16)).astype(np.uint32)
                 for s in (np.uint32(0), np.uint32(16))]
        return parts[0] | (parts[1] << np.uint32(16))
    return handles(opcode, "int16x2")(handler)


_packed16("min", min_)
_packed16("max", max_)
