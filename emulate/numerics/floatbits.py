"""Raw bits <-> f64 values for f32/f64 registers, with PTX's flush-to-zero and canonical NaN."""

from __future__ import annotations

import numpy as np

CANONICAL_NAN = {"f32": np.uint32(0x7FFFFFFF), "f64": np.uint64(0x7FFFFFFFFFFFFFFF)}
_VIEW = {"f32": (np.uint32, np.float32), "f64": (np.uint64, np.float64)}
SMALLEST_NORMAL = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022}


def fmt_of(type_name: str) -> str:
    return type_name.lstrip(".")


def decode(bits, fmt: str, ftz=False):
    """Register bits -> f64 values (exact); with ftz, subnormal inputs become signed zeros."""
    u, f = _VIEW[fmt]
    vals = np.asarray(bits).astype(u, copy=False).view(f).astype(np.float64)
    return flush(vals, fmt) if ftz else vals


def flush(vals, fmt: str):
    tiny = (vals != 0) & (np.abs(vals) < SMALLEST_NORMAL[fmt])
    return np.where(tiny, np.copysign(0.0, vals), vals)


def encode(vals, fmt: str, ftz=False, canonical_nan=True):
    """f64 values already on the format's grid -> register bits (NaN -> the canonical NaN)."""
    u, f = _VIEW[fmt]
    vals = np.asarray(vals, np.float64)
    if ftz:
        vals = flush(vals, fmt)
    bits = vals.astype(f).view(u)
    if canonical_nan:
        bits = np.where(np.isnan(vals), CANONICAL_NAN[fmt], bits).astype(u)
    return bits


def saturate(vals):
    """.sat: clamp to [+0.0, 1.0]; NaN -> +0.0."""
    vals = np.where(np.isnan(vals), 0.0, vals)
    return np.where(vals <= 0.0, 0.0, np.minimum(vals, 1.0))
