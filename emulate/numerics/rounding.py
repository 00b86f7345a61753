"""Exact rounding to any binary float format, from an exact value held as an f64 pair.

Every float instruction here computes its exact result as ``hi + lo`` where ``hi`` is the f64
nearest to it and ``lo`` has the sign of the remainder (error-free transformations: TwoSum,
Dekker's TwoProduct, division and square-root remainders). Because every grid point and every
midpoint of a format no wider than f64 is itself an f64, ``hi`` sits on the same side of each of
them as the exact value, and the sign of ``lo`` settles the ties — so the rounding below is exact
for every mode. Where the pair cannot be formed exactly (f64 products near the ends of the
exponent range), `fraction_pairs` computes the lanes with `fractions.Fraction`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

MODES = ("rn", "rz", "rm", "rp", "rna")


@dataclass(frozen=True)
class FloatFormat:
    name: str
    exp_bits: int
    man_bits: int
    has_inf: bool = True
    nan: str = "ieee"            # "ieee" (all-ones exponent), "e4m3" (S.1111.111 only), "none"
    signed: bool = True

    @property
    def bias(self):
        return (1 << (self.exp_bits - 1)) - 1 if self.name != "ue8m0" else 127

    @property
    def precision(self):
        return self.man_bits + 1

    @property
    def emin(self):
        return 1 - self.bias

    @property
    def bits(self):
        return int(self.signed) + self.exp_bits + self.man_bits

    @property
    def max_finite(self):
        top_exp = (1 << self.exp_bits) - (2 if self.has_inf or self.nan == "ieee" else 1)
        man = (1 << self.man_bits) - 1
        if self.nan == "e4m3":
            man -= 1                           # S.1111.111 is NaN
        if self.name == "ue8m0":
            return float(2.0 ** (254 - 127))
        return float((1 + man / (1 << self.man_bits)) * 2.0 ** (top_exp - self.bias))


FORMATS = {f.name: f for f in (
    FloatFormat("f64", 11, 52), FloatFormat("f32", 8, 23), FloatFormat("f16", 5, 10),
    FloatFormat("bf16", 8, 7), FloatFormat("tf32", 8, 10),
    FloatFormat("e4m3", 4, 3, has_inf=False, nan="e4m3"), FloatFormat("e5m2", 5, 2),
    FloatFormat("e2m3", 2, 3, has_inf=False, nan="none"), FloatFormat("e3m2", 3, 2, has_inf=False, nan="none"),
    FloatFormat("e2m1", 2, 1, has_inf=False, nan="none"),
    FloatFormat("ue8m0", 8, 0, has_inf=False, nan="ieee", signed=False),
)}


# -- error-free transformations ---------------------------------------------------------------

def two_sum(a, b):
    """s = fl(a + b) and the exact error e, a + b = s + e (no overflow assumed)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


_SPLIT = 134217729.0   # 2^27 + 1


