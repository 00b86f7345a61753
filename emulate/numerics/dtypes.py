"""PTX scalar types as data: width, kind and signedness, and the numpy views of raw bits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PtxType:
    name: str
    width: int        # bits of the register that holds it
    kind: str         # "uint" "sint" "bits" "float" "pred" "packed_float" "packed_int" "narrow_float"
    lanes: int = 1    # elements packed in one register (.f16x2 -> 2)

    @property
    def container(self):
        return UINT[self.width]

    @property
    def signed(self):
        return self.kind == "sint"

    @property
    def is_int(self):
        return self.kind in ("uint", "sint", "bits")


UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
FLOAT_VIEW = {16: np.float16, 32: np.float32, 64: np.float64}


def _table():
    rows = []
    for w in (8, 16, 32, 64):
        rows += [PtxType(f".u{w}", w, "uint"), PtxType(f".s{w}", w, "sint"), PtxType(f".b{w}", w, "bits")]
    rows += [PtxType(".b128", 128, "bits"), PtxType(".pred", 1, "pred"),
             PtxType(".f32", 32, "float"), PtxType(".f64", 64, "float"),
             PtxType(".f16", 16, "half"), PtxType(".bf16", 16, "half"),
             PtxType(".f16x2", 32, "packed_half", 2), PtxType(".bf16x2", 32, "packed_half", 2),
             PtxType(".f32x2", 64, "packed_half", 2),
             PtxType(".s16x2", 32, "packed_int", 2), PtxType(".u16x2", 32, "packed_int", 2),
             PtxType(".tf32", 32, "narrow_float")]
    for f in ("e4m3", "e5m2", "e2m1", "e2m3", "e3m2", "ue8m0"):
        rows.append(PtxType(f".{f}", 8, "narrow_float"))
    for f, w in (("e4m3x2", 16), ("e5m2x2", 16), ("e2m1x2", 8), ("e2m3x2", 16), ("e3m2x2", 16),
                 ("ue8m0x2", 16), ("e4m3x4", 32), ("e5m2x4", 32), ("e2m1x4", 16), ("e2m3x4", 32),
                 ("e3m2x4", 32)):
        rows.append(PtxType(f".{f}", w, "packed_narrow", int(f[-1])))
    return {t.name: t for t in rows}


TYPES = _table()


def ptx_type(name: str) -> PtxType:
    return TYPES[name]


def signed_view(bits, width):
    """The two's-complement value of raw bits, as int64 (exact for every width up to 64)."""
    bits = np.asarray(bits).astype(UINT[width], copy=False)
    return bits.view(SINT[width]).astype(np.int64)


def to_bits(values, width):
    """Wrap integer values (any numpy integer array) to `width` raw bits (a C cast wraps)."""
    return np.asarray(values).astype(UINT[width], copy=False)


def int_value(bits, t: PtxType):
    """Signed types as int64, unsigned/bit types as uint64 (the integer the bits stand for)."""
    if t.signed:
        return signed_view(bits, t.width)
    return np.asarray(bits).astype(np.uint64)


def mask(width):
    return np.uint64((1 << width) - 1) if width < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)


def int_range(t: PtxType):
    """(lowest, highest) integer of a type, as Python ints."""
    if t.signed:
        return -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    return 0, (1 << t.width) - 1
