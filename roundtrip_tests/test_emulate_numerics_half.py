"""f16/bf16 scalar and packed arithmetic against exact rationals rounded to the 16-bit grid."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numerics_ref import round_fraction

from ptx2py.emulate.numerics import ALU
from ptx2py.emulate.numerics.formats import decode, encode

OPS = {"add": (2, lambda a, b: a + b), "sub": (2, lambda a, b: a - b), "mul": (2, lambda a, b: a * b),
       "fma": (3, lambda a, b, c: a * b + c)}
half_bits = st.integers(0, 0xFFFF)


def finite(fmt):
    return half_bits.filter(lambda b: math.isfinite(float(decode(np.array([b]), fmt)[0])))


def call(opcode, mods, t, *srcs):
    return ALU[opcode](frozenset(mods) | {t}, (t,), *srcs)


def check_lane(got_bits, fmt, exact):
    got = float(decode(np.array([got_bits]), fmt)[0])
    want = round_fraction(exact, fmt, "rn") if exact != 0 else None
    if want is None:
        assert got == 0
    elif math.isinf(want):
        assert got == want
    else:
        assert got == want, (got, want, exact)


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@pytest.mark.parametrize("opcode", sorted(OPS))
def test_scalar_ops_round_once(opcode, fmt):
    n, fn = OPS[opcode]

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(*[finite(fmt)] * n), min_size=1, max_size=16))
    def check(rows):
        srcs = [np.array(col, np.uint16) for col in zip(*rows)]
        got = call(opcode, {".rn"}, f".{fmt}", *srcs).tolist()
        for r, g in zip(rows, got):
            vals = [Fraction(float(decode(np.array([b]), fmt)[0])) for b in r]
            check_lane(g, fmt, fn(*vals))
    check()


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_packed_lanes_are_independent(fmt):
    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.tuples(finite(fmt), finite(fmt), finite(fmt), finite(fmt)), min_size=1, max_size=16))
    def check(rows):
        a = np.array([lo | (hi << 16) for lo, hi, _, _ in rows], np.uint32)
        b = np.array([lo | (hi << 16) for _, _, lo, hi in rows], np.uint32)
        packed = call("mul", {".rn"}, f".{fmt}x2", a, b).tolist()
        lo = call("mul", {".rn"}, f".{fmt}", np.array([r[0] for r in rows], np.uint16),
                  np.array([r[2] for r in rows], np.uint16)).tolist()
        hi = call("mul", {".rn"}, f".{fmt}", np.array([r[1] for r in rows], np.uint16),
                  np.array([r[3] for r in rows], np.uint16)).tolist()
        assert packed == [x | (y << 16) for x, y in zip(lo, hi)]
    check()


def h(*vals):
    return encode(np.array(vals, np.float64), "f16")


@pytest.mark.parametrize("opcode,mods,srcs,want", [
    ("add", {".rn"}, (h(65504.0), h(65504.0)), 0x7C00),
    ("add", {".rn", ".sat"}, (h(0.75), h(0.5)), 0x3C00),
    ("add", {".rn"}, (h(math.inf), h(-math.inf)), 0x7FFF),
    ("mul", {".rn", ".ftz"}, (h(2.0 ** -14), h(0.5)), 0x0000),          # subnormal result flushed
    ("mul", {".rn"}, (h(2.0 ** -14), h(0.5)), 0x0200),
    ("fma", {".rn", ".relu"}, (h(2.0), h(-3.0), h(1.0)), 0x0000),
    ("max", set(), (h(math.nan), h(-1.0)), 0xBC00),
    ("max", {".NaN"}, (h(math.nan), h(-1.0)), 0x7FFF),
    ("min", {".relu"}, (h(-2.0), h(3.0)), 0x0000),
    ("neg", set(), (h(1.0),), 0xBC00),
    ("abs", set(), (h(-2.0),), 0x4000),
])
def test_f16_special_cases(opcode, mods, srcs, want):
    assert int(call(opcode, mods, ".f16", *srcs)[0]) == want


def test_setp_f16x2_writes_one_predicate_per_lane():
    a = np.array([0x3C00 | (0x4400 << 16)], np.uint32)      # lo 1.0, hi 4.0
    b = np.array([0x4000 | (0x4000 << 16)], np.uint32)      # 2.0, 2.0
    p, q = ALU["setp"](frozenset({".lt", ".f16x2"}), (".f16x2",), a, b)
    assert p.tolist() == [True] and q.tolist() == [False]


def test_f32x2_lanes_in_a_64_bit_register():
    a = np.array([1.5, 2.0], np.float32).view(np.uint64)
    b = np.array([0.25, -8.0], np.float32).view(np.uint64)
    got = ALU["add"](frozenset({".rn", ".f32x2"}), (".f32x2",), a, b)
    assert got.view(np.float32).tolist() == [1.75, -6.0]


def test_mixed_precision_add():
    got = ALU["add"](frozenset({".rn", ".f32", ".f16"}), (".f32", ".f16"), h(1.5),
                     np.array([2.25], np.float32).view(np.uint32))
    assert got.view(np.float32).tolist() == [3.75]
