"""Bit-exact decode and encode of PTX's float formats: f64 f32 f16 bf16 tf32 and the narrow
e4m3 e5m2 e2m3 e3m2 e2m1 ue8m0 (PTX ISA 5.2.5 "alternate floating-point data formats").

    decode(bits, fmt) -> float64 values (exact)
    encode(values, fmt, rounding="rn", sat=False, relu=False, satfinite=False) -> bits

`values` are f64 and taken as exact; rounding goes through rounding.round_pair, so every mode is
exact. NaN results are each format's canonical NaN (f16/bf16 0x7fff, e4m3/e5m2 0x7f, f32
0x7fffffff); formats without a NaN refuse NaN inputs.
"""

from __future__ import annotations

import numpy as np

from .dtypes import UINT
from .errors import NotEmulated
from .rounding import FORMATS, round_pair

CANONICAL_NAN = {"f64": 0x7FFFFFFFFFFFFFFF, "f32": 0x7FFFFFFF, "tf32": 0x7FFFFFFF, "f16": 0x7FFF,
                 "bf16": 0x7FFF, "e4m3": 0x7F, "e5m2": 0x7F, "ue8m0": 0xFF}
CONTAINER_BITS = {"f64": 64, "f32": 32, "tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8,
                  "e2m3": 8, "e3m2": 8, "e2m1": 8, "ue8m0": 8}
_TF32_DROP = 13                        # tf32 lives in an f32 register with the low 13 bits zero
NATIVE_BITS = {"f32": (np.float32, np.uint32), "f16": (np.float16, np.uint16), "f64": (np.float64, np.uint64)}


def _layout(fmt):
    """The format as stored: tf32 uses the f32 field layout."""
    return FORMATS["f32"] if fmt == "tf32" else FORMATS[fmt]


def decode(bits, fmt: str):
    native = NATIVE_BITS.get(fmt)
    if native is not None:                     # numpy's own IEEE formats
        return np.asarray(bits).astype(native[1], copy=False).view(native[0]).astype(np.float64)
    f = FORMATS[fmt]
    lay = _layout(fmt)
    b = np.asarray(bits).astype(np.uint64)
    if fmt == "tf32":
        b = b & ~np.uint64((1 << _TF32_DROP) - 1)
    m = lay.man_bits
    man = (b & np.uint64((1 << m) - 1)).astype(np.float64)
    exp = ((b >> np.uint64(m)) & np.uint64((1 << lay.exp_bits) - 1)).astype(np.int64)
    neg = ((b >> np.uint64(lay.exp_bits + m)) & np.uint64(1)).astype(bool) if f.signed else np.zeros(b.shape, bool)
    if fmt == "ue8m0":
        mag = np.ldexp(1.0, (exp - 127).astype(np.int32))
    else:
        normal = np.ldexp(1.0 + man / (1 << m), (exp - lay.bias).astype(np.int32))
        sub = np.ldexp(man, lay.emin - m)
        mag = np.where(exp == 0, sub, normal)
    top = (1 << lay.exp_bits) - 1
    if f.nan == "ieee":
        if f.has_inf:
            mag = np.where((exp == top) & (man == 0), np.inf, mag)
        mag = np.where((exp == top) & ((man != 0) | (not f.has_inf)), np.nan, mag)
    elif f.nan == "e4m3":
        mag = np.where((exp == top) & (man == (1 << m) - 1), np.nan, mag)
    return np.where(neg, -mag, mag)


def round_to(values, fmt: str, rounding="rn", lo=0.0):
    """Values (exact as values + lo) rounded onto the format's grid, as f64 (inf on overflow)."""
    return round_pair(values, lo, FORMATS[fmt], rounding)


def encode(values, fmt: str, rounding="rn", sat=False, relu=False, satfinite=False, lo=0.0, ftz=False):
    f = FORMATS[fmt]
    v = np.asarray(values, np.float64)
    nan = np.isnan(v)
    if relu:
        v = np.where(v < 0, 0.0, v)
    if sat:
        v = np.where(nan, 0.0, np.clip(v, 0.0, 1.0))
        nan = np.zeros_like(nan)
    r = round_to(v, fmt, rounding, lo)
    if ftz:
        r = np.where(np.abs(r) < 2.0 ** f.emin, np.copysign(0.0, r), r)
    if satfinite and fmt not in CANONICAL_NAN:            # e2m1/e2m3/e3m2: NaN -> +MAX_NORM
        r = np.where(nan, f.max_finite, r)
        nan = np.zeros_like(nan)
    if satfinite or not (f.has_inf or fmt == "f64"):
        over = np.isinf(r)
        if not satfinite and f.nan == "e4m3":
            r = np.where(over, np.nan, r)           # e4m3 without .satfinite: overflow is NaN
            nan = nan | over
        elif not satfinite and np.any(over):
            raise NotEmulated(f"cvt to .{fmt}: overflow without .satfinite")
        else:
            r = np.where(over, np.copysign(f.max_finite, r) if f.signed else f.max_finite, r)
    if not f.signed:
        if np.any(r < 0):
            raise NotEmulated(f"cvt to .{fmt}: negative value for an unsigned format")
    if np.any(nan) and fmt not in CANONICAL_NAN:
        raise NotEmulated(f"cvt to .{fmt}: NaN has no encoding in this format")
    return _pack(r, nan, fmt)


def _pack(r, nan, fmt):
    native = NATIVE_BITS.get(fmt)
    if native is not None:                     # on the grid already: numpy's own encoding
        bits = np.asarray(r, np.float64).astype(native[0]).view(native[1])
        return np.where(nan, native[1](CANONICAL_NAN[fmt]), bits).astype(native[1])
    f = FORMATS[fmt]
    lay = _layout(fmt)
    m = lay.man_bits
    container = UINT[CONTAINER_BITS[fmt]]
    a = np.abs(np.where(nan, 0.0, r))
    finite = np.isfinite(a) & (a > 0)
    safe = np.where(finite, a, 1.0)
    _, e2 = np.frexp(safe)
    e = e2.astype(np.int64) - 1
    if fmt == "ue8m0":
        exp_field = np.where(finite, e + 127, 0)
        man_field = np.zeros_like(exp_field)
    else:
        subnormal = e < lay.emin
        exp_field = np.where(subnormal, 0, e + lay.bias)
        scale = np.where(subnormal, lay.emin - m, e - m)
        man_field = np.ldexp(safe, (-scale).astype(np.int32)).astype(np.int64)
        man_field = np.where(subnormal, man_field, man_field - (1 << m))
        exp_field = np.where(finite, exp_field, 0)
        man_field = np.where(finite, man_field, 0)
    top = (1 << lay.exp_bits) - 1
    exp_field = np.where(np.isinf(a), top, exp_field)
    sign = np.signbit(r).astype(np.int64) if f.signed else np.zeros(r.shape, np.int64)
    word = (sign << (lay.exp_bits + m)) | (exp_field << m) | man_field
    word = np.where(nan, CANONICAL_NAN.get(fmt, 0), word)
    return word.astype(np.uint64).astype(container)


def format_of(type_name: str) -> str | None:
    """`.e4m3x2` -> "e4m3"; `.f16x2` -> "f16"; None for non-float types."""
    base = type_name.lstrip(".")
    for suffix in ("x2", "x4"):
        if base.endswith(suffix) and base[: -len(suffix)] in FORMATS:
            return base[: -len(suffix)]
    return base if base in FORMATS else None


def lanes_of(type_name: str) -> int:
    base = type_name.lstrip(".")
    return int(base[-1]) if base[-2:] in ("x2", "x4") else 1
