"""Bit instructions against Python transcriptions of the PTX ISA's pseudo-code."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numerics_ref import arr, signed, wrap

from ptx2py.emulate.numerics import ALU, NotEmulated

u32 = st.integers(0, 2 ** 32 - 1)
u64 = st.integers(0, 2 ** 64 - 1)
def rows(*cols):
    return st.lists(st.tuples(*cols), min_size=1, max_size=16)


def call(opcode, mods, types, *srcs, **kw):
    return ALU[opcode](frozenset(mods) | set(types), tuple(types), *srcs, **kw)


def bit(x, i):
    return (x >> i) & 1


def ref_bfe(a, pos, length, width, is_signed):
    pos, length = pos & 0xFF, length & 0xFF
    msb = width - 1
    sbit = bit(a, min(pos + length - 1, msb)) if is_signed and length != 0 else 0
    d = 0
    for i in range(width):
        d |= (bit(a, pos + i) if i < length and pos + i <= msb else sbit) << i
    return d


def ref_bfi(a, b, pos, length, width):
    pos, length = pos & 0xFF, length & 0xFF
    f = b
    for i in range(length):
        if pos + i <= width - 1:
            f = (f & ~(1 << (pos + i))) | (bit(a, i) << (pos + i))
    return f


small = st.integers(0, 80) | st.integers(0, 2 ** 32 - 1)


@pytest.mark.parametrize("t", [".u32", ".s32", ".u64", ".s64"])
def test_bfe(t):
    w = int(t[2:])

    @settings(max_examples=60, deadline=None)
    @given(rows(st.integers(0, 2 ** w - 1), small, small))
    def check(rs):
        a, p, n = zip(*rs)
        got = call("bfe", (), (t,), arr(a, w), arr(p, 32), arr(n, 32)).tolist()
        assert got == [ref_bfe(x, y, z, w, t[1] == "s") for x, y, z in rs]
    check()


@pytest.mark.parametrize("t", [".b32", ".b64"])
def test_bfi(t):
    w = int(t[2:])

    @settings(max_examples=60, deadline=None)
    @given(rows(st.integers(0, 2 ** w - 1), st.integers(0, 2 ** w - 1), small, small))
    def check(rs):
        a, b, p, n = zip(*rs)
        got = call("bfi", (), (t,), arr(a, w), arr(b, w), arr(p, 32), arr(n, 32)).tolist()
        assert got == [ref_bfi(*r, w) for r in rs]
    check()


def ref_prmt(a, b, c, mode):
    tmp = a | (b << 32)

    def byte(k):
        return (tmp >> (8 * k)) & 0xFF

    s = c & 3
    picks = {
        ".f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
        ".b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
        ".rc8": [[0] * 4, [1] * 4, [2] * 4, [3] * 4],
        ".ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
        ".ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
        ".rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
    }
    if mode is None:
        d = 0
        for i in range(4):
            nib = (c >> (4 * i)) & 0xF
            v = byte(nib & 7)
            if nib & 8:
                v = 0xFF if v & 0x80 else 0
            d |= v << (8 * i)
        return d
    return sum(byte(k) << (8 * i) for i, k in enumerate(picks[mode][s]))


@pytest.mark.parametrize("mode", [None, ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"])
def test_prmt(mode):
    @settings(max_examples=60, deadline=None)
    @given(rows(u32, u32, u32))
    def check(rs):
        a, b, c = zip(*rs)
        got = call("prmt", {mode} if mode else set(), (".b32",), arr(a, 32), arr(b, 32), arr(c, 32)).tolist()
        assert got == [ref_prmt(*r, mode) for r in rs]
    check()


@settings(max_examples=60, deadline=None)
@given(rows(u32, u32, u32), st.integers(0, 255))
def test_lop3_any_lut(rs, lut):
    a, b, c = zip(*rs)
    got = call("lop3", (), (".b32",), arr(a, 32), arr(b, 32), arr(c, 32), arr([lut], 32)).tolist()
    for (x, y, z), g in zip(rs, got):
        want = 0
        for i in range(32):
            want |= bit(lut, (bit(x, i) << 2) | (bit(y, i) << 1) | bit(z, i)) << i
        assert g == want


def test_lop3_named_luts():
    a, b, c = arr([0xF0F0F0F0], 32), arr([0xCCCCCCCC], 32), arr([0xAAAAAAAA], 32)
    assert call("lop3", (), (".b32",), a, b, c, arr([0x96], 32)).tolist() == [0xF0F0F0F0 ^ 0xCCCCCCCC ^ 0xAAAAAAAA]
    assert call("lop3", (), (".b32",), a, b, c, arr([0x80], 32)).tolist() == [0xF0F0F0F0 & 0xCCCCCCCC & 0xAAAAAAAA]


@pytest.mark.parametrize("mode", [".wrap", ".clamp"])
@pytest.mark.parametrize("direction", [".l", ".r"])
def test_shf(direction, mode):
    @settings(max_examples=60, deadline=None)
    @given(rows(u32, u32, st.integers(0, 70) | u32))
    def check(rs):
        a, b, c = zip(*rs)
        got = call("shf", {direction, mode}, (".b32",), arr(a, 32), arr(b, 32), arr(c, 32)).tolist()
        for (x, y, n), g in zip(rs, got):
            n = n & 31 if mode == ".wrap" else min(n, 32)
            pair = x | (y << 32)
            want = ((pair << n) >> 32) if direction == ".l" else (pair >> n)
            assert g == wrap(want, 32)
    check()


@settings(max_examples=60, deadline=None)
@given(rows(u64))
def test_counts(rs):
    vals = [r[0] for r in rs]
    for w in (32, 64):
        xs = [wrap(v, w) for v in vals]
        a = arr(xs, w)
        assert call("popc", (), (f".b{w}",), a).tolist() == [bin(x).count("1") for x in xs]
        assert call("clz", (), (f".b{w}",), a).tolist() == [w - x.bit_length() for x in xs]
        assert call("brev", (), (f".b{w}",), a).tolist() == [int(format(x, f"0{w}b")[::-1], 2) for x in xs]
        assert call("bfind", (), (f".u{w}",), a).tolist() == [x.bit_length() - 1 if x else 0xFFFFFFFF for x in xs]
        assert call("bfind", {".shiftamt"}, (f".u{w}",), a).tolist() == [
            w - x.bit_length() if x else 0xFFFFFFFF for x in xs]
        sx = [signed(x, w) for x in xs]
        assert call("bfind", (), (f".s{w}",), a).tolist() == [
            (v if v >= 0 else ~v).bit_length() - 1 if v not in (0, -1) else 0xFFFFFFFF for v in sx]


@pytest.mark.parametrize("ta,tb", [(".u32", ".u32"), (".s32", ".s32"), (".u32", ".s32"), (".s32", ".u32")])
def test_dp4a_dp2a(ta, tb):
    def lanes(x, width, n, sgn):
        return [signed((x >> (width * i)) & ((1 << width) - 1),
                       width) if sgn else (x >> (width * i)) & ((1 << width) - 1)
                for i in range(n)]

    @settings(max_examples=40, deadline=None)
    @given(rows(u32, u32, u32))
    def check(rs):
        a, b, c = zip(*rs)
        d4 = call("dp4a", (), (ta, tb), arr(a, 32), arr(b, 32), arr(c, 32)).tolist()
        lo = call("dp2a", {".lo"}, (ta, tb), arr(a, 32), arr(b, 32), arr(c, 32)).tolist()
        hi = call("dp2a", {".hi"}, (ta, tb), arr(a, 32), arr(b, 32), arr(c, 32)).tolist()
        sa, sb = ta == ".s32", tb == ".s32"
        for (x, y, z), g4, gl, gh in zip(rs, d4, lo, hi):
            acc = signed(z, 32) if sa or sb else z
            xa, yb = lanes(x, 8, 4, sa), lanes(y, 8, 4, sb)
            assert g4 == wrap(sum(p * q for p, q in zip(xa, yb)) + acc, 32)
            xh = lanes(x, 16, 2, sa)
            assert gl == wrap(sum(p * q for p, q in zip(xh, yb[:2])) + acc, 32)
            assert gh == wrap(sum(p * q for p, q in zip(xh, yb[2:])) + acc, 32)
    check()


def test_sad_cnot_and_min_relu():
    assert call("sad", (), (".s32",), arr([-5], 32), arr([3], 32), arr([10], 32)).tolist() == [18]
    assert call("sad", (), (".u32",), arr([2], 32), arr([7], 32), arr([1], 32)).tolist() == [6]
    assert call("cnot", (), (".b32",), arr([0, 7], 32)).tolist() == [1, 0]
    assert call("max", {".relu"}, (".s32",), arr([-5], 32), arr([-3], 32)).tolist() == [0]
    with pytest.raises(NotEmulated):
        call("max", {".relu"}, (".u32",), arr([1], 32), arr([2], 32))


def ref_szext(a, b, mode, is_signed):
    b1 = b & 0x1F
    too_large = b >= 32 and mode == ".clamp"
    mask = 0 if too_large else (0xFFFFFFFF << b1) & 0xFFFFFFFF
    sign = False if (b1 == 0 or too_large or not is_signed) else bool((a >> ((b1 - 1) & 0x1F)) & 1)
    return (a & ~mask & 0xFFFFFFFF) | (mask if sign else 0)


def ref_bmsk(a, b, mode):
    a1, b1 = a & 0x1F, b & 0x1F
    mask0 = (0xFFFFFFFF << a1) & 0xFFFFFFFF
    mask1 = (0xFFFFFFFF << (a1 + b1)) & 0xFFFFFFFF
    overflow = a1 + b1 >= 32
    if mode == ".clamp":
        if a >= 32:
            mask0, overflow = 0, True
        overflow = overflow or b >= 32
    mask1 = 0 if overflow else (0xFFFFFFFF if b1 == 0 else mask1)
    return mask0 & ~mask1 & 0xFFFFFFFF


def ref_fns(mask, base, offset):
    if offset == 0:
        return base if (mask >> base) & 1 else 0xFFFFFFFF
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


@pytest.mark.parametrize("mode", [".clamp", ".wrap"])
def test_szext_bmsk(mode):
    @settings(max_examples=60, deadline=None)
    @given(rows(u32, st.integers(0, 70) | u32))
    def check(rs):
        a, b = zip(*rs)
        for t in (".u32", ".s32"):
            got = call("szext", {mode}, (t,), arr(a, 32), arr(b, 32)).tolist()
            assert got == [ref_szext(x, y, mode, t == ".s32") for x, y in rs]
        got = call("bmsk", {mode}, (".b32",), arr(a, 32), arr(b, 32)).tolist()
        assert got == [ref_bmsk(x, y, mode) for x, y in rs]
    check()


def test_isa_examples_of_szext_bmsk_fns():
    assert call("szext", {".wrap"}, (".u32",), arr([0xFFFFFFFF], 32), arr([0], 32)).tolist() == [0]
    assert call("bmsk", {".wrap"}, (".b32",), arr([1], 32), arr([2], 32)).tolist() == [6]
    m = arr([0xAAAAAAAA] * 4, 32)
    got = call("fns", (), (".b32",), m, arr([3, 3, 2, 2], 32), arr([1, -1, 1, -1], 32)).tolist()
    assert got == [3, 3, 3, 1]


@settings(max_examples=60, deadline=None)
@given(rows(u32, st.integers(0, 31), st.integers(-40, 40)))
def test_fns(rs):
    m, base, off = zip(*rs)
    got = call("fns", (), (".b32",), arr(m, 32), arr(base, 32), arr(off, 32)).tolist()
    assert got == [ref_fns(*r) for r in rs]
