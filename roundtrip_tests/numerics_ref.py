"""Independent references for the numerics tests: exact rationals and Python integers.

Nothing here imports emulate.numerics: the rounding reference rounds a Fraction by enumerating the
format's grid with integer arithmetic only.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np

# (exponent bits, mantissa bits, has infinities)
FORMATS = {"f32": (8, 23), "f64": (11, 52), "f16": (5, 10), "bf16": (8, 7), "tf32": (8, 10), "e5m2": (5, 2)}


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def from_f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def from_f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def round_fraction(x: Fraction, fmt: str, mode: str) -> float:
    """x rounded to the format (IEEE 754 rules, overflow to inf/max by mode), as a Python float."""
    e_bits, m_bits = FORMATS[fmt]
    bias = (1 << (e_bits - 1)) - 1
    emin, emax = 1 - bias, bias
    max_finite = Fraction((1 << (m_bits + 1)) - 1, 1 << m_bits) * Fraction(2) ** emax
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = math.floor(math.log2(a.numerator) - math.log2(a.denominator)) if a else 0
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    q = Fraction(2) ** (max(e, emin) - m_bits)
    n = a / q
    lo = math.floor(n)
    frac = n - lo
    if mode == "rn":
        up = frac > Fraction(1, 2) or (frac == Fraction(1, 2) and lo % 2 == 1)
    elif mode == "rz":
        up = False
    elif mode == "rp":
        up = frac != 0 and sign > 0
    elif mode == "rm":
        up = frac != 0 and sign < 0
    elif mode == "rna":
        up = frac >= Fraction(1, 2)
    mag = (lo + up) * q
    if mag > max_finite:
        outward = mode in ("rn", "rna") or (mode == "rp" and sign > 0) or (mode == "rm" and sign < 0)
        return sign * math.inf if outward else sign * float(max_finite)
    return sign * float(mag)


def wrap(v: int, width: int) -> int:
    return v & ((1 << width) - 1)


def signed(v: int, width: int) -> int:
    v = wrap(v, width)
    return v - (1 << width) if v >> (width - 1) else v


def arr(values, width):
    return np.array([wrap(v, width) for v in values], dtype={8: np.uint8, 16: np.uint16, 32: np.uint32,
                                                             64: np.uint64}[width])
