"""cvt and the narrow formats against independent references: numpy float16, exact rationals,
Python integers, and hand-checked encodings."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numerics_ref import arr, from_f32, round_fraction, signed, wrap

from ptx2py.emulate.numerics import ALU, NotEmulated
from ptx2py.emulate.numerics.formats import decode, encode

MODES = ("rn", "rz", "rm", "rp")
f32_values = st.floats(width=32, allow_nan=False)


def cvt(mods, dt, at, *srcs):
    return ALU["cvt"](frozenset(mods) | {dt, at}, (dt, at), *srcs)


def f32_bits(vals):
    return np.array(vals, np.float32).view(np.uint32)


def test_f16_decode_and_encode_every_pattern():
    bits = np.arange(1 << 16, dtype=np.uint16)
    ref = bits.view(np.float16).astype(np.float64)
    assert np.array_equal(decode(bits, "f16"), ref, equal_nan=True)
    finite = ~np.isnan(ref)
    assert np.array_equal(encode(ref[finite], "f16"), bits[finite])


@settings(max_examples=60, deadline=None)
@given(st.lists(f32_values, min_size=1, max_size=32))
def test_cvt_f16_f32_nearest_matches_numpy(vals):
    got = cvt({".rn"}, ".f16", ".f32", f32_bits(vals))
    with np.errstate(over="ignore"):          # numpy's own cast overflows to inf, as cvt does
        want = np.array(vals, np.float32).astype(np.float16).view(np.uint16)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@pytest.mark.parametrize("mode", MODES)
def test_cvt_f32_to_16_bit_all_modes(fmt, mode):
    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=16))
    def check(vals):
        got = decode(cvt({f".{mode}"}, f".{fmt}", ".f32", f32_bits(vals)), fmt)
        for v, g in zip(vals, got.tolist()):
            want = round_fraction(Fraction(v), fmt, mode) if v != 0 else v
            assert g == want and math.copysign(1, g) == math.copysign(1, want), (v, g, want)
    check()


@pytest.mark.parametrize("mode", MODES)
def test_cvt_f64_to_f32_all_modes(mode):
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=16))
    def check(vals):
        got = cvt({f".{mode}"}, ".f32", ".f64", np.array(vals).view(np.uint64)).tolist()
        for v, g in zip(vals, got):
            want = round_fraction(Fraction(v), "f32", mode) if v != 0 else v
            assert from_f32(g) == want, (v, from_f32(g), want)
    check()


@pytest.mark.parametrize("at", [".s32", ".u32", ".s64", ".u64"])
@pytest.mark.parametrize("dt", [".f32", ".f64", ".f16"])
@pytest.mark.parametrize("mode", MODES)
def test_cvt_int_to_float(at, dt, mode):
    w = int(at[2:])

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.integers(0, 2 ** w - 1), min_size=1, max_size=16))
    def check(vals):
        got = cvt({f".{mode}"}, dt, at, arr(vals, w))
        fmt = dt[1:]
        got = decode(got, fmt).tolist()
        for v, g in zip(vals, got):
            x = signed(v, w) if at[1] == "s" else v
            assert g == (round_fraction(Fraction(x), fmt, mode) if x else 0.0), (x, g)
    check()


ROUND_INT = {".rni": lambda v: round(v), ".rzi": math.trunc, ".rmi": math.floor, ".rpi": math.ceil}


@pytest.mark.parametrize("dt", [".s32", ".u32", ".s64", ".u64", ".s16", ".u8"])
@pytest.mark.parametrize("rnd", sorted(ROUND_INT))
def test_cvt_float_to_int_clamps(dt, rnd):
    w = int(dt[2:])
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dt[1] == "s" else (0, (1 << w) - 1)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.floats(allow_nan=True, width=32), min_size=1, max_size=16))
    def check(vals):
        got = cvt({rnd}, dt, ".f32", f32_bits(vals)).tolist()
        for v, g in zip(vals, got):
            nan_value = 1 << (w - 1) if w == 64 else 0          # ISA: NaN -> 0, or 1 << (w-1)
            want = nan_value if math.isnan(v) else (hi if v == math.inf else lo if v == -math.inf
                                           else max(lo, min(hi, ROUND_INT[rnd](Fraction(v)))))
            assert g == wrap(want, w), (v, g, want)
    check()


@pytest.mark.parametrize("dt,at,sat,val,want", [
    (".s64", ".s32", False, 0xFFFFFFFF, 2 ** 64 - 1), (".u64", ".u32", False, 0xFFFFFFFF, 0xFFFFFFFF),
    (".u32", ".u64", False, 2 ** 40 + 5, 5), (".s16", ".s8", False, 0x80, 0xFF80),
    (".u16", ".u8", False, 0x80, 0x80), (".u8", ".s32", True, 0xFFFFFFFF, 0),
    (".s8", ".s32", True, 300, 127), (".u32", ".s64", True, 2 ** 64 - 1, 0),
    (".s32", ".u64", True, 2 ** 63, 2 ** 31 - 1), (".u16", ".u32", True, 70000, 65535),
])
def test_cvt_int_to_int(dt, at, sat, val, want):
    aw = int(at[2:])
    assert cvt({".sat"} if sat else set(), dt, at, arr([val], aw)).tolist() == [want]


@pytest.mark.parametrize("mods,dt,at,src,want", [
    ({".rn"}, ".f16x2", ".f32", (1.0, 2.0), 0x3C004000),             # a goes to the upper half
    ({".rn"}, ".bf16x2", ".f32", (1.0, -2.0), 0x3F80C000),
    ({".rn", ".relu"}, ".f16x2", ".f32", (-1.0, 0.5), 0x00003800),
    ({".rn", ".satfinite"}, ".f16x2", ".f32", (1e6, -1e6), 0x7BFFFBFF),
    ({".rn"}, ".f16x2", ".f32", (1e6, math.nan), 0x7C007FFF),        # overflow -> inf, NaN canonical
    ({".rn", ".satfinite"}, ".e4m3x2", ".f32", (1000.0, -0.5), 0x7EB0),
    ({".rn", ".satfinite"}, ".e5m2x2", ".f32", (math.inf, 1.0), 0x7B3C),
    ({".rn", ".satfinite"}, ".e4m3x2", ".f32", (math.nan, 448.0), 0x7F7E),
    ({".rn", ".satfinite"}, ".e2m1x2", ".f32", (6.0, 0.5), 0x71),
])
def test_cvt_packed_destinations(mods, dt, at, src, want):
    got = cvt(mods, dt, at, *[f32_bits([v]) for v in src])
    assert int(got[0]) == want


@pytest.mark.parametrize("mods,dt,at,src,want", [
    ({".rn"}, ".f16x2", ".e4m3x2", 0x38C0, 0x3C00C000),
    ({".rn"}, ".f16x2", ".e5m2x2", 0x3C7C, 0x3C007C00),
])
def test_cvt_packed_sources(mods, dt, at, src, want):
    assert int(cvt(mods, dt, at, np.array([src], np.uint16))[0]) == want


@pytest.mark.parametrize("fmt,bits,value", [
    ("e4m3", 0x7E, 448.0), ("e4m3", 0x01, 2.0 ** -9), ("e4m3", 0x08, 2.0 ** -6), ("e4m3", 0x7F, math.nan),
    ("e4m3", 0xB8, -1.0), ("e5m2", 0x7B, 57344.0), ("e5m2", 0x7C, math.inf), ("e5m2", 0x01, 2.0 ** -16),
    ("e5m2", 0x7D, math.nan), ("e2m1", 0x7, 6.0), ("e2m1", 0x1, 0.5), ("e2m1", 0xF, -6.0),
    ("e2m3", 0x1F, 7.5), ("e2m3", 0x01, 0.125), ("e3m2", 0x1F, 28.0), ("e3m2", 0x01, 0.0625),
    ("ue8m0", 0x7F, 1.0), ("ue8m0", 0x00, 2.0 ** -127), ("ue8m0", 0xFE, 2.0 ** 127), ("ue8m0", 0xFF, math.nan),
    ("bf16", 0x3F80, 1.0), ("bf16", 0x0001, 2.0 ** -133), ("tf32", 0x3F802000, 1.0 + 2.0 ** -10),
])
def test_narrow_format_values(fmt, bits, value):
    got = float(decode(np.array([bits], np.uint32), fmt)[0])
    assert (math.isnan(got) and math.isnan(value)) or got == value


@pytest.mark.parametrize("fmt,width", [("e4m3", 8), ("e5m2", 8), ("e2m3", 6), ("e3m2", 6), ("e2m1", 4)])
def test_narrow_encode_is_nearest_on_the_grid(fmt, width):
    grid = decode(np.arange(1 << width, dtype=np.uint8), fmt)
    finite = np.unique(grid[np.isfinite(grid)])
    rng = np.random.default_rng(7)
    x = rng.uniform(finite.min() * 1.2, finite.max() * 1.2, 2000)
    got = decode(encode(x, fmt, "rn", satfinite=True), fmt)
    clipped = np.clip(x, finite.min(), finite.max())
    dist = np.abs(finite[None, :] - clipped[:, None])
    best = dist.min(axis=1)
    assert np.all(np.abs(got - clipped) == best)


def test_e5m2_every_mode_against_rationals():
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(300) * 2.0 ** rng.integers(-20, 17, 300)
    for mode in ("rn", "rz", "rm", "rp"):
        got = decode(encode(vals, "e5m2", mode), "e5m2").tolist()
        for v, g in zip(vals.tolist(), got):
            assert g == round_fraction(Fraction(v), "e5m2", mode), (mode, v, g)


def test_tf32_round_to_nearest_away():
    got = cvt({".rna"}, ".tf32", ".f32", f32_bits([1 + 2.0 ** -11, 1 + 2.0 ** -12, -(1 + 3 * 2.0 ** -11)]))
    assert got.tolist() == [0x3F802000, 0x3F800000, 0xBF804000]


@pytest.mark.parametrize("mods,src,want", [
    ({".ftz", ".sat"}, 1.5, 1.0), ({".sat"}, -0.25, 0.0), ({".sat"}, math.nan, 0.0),
    ({".ftz"}, 1e-40, 0.0), ({".rni"}, 2.5, 2.0), ({".rmi"}, -0.5, -1.0), ({".rpi"}, 0.25, 1.0),
])
def test_cvt_f32_f32(mods, src, want):
    assert from_f32(int(cvt(mods, ".f32", ".f32", f32_bits([src]))[0])) == want


def test_cvt_refuses_stochastic_rounding_without_its_bits_and_missing_int_rounding():
    with pytest.raises(NotEmulated):
        cvt({".rs"}, ".f16x2", ".f32", f32_bits([1.0]), f32_bits([1.0]))
    with pytest.raises(NotEmulated, match="normal range"):
        cvt({".rs"}, ".f16x2", ".f32", f32_bits([1e-6]), f32_bits([1.0]), np.zeros(1, np.uint32))
    with pytest.raises(NotEmulated, match="needs .rni"):
        cvt(set(), ".s32", ".f32", f32_bits([1.0]))


@pytest.mark.parametrize("dt,at,want", [(".s32", ".f64", 0x80000000), (".u16", ".f64", 0x8000),
                                        (".s32", ".f32", 0), (".u64", ".f32", 1 << 63), (".s8", ".f16", 0)])
def test_cvt_nan_to_int(dt, at, want):
    fmt = at[1:]
    src = {"f64": np.array([math.nan]).view(np.uint64), "f32": f32_bits([math.nan]),
           "f16": np.array([0x7E00], np.uint16)}[fmt]
    assert cvt({".rzi"}, dt, at, src).tolist() == [want]


def test_satfinite_nan_into_formats_without_nan_is_max_norm():
    got = cvt({".rn", ".satfinite"}, ".e2m1x2", ".f32", f32_bits([math.nan]), f32_bits([-math.nan]))
    assert int(got[0]) == 0x77                                   # +6.0 in both nibbles


@pytest.mark.parametrize("narrow,a,b,c,want", [
    (".u16", 70000, -5, None, 0xFFFF0000),
    (".s16", -40000, 1234, None, 0x800004D2),
    (".u8", 300, 7, 0xABCD, 0xABCDFF07),
    (".s4", -9, 5, 0x1, 0x185),
    (".u2", 1, 9, 0, 0x7),
])
def test_cvt_pack(narrow, a, b, c, want):
    types = (narrow, ".s32") if c is None else (narrow, ".s32", ".b32")
    mods = frozenset({".pack", ".sat", narrow, ".s32"} | ({".b32"} if c is not None else set()))
    srcs = [arr([a], 32), arr([b], 32)] + ([arr([c], 32)] if c is not None else [])
    assert ALU["cvt"](mods, types, *srcs).tolist() == [want]


@pytest.mark.parametrize("dt,fmt", [(".bf16x2", "bf16"), (".f16x2", "f16")])
def test_stochastic_rounding_extremes(dt, fmt):
    """Random bits 0 truncate (.rz); all-ones random bits round every inexact value away from zero."""
    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.floats(2.0 ** -14, 60000.0, width=32) | st.floats(-60000.0, -2.0 ** -14, width=32),
                    min_size=1, max_size=16))
    def check(vals):
        a = f32_bits(vals)
        mods = {".rs", ".satfinite"}
        zero = cvt(mods, dt, ".f32", a, a, np.zeros(len(vals), np.uint32))
        ones = cvt(mods, dt, ".f32", a, a, np.full(len(vals), 0xFFFFFFFF, np.uint32))
        for v, z, o in zip(vals, zero.tolist(), ones.tolist()):
            lo_z, lo_o = float(decode(np.array([z & 0xFFFF]), fmt)[0]), float(decode(np.array([o & 0xFFFF]), fmt)[0])
            assert lo_z == round_fraction(Fraction(v), fmt, "rz")
            away = "rp" if v > 0 else "rm"
            assert lo_o == round_fraction(Fraction(v), fmt, away)
    check()


def _f16_boundaries_as_f32() -> np.ndarray:
    """Every point where f32 -> f16 nearest-even rounding changes its mind: each f16 value, each
    midpoint between neighbours (exact in f32) and the f32 values just either side of it, over
    both signs, with the overflow threshold 65520, infinities and NaNs."""
    h = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float32)   # +0 .. max finite
    mids = ((h[:-1].astype(np.float64) + h[1:]) / 2).astype(np.float32)
    pts = np.concatenate([h, mids, np.nextafter(mids, np.float32(0)), np.nextafter(mids, np.float32(np.inf)),
                          np.float32([65504, 65519.996, 65520, 65520.004, 1e30, np.inf, np.nan])])
    return np.concatenate([pts, -pts]).view(np.uint32)


def test_cvt_rn_f16x2_f32_shortcut_matches_the_general_conversion():
    """The dedicated cvt.rn.f16x2.f32 (the epilogue of every f16 GEMM) gives the general path's
    bits, rounding by exact arithmetic (round_pair), on every rounding boundary and on random
    patterns (NaN payloads, subnormals, both operand orders)."""
    from ptx2py.emulate.numerics import cvt as cvt_module

    rng = np.random.default_rng(7)
    edges = _f16_boundaries_as_f32()
    a = np.concatenate([edges, rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)])
    b = np.roll(a, 12345)
    mods = cvt_module.F16X2_RN
    with np.errstate(all="ignore"):
        general = cvt_module._convert_float(mods, (".f16x2", ".f32"), ".f16x2", ".f32", (a, b))
    got = cvt(mods, ".f16x2", ".f32", a, b)
    assert got.dtype == general.dtype == np.uint32
    assert np.array_equal(got, general)
    # and both against numpy's own half conversion: b in the low half, NaN as 0x7fff
    def half(x):
        v = x.view(np.float32)
        return np.where(np.isnan(v), np.uint16(0x7FFF), v.astype(np.float16).view(np.uint16)).astype(np.uint32)
    with np.errstate(all="ignore"):
        assert np.array_equal(got, half(b) | (half(a) << np.uint32(16)))
