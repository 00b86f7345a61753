"""Bit-pattern constants as named fields, re-encoded to the exact same bits:

    WGMMA_DESC_BITS = wgmma_desc(sbo=1024, swizzle="128B")   # 0x4000004000000000
    IDESC = tcgen05_idesc("f16", d="f32", m=128, n=128, transpose_b=1)   # 0x8210010

A layout is a table of fields: (name, lowest bit, width, unit or value names). A unit
field holds `value // unit` (the wgmma descriptor's byte offsets are stored >> 4);
`other=` keeps any bit no field names, so every 64-bit value has a spelling.
"""

from __future__ import annotations

from .errors import DSLError

_SWIZZLE = {0: "none", 1: "128B", 2: "64B", 3: "32B"}

# PTX ISA "Matrix Descriptor Format" (wgmma shared-memory matrix descriptors)
WGMMA_DESC = (
    ("start", 0, 14, 16),
    ("lbo", 16, 14, 16),
    ("sbo", 32, 14, 16),
    ("base_offset", 49, 3, 1),
    ("swizzle", 62, 2, _SWIZZLE),
)

# PTX ISA "Instruction descriptor" of tcgen05.mma, per .kind (the types' codes differ)
_F16_TYPES = {0: "f16", 1: "bf16", 2: "tf32"}
_F8_TYPES = {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"}
_I8_TYPES = {0: "u8", 1: "s8"}
_D_TYPES = {0: "f16", 1: "f32", 2: "s32"}


def _idesc(ab):
    return (
        ("sparse_selector", 0, 2, 1), ("sparse", 2, 1, 1), ("saturate", 3, 1, 1),
        ("d", 4, 2, _D_TYPES), ("a", 7, 3, ab), ("b", 10, 3, ab),
        ("negate_a", 13, 1, 1), ("negate_b", 14, 1, 1), ("transpose_a", 15, 1, 1), ("transpose_b", 16, 1, 1),
        ("n", 17, 6, 8), ("m", 24, 5, 16), ("max_shift", 30, 2, 1),
    )


TCGEN05_IDESC = {"f16": _idesc(_F16_TYPES), "tf32": _idesc(_F16_TYPES), "f8f6f4": _idesc(_F8_TYPES),
                 "i8": _idesc(_I8_TYPES)}


def encode(layout, name: str, fields: dict, other: int = 0) -> int:
    value = 0
    known = {f[0]: f for f in layout}
    for key, v in fields.items():
        f = known.get(key)
        if f is None:
            raise DSLError(f"{name}: no field {key!r} (have {', '.join(known)})")
        _, lo, width, unit = f
        if unit.__class__ is dict:
            codes = {n: c for c, n in unit.items()}
            if v not in codes:
                raise DSLError(f"{name}: {key}={v!r} is not one of {', '.join(map(repr, codes))}")
            code = codes[v]
        else:
            if v % unit:
                raise DSLError(f"{name}: {key}={v} is not a multiple of {unit}")
            code = v // unit
        if not 0 <= code < 1 << width:
            raise DSLError(f"{name}: {key}={v} does not fit its {width} bits")
        value |= code << lo
    mask = sum(((1 << f[2]) - 1) << f[1] for f in layout)
    if other & mask:
        raise DSLError(f"{name}: other={other:#x} overlaps named fields")
    return value | other


def decode(layout, value: int):
    """(fields that are not zero, the bits no field covers, or None where a code has no name)."""
    out, rest = {}, value
    for key, lo, width, unit in layout:
        code = (value >> lo) & ((1 << width) - 1)
        rest &= ~(((1 << width) - 1) << lo)
        if code == 0 and (unit.__class__ is not dict or unit[0] == "none"):
            continue
        if unit.__class__ is dict:
            if code not in unit:
                return None
            out[key] = unit[code]
        else:
            out[key] = code * unit
    return out, rest


def wgmma_desc(start: int = 0, lbo: int = 0, sbo: int = 0, base_offset: int = 0, swizzle: str = "none",
               other: int = 0) -> int:
    """A wgmma shared-memory matrix descriptor: start address, leading and stride byte offsets
    (multiples of 16), base offset, swizzle mode; `other`: bits the format leaves unnamed."""
    fields = {"start": start, "lbo": lbo, "sbo": sbo, "base_offset": base_offset, "swizzle": swizzle}
    return encode(WGMMA_DESC, "wgmma_desc", {k: v for k, v in fields.items() if v not in (0, "none")}, other)


def tcgen05_idesc(kind: str, other: int = 0, **fields) -> int:
    """A tcgen05.mma instruction descriptor for `.kind::<kind>` (types by name, m/n as sizes)."""
    layout = TCGEN05_IDESC.get(kind)
    if layout is None:
        raise DSLError(f"tcgen05_idesc: no kind {kind!r} (have {', '.join(TCGEN05_IDESC)})")
    return encode(layout, "tcgen05_idesc", fields, other)


__all__ = ["wgmma_desc", "tcgen05_idesc"]
