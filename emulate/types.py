"""PTX types as the engine stores them: raw bits in unsigned numpy containers of the type's width
(the contract with emulate/numerics), predicates as bool."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PtxType:
    name: str        # ".s32"
    bits: int        # storage width (0 for .pred)
    signed: bool = False
    floating: bool = False

    @property
    def nbytes(self) -> int:
        return self.bits // 8

    @property
    def container(self):
        return np.bool_ if self.bits == 0 else UINT[self.bits]


UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
FLOAT = {16: np.float16, 32: np.float32, 64: np.float64}


def _table():
    out = {".pred": PtxType(".pred", 0)}
    for bits in (8, 16, 32, 64):
        out[f".b{bits}"] = PtxType(f".b{bits}", bits)
        out[f".u{bits}"] = PtxType(f".u{bits}", bits)
        out[f".s{bits}"] = PtxType(f".s{bits}", bits, signed=True)
    out[".b128"] = PtxType(".b128", 128)
    for name, bits in ((".f16", 16), (".bf16", 16), (".f32", 32), (".f64", 64), (".f16x2", 32),
                       (".bf16x2", 32), (".tf32", 32), (".e4m3", 8), (".e5m2", 8), (".e4m3x2", 16),
                       (".e5m2x2", 16), (".e2m1x2", 8), (".e2m3x2", 16), (".e3m2x2", 16), (".ue8m0x2", 16)):
        out[name] = PtxType(name, bits, floating=True)
    return out


TYPES: dict[str, PtxType] = _table()


def type_of(modifier: str) -> PtxType | None:
    return TYPES.get(modifier)


def type_modifiers(modifiers) -> tuple[str, ...]:
    """The type words of an instruction, in written order (the numerics contract's `types`)."""
    return tuple(m for m in modifiers if m in TYPES)


def mask_bits(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


def to_container(values, bits: int, signed: bool = False):
    """Bits of any integer numpy array, resized (truncated or zero/sign-extended) to `bits`."""
    values = np.asarray(values)
    if values.dtype == np.bool_:
        return values.astype(UINT[bits])
    src_bits = values.dtype.itemsize * 8
    if src_bits == bits:
        return values.view(UINT[bits]) if values.dtype != UINT[bits] else values
    if src_bits > bits:
        return values.astype(UINT[bits])  # numpy integer astype truncates (two's complement)
    if signed:
        return values.view(SINT[src_bits]).astype(SINT[bits]).view(UINT[bits])
    return values.view(UINT[src_bits]).astype(UINT[bits])


def float_bits(value: float, ptype: PtxType):
    """An immediate float value as the raw bits of a float type."""
    if ptype.bits in FLOAT and ptype.name in (".f16", ".f32", ".f64"):
        return np.array([value], FLOAT[ptype.bits]).view(UINT[ptype.bits])[0]
    raise ValueError(f"no float immediate for {ptype.name}")