def _split(a):
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """p = fl(a * b) and its exact error (valid while |a|,|b| < 2^995 and the error is normal)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def two_prod_exact(a, b):
    """Lanes where `two_prod` is exact: finite, no split overflow, error above the subnormals."""
    p = np.abs(a * b)
    return ((np.abs(a) < 2.0 ** 995) & (np.abs(b) < 2.0 ** 995) & ((a == 0) | (b == 0) | (p > 2.0 ** -960))
            & (p < 2.0 ** 1000))


def round_to_odd_sum(x, y):
    """RO(x + y): the exact sum if representable, else its neighbour with an odd last bit."""
    s, e = two_sum(x, y)
    inward = (e != 0) & (np.signbit(e) != np.signbit(s))
    z = np.where(inward, np.nextafter(s, 0.0), s)           # RZ(x + y)
    odd = z.view(np.uint64) | np.uint64(1)
    return np.where(e != 0, odd.view(np.float64), s)


def fma_nearest_f64(a, b, c):
    """RN(a*b + c) for f64 without a hardware fma (Boldo & Melquiond, rounding to odd), and the
    lanes where its preconditions hold (no overflow, no underflow of the product's error)."""
    uh, ul = two_prod(a, b)
    th, tl = two_sum(c, uh)
    z = th + round_to_odd_sum(tl, ul)
    def mag_ok(v):
        return (v == 0) | ((np.abs(v) > 2.0 ** -900) & (np.abs(v) < 2.0 ** 1000))

    ok = two_prod_exact(a, b) & mag_ok(uh) & mag_ok(c) & mag_ok(z) & np.isfinite(z)
    return z, ok


# -- rounding ---------------------------------------------------------------------------------

def round_pair(hi, lo, fmt: FloatFormat, mode: str):
    """The exact value hi + lo (lo: only its sign matters) rounded to `fmt` with `mode`, as f64.

    Overflow gives +-inf where the mode rounds outward (rn, rna, and rp/rm on their side) and the
    largest finite value otherwise, as IEEE 754 says; formats without infinities are finished by
    the caller (NaN or .satfinite)."""
    hi = np.asarray(hi, np.float64)
    lo = np.broadcast_to(np.asarray(lo, np.float64), hi.shape)
    if fmt.name == "f64":
        return _round_f64(hi, lo, mode)
    native = NATIVE.get(fmt.name)
    if native is not None and mode == "rn":
        # numpy's f64 -> f32/f16 casts round to nearest-even once; only inexact pairs need more
        out = hi.astype(native).astype(np.float64)
        tail = (lo != 0) & ~np.isnan(lo)
        if np.any(tail):
            out[tail] = _round_generic(hi[tail], lo[tail], fmt, mode)
        return out
    return _round_generic(hi, lo, fmt, mode)


NATIVE = {"f32": np.float32, "f16": np.float16}


def _round_generic(hi, lo, fmt, mode):
    neg = np.signbit(hi)
    a = np.abs(hi)
    rlo = np.where(neg, -lo, lo)                  # remainder, relative to the magnitude
    rlo = np.where(np.isnan(rlo), 0.0, rlo)
    finite = np.isfinite(a) & (a > 0)
    safe = np.where(finite, a, 1.0)
    _, e2 = np.frexp(safe)
    exp = np.maximum(e2.astype(np.int64) - 1, fmt.emin)
    # just under a power of two, the grid is the finer one of the binade below
    at_power = (np.frexp(safe)[0] == 0.5) & (rlo < 0) & (exp > fmt.emin)
    exp = exp - at_power
    q = np.ldexp(1.0, (exp - fmt.man_bits).astype(np.int32))
    scaled = safe / q
    n = np.floor(scaled)
    f = scaled - n
    below = (f == 0) & (rlo < 0)                  # just under a grid point
    n = np.where(below, n - 1, n)
    f = np.where(below, 1.0, f)
    inexact = (f != 0) | (rlo != 0)
    gt_half = (f > 0.5) | ((f == 0.5) & (rlo > 0)) | below
    tie = (f == 0.5) & (rlo == 0)
    if mode == "rn":
        up = gt_half | (tie & (np.fmod(n, 2) == 1))
    elif mode == "rna":
        up = gt_half | tie
    elif mode == "rz":
        up = np.zeros_like(inexact)
    elif mode == "rp":
        up = inexact & ~neg
    elif mode == "rm":
        up = inexact & neg
    else:
        raise ValueError(mode)
    mag = (n + up) * q
    mag = np.where(finite, mag, a)
    outward = {"rn": True, "rna": True, "rz": False, "rp": ~neg, "rm": neg}[mode]
    over = finite & (mag > fmt.max_finite)
    mag = np.where(over, np.where(outward, np.inf, fmt.max_finite), mag)
    return np.copysign(mag, np.where(neg, -1.0, 1.0))


def _round_f64(hi, lo, mode):
    if mode in ("rn", "rna"):
        return hi                                # hi is already the nearest (ties-to-even) f64
    rlo = np.where(np.isnan(lo), 0.0, lo)
    hi = np.where((hi == 0) & (rlo != 0), np.copysign(0.0, rlo), hi)   # underflowed to zero
    if mode == "rz":
        inward = (rlo != 0) & (np.signbit(rlo) != np.signbit(hi))
        return np.where(inward, np.nextafter(hi, 0.0), hi)
    if mode == "rp":
        return np.where(rlo > 0, np.nextafter(hi, np.inf), hi)
    return np.where(rlo < 0, np.nextafter(hi, -np.inf), hi)


def clamp_overflow_f64(result, overflowed, mode):
    """f64 results that overflowed to inf in round-to-nearest, finished for a directed mode."""
    if mode in ("rn", "rna"):
        return result
    neg = np.signbit(result)
    outward = {"rz": np.zeros_like(neg), "rp": ~neg, "rm": neg}[mode]
    big = np.copysign(np.finfo(np.float64).max, result)
    return np.where(overflowed & ~outward, big, result)


# -- the exact fallback ---------------------------------------------------------------------------

def fraction_pairs(fn, *args):
    """(hi, lo-sign) per lane from an exact rational `fn(*Fractions)`; args are f64 arrays of finite
    values. Slow (a Python loop) — used only for the lanes the fast pairs cannot do exactly."""
    his, los = [], []
    for vals in zip(*(np.asarray(x, np.float64).tolist() for x in args)):
        exact = fn(*(Fraction(v) for v in vals))
        try:
            h = float(exact)                   # correctly rounded (ties to even)
        except OverflowError:
            h = float("inf") if exact > 0 else float("-inf")
        rest = exact - Fraction(h) if np.isfinite(h) else Fraction(0)
        his.append(h)
        los.append(float((rest > 0) - (rest < 0)))
    return np.array(his, np.float64), np.array(los, np.float64)
