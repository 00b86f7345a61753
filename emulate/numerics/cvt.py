"""cvt for every integer/float type pair — PTX ISA 9.7.9.21.

    int -> int     sign/zero extension by the source type, truncation, or .sat clamping
    int -> float   exact value rounded once (.rn .rz .rm .rp)
    float -> int   .rni .rzi .rmi .rpi; always clamped to the destination range; NaN -> 0, or
                   1 << (width-1) from .f64 or into 64-bit types (the ISA's rule)
    float -> float .rn .rz .rm .rp .rna, .rni-style rounding to integral values, .ftz, .sat,
                   .relu, .satfinite; packed destinations (`cvt.rn.f16x2.f32 d, a, b`: a goes to
                   the upper half) and packed sources (`cvt.rn.f16x2.e4m3x2 d, a`)
"""

from __future__ import annotations

import numpy as np

from .dtypes import UINT, int_range, int_value, ptx_type, signed_view, to_bits
from .errors import accept, refuse
from .formats import CONTAINER_BITS, decode, encode, format_of, lanes_of
from .registry import handles
from .rounding import two_sum

FLOAT_ROUNDINGS = {".rn": "rn", ".rz": "rz", ".rm": "rm", ".rp": "rp", ".rna": "rna"}
INT_ROUNDINGS = {".rni": np.rint, ".rzi": np.trunc, ".rmi": np.floor, ".rpi": np.ceil}
MODIFIERS = set(FLOAT_ROUNDINGS) | set(INT_ROUNDINGS) | {".ftz", ".sat", ".relu", ".satfinite", ".rs"}


def _one(opcode, mods, types, table):
    found = [m for m in mods if m in table]
    if len(found) > 1:
        refuse(opcode, mods, types, "more than one rounding modifier")
    return found[0] if found else None


def _float_in(bits, t, ftz):
    vals = decode(bits, format_of(t))
    if ftz and format_of(t) == "f32":
        vals = np.where(np.abs(vals) < 2.0 ** -126, np.copysign(0.0, vals), vals)
    return vals


def _int_exact_pair(bits, t):
    """An integer as an exact f64 pair hi + lo (the 64-bit values need two words)."""
    v = int_value(np.asarray(bits).astype(t.container), t)
    if t.width <= 32:
        return v.astype(np.float64), np.zeros(v.shape)
    u = v.astype(np.uint64) if not t.signed else v.view(np.uint64)
    high = (u >> np.uint64(32)).astype(np.float64)
    if t.signed:
        high = (v >> 32).astype(np.float64)           # arithmetic shift keeps the sign
    low = (u & np.uint64(0xFFFFFFFF)).astype(np.float64)
    return two_sum(high * 4294967296.0, low)


def _nan_as_int(dt, src_fmt):
    """NaN -> integer (ISA cvt): 0, except from .f64 or into a 64-bit type: 1 << (width - 1)."""
    return (1 << (dt.width - 1)) if src_fmt == "f64" or dt.width == 64 else 0


def _to_int(vals, dt, rounder, src_fmt):
    lo, hi = int_range(dt)
    nan = np.isnan(vals)
    r = rounder(np.where(nan, 0.0, vals))
    big = r >= float(hi)                               # float(hi) rounds up to 2^(w-1) or 2^w
    small = r <= float(lo)
    inner = np.where(big | small, 0.0, r)
    out = inner.astype(np.int64) if dt.signed else inner.astype(np.uint64)
    out = np.where(big, np.uint64(hi) if not dt.signed else np.int64(hi), out)
    out = np.where(small, np.uint64(0) if not dt.signed else np.int64(lo), out)
    out = to_bits(out, dt.width)
    return np.where(nan, dt.container(_nan_as_int(dt, src_fmt)), out).astype(dt.container)


