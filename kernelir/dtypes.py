"""Numpy emulation of the IR's dtypes: storage, rounding and wrapping."""
from __future__ import annotations

import numpy as np

# bf16 is stored in float32 arrays whose values are always bf16-representable.
STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.float32,
           "s32": np.int32, "u32": np.uint32, "pred": np.bool_}
ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "s32": 4, "u32": 4}
IS_FLOAT = {"f32": True, "f16": True, "bf16": True}


def round_bf16(x) -> np.ndarray:
    """Round float32 values to the nearest bf16 (ties to even), keeping NaN."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32("nan"), out)


def store(x, dtype: str) -> np.ndarray:
    """Convert values already computed in a wide type to the storage form of dtype.
    Integers wrap (two's complement); floats round to the target precision."""
    x = np.asarray(x)
    if dtype == "pred":
        return x.astype(np.bool_)
    if dtype == "bf16":
        return round_bf16(x.astype(np.float32))
    if dtype in ("s32", "u32"):
        if x.dtype.kind == "f":
            raise TypeError("store() of floats into an int type; use to_int()")
        return x.astype(np.int64).astype(STORAGE[dtype])
    return x.astype(STORAGE[dtype])


def wide(x, dtype: str) -> np.ndarray:
    """The type arithmetic is carried out in: f32 for floats, int64 for ints."""
    if dtype in ("f32", "f16", "bf16"):
        return np.asarray(x, dtype=np.float32)
    if dtype in ("s32", "u32"):
        return np.asarray(x, dtype=np.int64)
    return np.asarray(x, dtype=np.bool_)


def float_to_int(x, dtype: str) -> np.ndarray:
    """cvt.rzi.sat: truncate toward zero, saturate, NaN -> 0."""
    x = np.asarray(x, dtype=np.float64)
    info = np.iinfo(STORAGE[dtype])
    x = np.nan_to_num(np.trunc(x), nan=0.0, posinf=info.max, neginf=info.min)
    return np.clip(x, info.min, info.max).astype(STORAGE[dtype])


def convert(x, src: str, dst: str) -> np.ndarray:
    """Cast semantics between any two value dtypes."""
    if dst == "pred":
        return np.asarray(x) != 0
    if src == "pred":
        return store(np.asarray(x).astype(np.int64), dst) if dst in ("s32", "u32") \
            else store(np.asarray(x).astype(np.float32), dst)
    src_float, dst_float = src in IS_FLOAT, dst in IS_FLOAT
    if src_float and not dst_float:
        return float_to_int(x, dst)
    if dst_float:
        return store(np.asarray(x).astype(np.float64).astype(np.float32), dst)
    return store(np.asarray(x).astype(np.int64), dst)   # int -> int wraps


def lit_value(value, dtype: str) -> np.ndarray:
    if isinstance(value, str):
        value = float(value)
    if dtype in ("s32", "u32"):
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"non-integer literal {value} for {dtype}")
            value = int(value)
        return store(np.int64(value), dtype)
    if dtype == "pred":
        return np.bool_(value)
    return store(np.float32(value), dtype)
