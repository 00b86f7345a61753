"""Raw bits <-> f64 values for float registers (f64 f32 f16 bf16), with PTX's flush-to-zero and
canonical NaNs (f32 0x7fffffff, f16/bf16 0x7fff)."""

from __future__ import annotations

import numpy as np

from . import formats
from .rounding import FORMATS

CANONICAL_NAN = {"f32": np.uint32(0x7FFFFFFF), "f64": np.uint64(0x7FFFFFFFFFFFFFFF)}
_VIEW = {"f32": (np.uint32, np.float32), "f64": (np.uint64, np.float64)}
SCALAR_FLOATS = ("f64", "f32", "f16", "bf16")


def fmt_of(type_name: str) -> str:
    return type_name.lstrip(".")


def smallest_normal(fmt):
    return 2.0 ** FORMATS[fmt].emin


def decode(bits, fmt: str, ftz=False):
    """Register bits -> f64 values (exact); with ftz, subnormal inputs become signed zeros."""
    if fmt in _VIEW:
        u, f = _VIEW[fmt]
        vals = np.asarray(bits).astype(u, copy=False).view(f).astype(np.float64)
    else:
        vals = formats.decode(bits, fmt)
    return flush(vals, fmt) if ftz else vals


def flush(vals, fmt: str):
    tiny = (vals != 0) & (np.abs(vals) < smallest_normal(fmt))
    return np.where(tiny, np.copysign(0.0, vals), vals)


def encode(vals, fmt: str, ftz=False, canonical_nan=True):
    """f64 values already on the format's grid -> register bits (NaN -> the canonical NaN)."""
    vals = np.asarray(vals, np.float64)
    if ftz:
        vals = flush(vals, fmt)
    if fmt not in _VIEW:
        return formats.encode(vals, fmt)
    u, f = _VIEW[fmt]
    bits = vals.astype(f).view(u)
    if canonical_nan:
        bits = np.where(np.isnan(vals), CANONICAL_NAN[fmt], bits).astype(u)
    return bits


def saturate(vals):
    """.sat: clamp to [+0.0, 1.0]; NaN -> +0.0."""
    vals = np.where(np.isnan(vals), 0.0, vals)
    return np.where(vals <= 0.0, 0.0, np.minimum(vals, 1.0))


def relu(vals):
    """.relu: negative results become +0; NaN stays NaN (encoded as the canonical NaN)."""
    return np.where(vals < 0.0, 0.0, vals)
