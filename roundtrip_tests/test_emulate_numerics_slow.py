"""Heavier sweeps of the numerics (pytest -m slow): large random samples against references that
share nothing with the code under test."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from numerics_ref import from_f32, round_fraction

from ptx2py.emulate.numerics import ALU

pytestmark = pytest.mark.slow
RNG = np.random.default_rng(2026)


@pytest.mark.parametrize("opcode,fn", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply)])
def test_f16_million_pairs(opcode, fn):
    a = RNG.integers(0, 1 << 16, 1_000_000).astype(np.uint16)
    b = RNG.integers(0, 1 << 16, 1_000_000).astype(np.uint16)
    got = ALU[opcode](frozenset({".rn", ".f16"}), (".f16",), a, b)
    with np.errstate(all="ignore"):      # f16 sums and products are exact in f64: one rounding
        want = fn(a.view(np.float16).astype(np.float64), b.view(np.float16).astype(np.float64)).astype(np.float16)
    nan = np.isnan(want)
    assert np.array_equal(got[~nan], want.view(np.uint16)[~nan])
    assert np.all(got[nan] == 0x7FFF)


def test_cvt_f32_to_f16_strided_sweep():
    bits = np.arange(0, 1 << 32, 257, dtype=np.uint64).astype(np.uint32)
    got = ALU["cvt"](frozenset({".rn", ".f16", ".f32"}), (".f16", ".f32"), bits)
    with np.errstate(all="ignore"):
        want = bits.view(np.float32).astype(np.float16)
    nan = np.isnan(want)
    assert np.array_equal(got[~nan], want.view(np.uint16)[~nan])


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f32_fma_random_against_rationals(mode):
    n = 20_000
    vals = [RNG.standard_normal(n) * 2.0 ** RNG.integers(-60, 60, n) for _ in range(3)]
    vals[2] = np.where(RNG.random(n) < 0.5, -(vals[0] * vals[1]), vals[2])     # cancellation
    a, b, c = (np.asarray(v, np.float32) for v in vals)
    got = ALU["fma"](frozenset({f".{mode}", ".f32"}), (".f32",), *(x.view(np.uint32) for x in (a, b, c)))
    for x, y, z, g in zip(a.tolist(), b.tolist(), c.tolist(), got.tolist()):
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact != 0:
            assert from_f32(g) == round_fraction(exact, "f32", mode), (x, y, z)


def test_bf16_decode_every_pattern():
    bits = np.arange(1 << 16, dtype=np.uint16)
    got = ALU["cvt"](frozenset({".f32", ".bf16"}), (".f32", ".bf16"), bits)
    want = bits.astype(np.uint32) << 16
    nan = ((want >> 23) & 0xFF == 0xFF) & (want & 0x7FFFFF != 0)
    assert np.array_equal(got[~nan], want[~nan]) and np.all(got[nan] == 0x7FFFFFFF)


@pytest.mark.parametrize("opcode", ["div", "sqrt"])
def test_f32_nearest_div_sqrt_random_against_rationals(opcode):
    n = 20_000
    a = (RNG.standard_normal(n) * 2.0 ** RNG.integers(-140, 120, n)).astype(np.float32)
    b = (RNG.standard_normal(n) * 2.0 ** RNG.integers(-140, 120, n)).astype(np.float32)
    if opcode == "sqrt":
        a = np.abs(a)
    srcs = (a.view(np.uint32),) if opcode == "sqrt" else (a.view(np.uint32), b.view(np.uint32))
    got = ALU[opcode](frozenset({".rn", ".f32"}), (".f32",), *srcs).tolist()
    for i, g in enumerate(got):
        x = Fraction(float(a[i]))
        if opcode == "div":
            if b[i] == 0:
                continue
            exact = x / Fraction(float(b[i]))
            want = round_fraction(exact, "f32", "rn") if exact != 0 else None
        else:
            if x == 0:
                continue
            # the result r is the nearest f32 to sqrt(x): x lies between the squares of the midpoints
            # to r's neighbours (exact rational comparisons)
            r = from_f32(g)
            below, above = (Fraction(float(np.nextafter(np.float32(r), np.float32(v)))) for v in (-np.inf, np.inf))
            assert ((Fraction(r) + below) / 2) ** 2 <= x <= ((Fraction(r) + above) / 2) ** 2, (float(a[i]), r)
            continue
        if want is not None:
            assert from_f32(g) == want, (float(a[i]), float(b[i]))
