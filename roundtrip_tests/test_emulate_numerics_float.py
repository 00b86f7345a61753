"""f32/f64 arithmetic against exact rational references (every rounding mode), special values."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numerics_ref import f32, from_f32, from_f64, round_fraction

from ptx2py.emulate.numerics import ALU, NotEmulated

MODES = ("rn", "rz", "rm", "rp")

f32_values = st.floats(width=32, allow_nan=False, allow_infinity=False)
f64_values = st.floats(allow_nan=False, allow_infinity=False)


def run(opcode, mods, *vals, fmt="f32"):
    dt, ut = (np.float32, np.uint32) if fmt == "f32" else (np.float64, np.uint64)
    srcs = [np.array(v, dt).view(ut) for v in vals]
    return ALU[opcode](frozenset(mods) | {f".{fmt}"}, (f".{fmt}",), *srcs)


def as_float(bits, fmt):
    return [from_f32(int(b)) if fmt == "f32" else from_f64(int(b)) for b in bits]


EXACT = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


def same(got, want):
    return (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want))


@pytest.mark.parametrize("fmt,values", [("f32", f32_values), ("f64", f64_values)])
@pytest.mark.parametrize("opcode", sorted(EXACT))
@pytest.mark.parametrize("mode", MODES)
def test_binary_ops_round_exactly(opcode, mode, fmt, values):
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(values, values), min_size=1, max_size=8))
    def check(pairs):
        if opcode == "div":
            pairs = [(a, b) for a, b in pairs if b != 0]
            if not pairs:
                return
        a, b = zip(*pairs)
        got = as_float(run(opcode, {f".{mode}"}, a, b, fmt=fmt), fmt)
        for x, y, g in zip(a, b, got):
            exact = EXACT[opcode](Fraction(x), Fraction(y))
            want = round_fraction(exact, fmt, mode)
            if exact == 0:
                continue        # signed zeros are checked by their own table
            assert same(g, want), (opcode, mode, x, y, g, want)
    check()


@pytest.mark.parametrize("fmt,values", [("f32", f32_values), ("f64", f64_values)])
@pytest.mark.parametrize("mode", MODES)
def test_fma_rounds_once(mode, fmt, values):
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(values, values, values), min_size=1, max_size=6))
    def check(triples):
        a, b, c = zip(*triples)
        got = as_float(run("fma", {f".{mode}"}, a, b, c, fmt=fmt), fmt)
        for x, y, z, g in zip(a, b, c, got):
            exact = Fraction(x) * Fraction(y) + Fraction(z)
            if exact != 0:
                assert same(g, round_fraction(exact, fmt, mode)), (mode, x, y, z, g)
    check()


def test_fma_f32_differs_from_two_roundings():
    # 1 + 2^-24 * (1 + 2^-23): the product's low bits decide the tie that mul-then-add loses.
    a, b, c = 1.0 + 2.0 ** -23, 2.0 ** -24, 1.0
    assert as_float(run("fma", {".rn"}, [a], [b], [c]), "f32") == [1.0 + 2.0 ** -23]


@pytest.mark.parametrize("mods,a,b,want", [
    ({".rn"}, 0.0, -0.0, 0.0), ({".rm"}, 0.0, -0.0, -0.0), ({".rn"}, -0.0, -0.0, -0.0),
    ({".rm"}, 1.5, -1.5, -0.0), ({".rz"}, 1.5, -1.5, 0.0), ({".rp"}, 0.0, 0.0, 0.0),
])
def test_add_signed_zeros(mods, a, b, want):
    got = as_float(run("add", mods, [a], [b]), "f32")[0]
    assert same(got, want)


@pytest.mark.parametrize("opcode,mods,vals,want_bits", [
    ("add", {".rn"}, ([math.inf], [-math.inf]), 0x7FFFFFFF),           # invalid -> canonical NaN
    ("mul", {".rn"}, ([0.0], [math.inf]), 0x7FFFFFFF),
    ("add", {".rn"}, ([math.nan], [1.0]), 0x7FFFFFFF),
    ("add", {".rz"}, ([3.4e38], [3.4e38]), 0x7F7FFFFF),                # .rz overflow -> max finite
    ("add", {".rn"}, ([3.4e38], [3.4e38]), 0x7F800000),
    ("add", {".rm"}, ([3.4e38], [3.4e38]), 0x7F7FFFFF),
    ("add", {".rm"}, ([-3.4e38], [-3.4e38]), 0xFF800000),
    ("mul", {".rn", ".ftz"}, ([2.0 ** -70], [2.0 ** -70]), 0x00000000),  # subnormal result flushed
    ("mul", {".rn"}, ([2.0 ** -70], [2.0 ** -70]), 0x00000200),         # 2^-140 = 2^9 subnormal steps
    ("add", {".rn", ".ftz"}, ([1e-40], [0.0]), 0x00000000),             # subnormal input flushed
    ("add", {".rn", ".ftz"}, ([-1e-40], [0.0]), 0x00000000),            # -0 + +0 = +0
    ("mul", {".rn", ".ftz"}, ([-1e-40], [1.0]), 0x80000000),            # sign kept by the flush
    ("add", {".rn", ".sat"}, ([0.75], [0.5]), f32(1.0)),
    ("add", {".rn", ".sat"}, ([-0.75], [0.5]), 0x00000000),
    ("add", {".rn", ".sat"}, ([math.nan], [0.5]), 0x00000000),
    ("div", {".rn"}, ([1.0], [0.0]), 0x7F800000),
    ("div", {".rn"}, ([0.0], [0.0]), 0x7FFFFFFF),
    ("div", {".rz"}, ([1.0], [3.0]), 0x3EAAAAAA),
    ("div", {".rp"}, ([1.0], [3.0]), 0x3EAAAAAB),
    ("div", {".full"}, ([1.0], [3.0]), 0x3EAAAAAB),
    ("sqrt", {".rn"}, ([2.0],), 0x3FB504F3),
    ("sqrt", {".rp"}, ([2.0],), 0x3FB504F4),
    ("sqrt", {".rn"}, ([-0.0],), 0x80000000),
    ("sqrt", {".rn"}, ([-1.0],), 0x7FFFFFFF),
    ("rcp", {".rn"}, ([-0.0],), 0xFF800000),
    ("rcp", {".rz"}, ([3.0],), 0x3EAAAAAA),
    ("min", set(), ([math.nan], [2.0]), f32(2.0)),
    ("min", set(), ([-0.0], [0.0]), 0x80000000),
    ("max", set(), ([-0.0], [0.0]), 0x00000000),
    ("max", {".NaN"}, ([math.nan], [2.0]), 0x7FFFFFFF),
    ("min", {".xorsign.abs"}, ([-3.0], [2.0]), f32(-2.0)),
    ("abs", set(), ([-math.nan],), 0x7FFFFFFF),                        # ISA: unspecified NaN
    ("neg", set(), ([math.nan],), 0x7FFFFFFF),
    ("neg", set(), ([1.0],), f32(-1.0)),
])
def test_f32_special_values(opcode, mods, vals, want_bits):
    assert int(run(opcode, mods, *vals)[0]) == want_bits


@pytest.mark.parametrize("values", [[1.0, 1e-45, -2.0], [0.1, 3.0, 1e30]])
def test_sqrt_rounding_modes_f64(values):
    for mode in MODES:
        got = as_float(run("sqrt", {f".{mode}"}, values, fmt="f64"), "f64")
        for v, g in zip(values, got):
            if v < 0:
                assert math.isnan(g)
                continue
            r = Fraction(g)
            # the exact root lies on the mode's side of the result, within one ulp
            below, above = Fraction(np.nextafter(g, -np.inf)), Fraction(np.nextafter(g, np.inf))
            s = Fraction(v)
            if mode == "rz" or mode == "rm":
                assert r * r <= s < above * above
            elif mode == "rp":
                assert below * below < s <= r * r


@pytest.mark.parametrize("form", [({".rn", ".ftz"}, "f64"), ({".approx"}, "f64"), (set(), "f32")])
def test_refuses_what_it_cannot_do(form):
    mods, fmt = form
    with pytest.raises(NotEmulated, match="div"):
        run("div", mods, [1.0], [3.0], fmt=fmt)


@pytest.mark.parametrize("test,value,want", [
    (".finite", 1.0, True), (".finite", math.inf, False), (".infinite", -math.inf, True),
    (".number", math.nan, False), (".notanumber", math.nan, True), (".normal", 1e-40, False),
    (".subnormal", 1e-40, True), (".subnormal", 0.0, False), (".normal", 0.0, True),   # ISA: zeros are normal
    (".normal", -0.0, True), (".normal", math.inf, False), (".normal", math.nan, False),
])
def test_testp(test, value, want):
    assert bool(run("testp", {test}, [value])[0]) is want


moderate = st.floats(min_value=-1e30, max_value=1e30, allow_nan=False).filter(lambda v: v == 0 or abs(v) > 1e-30)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(moderate, moderate, st.floats(-1, 1), st.booleans()), min_size=1, max_size=16))
def test_fma_f64_nearest_with_cancellation(rows):
    # c cancels most of a*b (the case a separate multiply and add gets wrong)
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    c = [(-(x * y) + t * abs(x * y) * 2.0 ** -50) if near else t for x, y, t, near in rows]
    got = as_float(run("fma", {".rn"}, a, b, c, fmt="f64"), "f64")
    for x, y, z, g in zip(a, b, c, got):
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact != 0:
            assert same(g, round_fraction(exact, "f64", "rn")), (x, y, z, g)


def test_f64_abs_passes_nan_through_and_approx_seeds():
    nan = np.array([0xFFF8000000000123], np.uint64)
    assert ALU["abs"](frozenset({".f64"}), (".f64",), nan).tolist() == [0xFFF8000000000123]
    for opcode in ("rcp", "rsqrt"):
        got = ALU[opcode](frozenset({".approx", ".ftz", ".f64"}), (".f64",), nan)
        assert got.tolist() == [0x7FFFFFFF00000000]                    # the ISA's NaN
        vals = np.array([3.0, 1e-310, -0.0, np.inf])
        got = ALU[opcode](frozenset({".approx", ".ftz", ".f64"}), (".f64",), vals.view(np.uint64))
        assert all(int(b) & 0xFFFFFFFF == 0 for b in got.tolist())     # low word zero
        want = 1 / 3 if opcode == "rcp" else 1 / math.sqrt(3)
        assert abs(got.view(np.float64)[0] - want) <= want * 2.0 ** -20
        assert got.view(np.float64)[1:].tolist() == [math.inf, -math.inf, 0.0]


def unordered(f):
    return lambda a, b: math.isnan(a) or math.isnan(b) or f(a, b)


ORDERED = {".eq": float.__eq__, ".lt": float.__lt__, ".le": float.__le__, ".gt": float.__gt__,
           ".ge": float.__ge__, ".ne": lambda a, b: a != b and not (math.isnan(a) or math.isnan(b))}
CMP_REF = {
    **ORDERED,
    ".equ": unordered(float.__eq__), ".neu": unordered(float.__ne__), ".ltu": unordered(float.__lt__),
    ".leu": unordered(float.__le__), ".gtu": unordered(float.__gt__), ".geu": unordered(float.__ge__),
    ".num": lambda a, b: not (math.isnan(a) or math.isnan(b)),
    ".nan": lambda a, b: math.isnan(a) or math.isnan(b),
}


@pytest.mark.parametrize("fmt", ["f32", "f64", "f16"])
@pytest.mark.parametrize("op", sorted(CMP_REF))
def test_setp_float_every_comparison(op, fmt):
    special = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan, 1e-40 if fmt != "f16" else 1e-7]
    pairs = [(x, y) for x in special for y in special]
    a, b = zip(*pairs)
    if fmt == "f16":
        src = [np.array(v, np.float16).view(np.uint16) for v in (a, b)]
    else:
        dt, ut = (np.float32, np.uint32) if fmt == "f32" else (np.float64, np.uint64)
        src = [np.array(v, dt).view(ut) for v in (a, b)]
    got = ALU["setp"](frozenset({op, f".{fmt}"}), (f".{fmt}",), *src).tolist()
    for (x, y), g in zip(pairs, got):
        if fmt == "f16":
            x, y = float(np.float16(x)), float(np.float16(y))
        assert g == CMP_REF[op](x, y), (op, x, y)


def test_setp_ftz_compares_flushed_values():
    tiny = np.array([1e-40], np.float32).view(np.uint32)
    zero = np.array([0.0], np.float32).view(np.uint32)
    assert ALU["setp"](frozenset({".eq", ".ftz", ".f32"}), (".f32",), tiny, zero).tolist() == [True]
    assert ALU["setp"](frozenset({".eq", ".f32"}), (".f32",), tiny, zero).tolist() == [False]