def _convert_scalar(mods, types, dt_name, at_name, bits, fmt_mode):
    """One lane: source bits of type at_name -> destination bits of dt_name."""
    ftz = ".ftz" in mods
    dst_fmt, src_fmt = format_of(dt_name), format_of(at_name)
    if src_fmt is None and dst_fmt is None:                 # int -> int
        dt, at = ptx_type(dt_name), ptx_type(at_name)
        v = int_value(np.asarray(bits).astype(at.container), at)
        if ".sat" in mods:
            lo, hi = int_range(dt)
            if at.signed:
                v = np.clip(v, lo, min(hi, 2 ** 63 - 1))
            else:
                v = np.minimum(v, np.uint64(min(hi, 2 ** 64 - 1)))
        return to_bits(v, dt.width)
    if dst_fmt is None:                                     # float -> int
        rnd = _one("cvt", mods, types, INT_ROUNDINGS)
        if rnd is None:
            refuse("cvt", mods, types, "float-to-integer needs .rni/.rzi/.rmi/.rpi")
        return _to_int(_float_in(bits, at_name, ftz), ptx_type(dt_name), INT_ROUNDINGS[rnd], src_fmt)
    opts = dict(sat=".sat" in mods, relu=".relu" in mods, satfinite=".satfinite" in mods,
                ftz=ftz and dst_fmt == "f32")
    if src_fmt is None:                                     # int -> float
        hi, lo = _int_exact_pair(bits, ptx_type(at_name))
        return encode(hi, dst_fmt, fmt_mode or "rn", lo=lo, **opts)
    vals = _float_in(bits, at_name, ftz)                    # float -> float
    int_rnd = _one("cvt", mods, types, INT_ROUNDINGS)
    if int_rnd is not None:
        vals = INT_ROUNDINGS[int_rnd](vals)                 # integral value, same format
        fmt_mode = "rn"
    return encode(vals, dst_fmt, fmt_mode or "rn", **opts)


def _lane_bits(bits, fmt, lanes):
    w = CONTAINER_BITS[fmt] if fmt not in ("e2m1",) else 4
    b = np.asarray(bits).astype(np.uint64)
    return [(b >> np.uint64(w * i)) & np.uint64((1 << w) - 1) for i in range(lanes)], w


def _pack_lanes(parts, w, total_bits):
    word = np.zeros(np.shape(parts[0]), np.uint64)
    for i, p in enumerate(parts):
        word |= (np.asarray(p).astype(np.uint64) & np.uint64((1 << w) - 1)) << np.uint64(w * i)
    return word.astype(UINT[max(total_bits, 8)])


PACK_TYPES = {".u2": (0, 3), ".s2": (-2, 1), ".u4": (0, 15), ".s4": (-8, 7), ".u8": (0, 255),
              ".s8": (-128, 127), ".u16": (0, 65535), ".s16": (-32768, 32767)}


def cvt_pack(mods, types, a, b, c=None):
    """cvt.pack.sat.{u16,s16}.s32 d, a, b and cvt.pack.sat.{u2..s8}.s32.b32 d, a, b, c: a and b
    saturated to the narrow type, b in the low field, a above it, then c's low bits above both."""
    narrow = [m for m in mods if m in PACK_TYPES and m not in (".s32",)]
    accept("cvt", mods, types, {".pack", ".sat", *PACK_TYPES})
    if len(narrow) != 1 or ".sat" not in mods:
        refuse("cvt", mods, types, "cvt.pack needs .sat and one narrow type")
    lo, hi = PACK_TYPES[narrow[0]]
    size = int(narrow[0][2:])
    field = np.uint64((1 << size) - 1)
    sa, sb = (np.clip(signed_view(np.asarray(x).astype(np.uint32), 32), lo, hi).astype(np.uint64) & field
              for x in (a, b))
    word = sb | (sa << np.uint64(size))
    if size < 16:
        if c is None:
            refuse("cvt", mods, types, "the narrow cvt.pack forms take c")
        word |= (np.asarray(c).astype(np.uint64) << np.uint64(2 * size)) & np.uint64(0xFFFFFFFF)
    return to_bits(word, 32)


F16X2_RN = frozenset({".rn", ".f16x2", ".f32"})       # the epilogue form of every f16 GEMM


def _f16x2_rn(a, b):
    """cvt.rn.f16x2.f32 d, a, b as the general path computes it (f32 -> f64 -> numpy's
    nearest-even f16 cast, NaN -> 0x7fff; b in the low half), without its per-call decoding."""
    halves = []
    for src in (b, a):
        v = np.asarray(src).astype(np.uint32, copy=False).view(np.float32).astype(np.float64)
        bits = v.astype(np.float16).view(np.uint16)
        halves.append(np.where(np.isnan(v), np.uint16(0x7FFF), bits).astype(np.uint32))
    return halves[0] | (halves[1] << np.uint32(16))


@handles("cvt", None)
def cvt(mods, types, *srcs):
    if mods == F16X2_RN and len(srcs) == 2:
        with np.errstate(all="ignore"):
            return _f16x2_rn(*srcs)
    if ".pack" in mods:
        return cvt_pack(mods, types, *srcs)
    accept("cvt", mods, types, MODIFIERS)
    if len(types) != 2:
        refuse("cvt", mods, types, "needs a destination and a source type")
    dt, at = types
    if format_of(dt) is None and format_of(at) is None and len(srcs) == 1:
        return _convert_scalar(mods, types, dt, at, srcs[0], None)      # integers: no float warnings
    with np.errstate(all="ignore"):
        return _convert_float(mods, types, dt, at, srcs)


