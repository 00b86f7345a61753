"""Integer and bit instructions against Python-integer references (PTX ISA definitions)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numerics_ref import arr, signed, wrap

from ptx2py.emulate.numerics import ALU, NotEmulated


def call(opcode, mods, types, *srcs, **kw):
    return ALU[opcode](frozenset(mods) | set(types), tuple(types), *srcs, **kw)


def ints(width):
    return st.integers(0, (1 << width) - 1)


def value(v, t):
    w = int(t[2:])
    return signed(v, w) if t[1] == "s" else wrap(v, w)


def clamp(v, w):
    return max(-(1 << (w - 1)), min((1 << (w - 1)) - 1, v))


BINARY = {
    # opcode, mods: reference on the integer values of the operands -> result (wrapped after)
    ("add", ()): lambda a, b, w: a + b,
    ("sub", ()): lambda a, b, w: a - b,
    ("mul", (".lo",)): lambda a, b, w: a * b,
    ("mul", (".hi",)): lambda a, b, w: (a * b) >> w,
    ("min", ()): lambda a, b, w: min(a, b),
    ("max", ()): lambda a, b, w: max(a, b),
    ("and", ()): lambda a, b, w: a & b,
    ("or", ()): lambda a, b, w: a | b,
    ("xor", ()): lambda a, b, w: a ^ b,
}
TYPES = [".u16", ".s16", ".u32", ".s32", ".u64", ".s64"]


@pytest.mark.parametrize("t", TYPES)
@pytest.mark.parametrize("key", sorted(BINARY), ids=lambda k: k[0] + "".join(k[1]))
def test_binary_integer_ops(key, t):
    opcode, mods = key
    w = int(t[2:])
    if opcode in ("and", "or", "xor"):
        t = f".b{w}"

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.tuples(ints(w), ints(w)), min_size=1, max_size=16))
    def check(pairs):
        a, b = zip(*pairs)
        got = call(opcode, mods, (t,), arr(a, w), arr(b, w))
        want = [wrap(BINARY[key](value(x, t), value(y, t), w), w) for x, y in pairs]
        assert got.tolist() == want
    check()


@pytest.mark.parametrize("t", [".u16", ".s16", ".u32", ".s32"])
def test_mul_and_mad_wide(t):
    w = int(t[2:])

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.tuples(ints(w), ints(w), ints(2 * w)), min_size=1, max_size=16))
    def check(rows):
        a, b, c = zip(*rows)
        got = call("mul", {".wide"}, (t,), arr(a, w), arr(b, w))
        assert got.dtype.itemsize * 8 == 2 * w
        assert got.tolist() == [wrap(value(x, t) * value(y, t), 2 * w) for x, y, _ in rows]
        got = call("mad", {".wide"}, (t,), arr(a, w), arr(b, w), arr(c, 2 * w))
        assert got.tolist() == [wrap(value(x, t) * value(y, t) + z, 2 * w) for x, y, z in rows]
    check()


@pytest.mark.parametrize("t", [".u32", ".s32", ".u64", ".s64"])
def test_div_rem_truncate_toward_zero(t):
    w = int(t[2:])

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(ints(w), ints(w).filter(lambda v: v != 0)), min_size=1, max_size=16))
    def check(pairs):
        a, b = zip(*pairs)
        q = call("div", (), (t,), arr(a, w), arr(b, w)).tolist()
        r = call("rem", (), (t,), arr(a, w), arr(b, w)).tolist()
        for (x, y), gq, gr in zip(pairs, q, r):
            vx, vy = value(x, t), value(y, t)
            wq = abs(vx) // abs(vy) * (1 if (vx < 0) == (vy < 0) else -1)
            assert gq == wrap(wq, w) and gr == wrap(vx - wq * vy, w)
    check()


def test_div_by_zero_is_refused():
    with pytest.raises(NotEmulated, match="div.u32: division by zero"):
        call("div", (), (".u32",), arr([1], 32), arr([0], 32))


def test_int_min_over_minus_one_wraps():
    assert call("div", (), (".s32",), arr([-(1 << 31)], 32), arr([-1], 32)).tolist() == [1 << 31]
    assert call("rem", (), (".s32",), arr([-(1 << 31)], 32), arr([-1], 32)).tolist() == [0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ints(32), ints(32)), min_size=1, max_size=16))
def test_saturating_add_sub(pairs):
    a, b = zip(*pairs)
    t = (".s32",)
    add = call("add", {".sat"}, t, arr(a, 32), arr(b, 32)).tolist()
    sub = call("sub", {".sat"}, t, arr(a, 32), arr(b, 32)).tolist()
    for (x, y), ga, gs in zip(pairs, add, sub):
        assert ga == wrap(clamp(signed(x, 32) + signed(y, 32), 32), 32)
        assert gs == wrap(clamp(signed(x, 32) - signed(y, 32), 32), 32)


@pytest.mark.parametrize("w", [32, 64])
def test_multiword_add_and_sub_with_carries(w):
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(ints(2 * w), ints(2 * w)), min_size=1, max_size=16))
    def check(pairs):
        t = (f".u{w}",)

        def lo(v):
            return wrap(v, w)

        def hi(v):
            return v >> w

        a, b = zip(*pairs)
        s_lo, carry = call("add", {".cc"}, t, arr(map(lo, a), w), arr(map(lo, b), w))
        s_hi = call("addc", set(), t, arr(map(hi, a), w), arr(map(hi, b), w), cc=carry)
        d_lo, borrow = call("sub", {".cc"}, t, arr(map(lo, a), w), arr(map(lo, b), w))
        d_hi = call("subc", set(), t, arr(map(hi, a), w), arr(map(hi, b), w), cc=borrow)
        for i, (x, y) in enumerate(pairs):
            assert int(s_lo[i]) | (int(s_hi[i]) << w) == wrap(x + y, 2 * w)
            assert int(d_lo[i]) | (int(d_hi[i]) << w) == wrap(x - y, 2 * w)
    check()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ints(32), ints(32), ints(32)), min_size=1, max_size=16))
def test_mul24_mad24(rows):
    a, b, c = zip(*rows)
    for t in (".u32", ".s32"):
        hi = call("mul24", {".hi"}, (t,), arr(a, 32), arr(b, 32)).tolist()
        lo = call("mad24", {".lo"}, (t,), arr(a, 32), arr(b, 32), arr(c, 32)).tolist()
        for (x, y, z), gh, gl in zip(rows, hi, lo):
            x24 = signed(x, 24) if t == ".s32" else wrap(x, 24)
            y24 = signed(y, 24) if t == ".s32" else wrap(y, 24)
            assert gh == wrap((x24 * y24) >> 16, 32)
            assert gl == wrap(x24 * y24 + z, 32)


@pytest.mark.parametrize("t,a,n,want", [
    (".b32", 1, 31, 1 << 31), (".b32", 1, 32, 0), (".b32", 1, 0xFFFFFFFF, 0),
    (".u32", 0x80000000, 33, 0), (".s32", 0x80000000, 33, 0xFFFFFFFF), (".s32", 0x80000000, 4, 0xF8000000),
    (".b64", 1, 64, 0), (".s64", 1 << 63, 100, (1 << 64) - 1),
])
def test_shifts_clamp(t, a, n, want):
    w = int(t[2:])
    opcode = "shl" if t.startswith(".b") else "shr"
    assert call(opcode, (), (t,), arr([a], w), arr([n], 32)).tolist() == [want]


@pytest.mark.parametrize("t", [".u32", ".s32", ".u16", ".s64", ".b32"])
@pytest.mark.parametrize("op", [".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs"])
def test_setp_integer(op, t):
    w = int(t[2:])
    if t.startswith(".b") and op not in (".eq", ".ne", ".lo", ".ls", ".hi", ".hs"):
        with pytest.raises(NotEmulated):
            call("setp", {op}, (t,), arr([1], w), arr([2], w))
        return
    ref = {".eq": int.__eq__, ".ne": int.__ne__, ".lt": int.__lt__, ".le": int.__le__,
           ".gt": int.__gt__, ".ge": int.__ge__}
    uns = {".lo": int.__lt__, ".ls": int.__le__, ".hi": int.__gt__, ".hs": int.__ge__}
    vals = [0, 1, (1 << w) - 1, 1 << (w - 1), 5]
    pairs = [(x, y) for x in vals for y in vals]
    a, b = zip(*pairs)
    got = call("setp", {op}, (t,), arr(a, w), arr(b, w)).tolist()
    for (x, y), g in zip(pairs, got):
        if op in uns:
            assert g == uns[op](x, y)
        else:
            vx, vy = (value(x, t), value(y, t)) if t[1] == "s" else (x, y)
            assert g == ref[op](vx, vy)


def test_setp_combines_and_writes_q():
    p, q = call("setp", {".lt", ".and"}, (".s32",), arr([1, 3], 32), arr([2, 2], 32),
                np.array([True, True]), pair=True)
    assert p.tolist() == [True, False] and q.tolist() == [False, True]


def test_predicate_logic():
    a, b = np.array([True, False, True]), np.array([True, True, False])
    assert call("and", (), (".pred",), a, b).tolist() == [True, False, False]
    assert call("not", (), (".pred",), a).tolist() == [False, True, False]


@pytest.mark.parametrize("form,a,b,want", [
    ("max.s16x2", 0xFFFE0005, 0x80000003, 0xFFFE0005),
    ("max.relu.s16x2", 0xFFFE0005, 0x80000003, 0x00000005),
    ("min.u16x2", 0xFFFE0005, 0x80000003, 0x80000003),
    ("min.s16x2", 0xFFFE0005, 0x80000003, 0x80000003),
])
def test_packed_16_bit_integer_min_max(form, a, b, want):
    opcode, *rest = form.split(".")
    mods = {"." + m for m in rest}
    assert call(opcode, mods, (f".{rest[-1]}",), arr([a], 32), arr([b], 32)).tolist() == [want]