def _convert_float(mods, types, dt, at, srcs):
    if ".rs" in mods:
        return stochastic(mods, types, srcs)
    fmt_mode = FLOAT_ROUNDINGS.get(_one("cvt", mods, types, FLOAT_ROUNDINGS))
    d_lanes, a_lanes = lanes_of(dt), lanes_of(at)
    d_fmt, a_fmt = format_of(dt), format_of(at)
    def lane_width(f):
        return 4 if f == "e2m1" else CONTAINER_BITS[f]

    if d_lanes > 1 and a_lanes == 1:                        # cvt.rn.f16x2.f32 d, a, b
        if len(srcs) != d_lanes:
            refuse("cvt", mods, types, f"a {dt} destination takes {d_lanes} sources")
        parts = [_convert_scalar(mods, types, "." + d_fmt, at, s, fmt_mode) for s in reversed(srcs)]
        if d_fmt == "e2m1":
            parts = [p & np.uint8(0xF) for p in parts]
        return _pack_lanes(parts, lane_width(d_fmt), lane_width(d_fmt) * d_lanes)
    if a_lanes > 1:                                         # cvt.rn.f16x2.e4m3x2 d, a
        if d_lanes != a_lanes:
            refuse("cvt", mods, types, "packed source and destination differ in lanes")
        lanes, _ = _lane_bits(srcs[0], a_fmt, a_lanes)
        if a_fmt == "e2m1":
            lanes = [_widen_e2m1(x) for x in lanes]
        parts = [_convert_scalar(mods, types, "." + d_fmt, "." + a_fmt, x, fmt_mode) for x in lanes]
        return _pack_lanes(parts, lane_width(d_fmt), lane_width(d_fmt) * d_lanes)
    if len(srcs) != 1:
        refuse("cvt", mods, types, "a scalar conversion takes one source")
    return _convert_scalar(mods, types, dt, at, srcs[0], fmt_mode)


def _widen_e2m1(nibbles):
    """e2m1 lanes are 4 bits; formats.decode reads them from the low nibble of a byte."""
    return nibbles.astype(np.uint8)


# -- .rs: stochastic rounding with the caller's random bits (cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32)

# destination -> (bits the f32 pattern drops, random bits per operand taken from each half of rbits)
RS_FORMS = {".bf16x2": ("bf16", 16, 0xFFFF), ".f16x2": ("f16", 13, 0x1FFF)}


def stochastic(mods, types, srcs):
    """Truncate toward zero, then add one ulp of magnitude when the random bits plus the dropped
    bits carry out (ISA cvt .rs). rbits: a's bits in the upper half, b's in the lower half. The
    f16 form is exact only where the f32 input lands in f16's normal range (13 bits dropped);
    other lanes are refused."""
    dt, at = types
    if dt not in RS_FORMS or at != ".f32" or len(srcs) != 3:
        refuse("cvt", mods, types, ".rs is emulated for cvt.rs.{f16x2,bf16x2}.f32 d, a, b, rbits only")
    fmt, dropped, rmask = RS_FORMS[dt]
    rbits = np.asarray(srcs[2]).astype(np.uint64)
    lanes = []
    for x, r in ((srcs[1], rbits & np.uint64(0xFFFF)), (srcs[0], rbits >> np.uint64(16))):
        bits = np.asarray(x).astype(np.uint32)
        vals = decode(bits, "f32")
        finite = np.isfinite(vals)
        if fmt == "f16" and np.any(finite & (vals != 0) & ((np.abs(vals) < 2.0 ** -14) | (np.abs(vals) >= 2.0 ** 16))):
            refuse("cvt", mods, types, ".rs into f16 outside its normal range (the dropped-bit count changes)")
        low = bits.astype(np.uint64) & np.uint64((1 << dropped) - 1)
        carry = ((low + (r & np.uint64(rmask))) >> np.uint64(dropped)) & np.uint64(1)
        truncated = encode(vals, fmt, "rz").astype(np.uint64)
        out = np.where(finite & (vals != 0), truncated + carry, truncated)     # sign-magnitude: +1 ulp
        rounded = decode(out.astype(np.uint16), fmt)
        lanes.append(encode(rounded, fmt, "rn", relu=".relu" in mods, satfinite=".satfinite" in mods))
    return (lanes[0].astype(np.uint32) | (lanes[1].astype(np.uint32) << np.uint32(16)))
