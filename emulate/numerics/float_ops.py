"""Float arithmetic on f64/f32/f16/bf16 with every rounding mode, .ftz, .sat and .relu: add sub mul
fma mad div sqrt rcp, min/max (.NaN, .xorsign.abs), abs neg copysign testp — PTX ISA 9.7.3/9.7.4.

Exact results come as f64 pairs (see rounding.py) and are rounded once to the destination; .ftz
flushes subnormal inputs, and results that are subnormal after rounding. NaN results: the ISA
gives single precision "an unspecified NaN"; here f32 gives 0x7fffffff and f16/bf16 0x7fff (what
the hardware writes). f64 NaN payloads are propagated (the ISA supports them) the way numpy's
x86 arithmetic does: the first NaN operand, quieted; a new NaN is 0xfff8000000000000.
"""

from __future__ import annotations

import numpy as np

from .errors import accept, refuse
from .floatbits import SCALAR_FLOATS, decode, encode, flush, fmt_of, relu, saturate
from .registry import handles
from .rounding import (
    FORMATS,
    FloatFormat,
    clamp_overflow_f64,
    fma_nearest_f64,
    fraction_pairs,
    round_pair,
    two_prod,
    two_prod_exact,
    two_sum,
)

ROUNDINGS = {".rn": "rn", ".rz": "rz", ".rm": "rm", ".rp": "rp"}


def rounding_of(opcode, mods, types, default="rn"):
    found = [ROUNDINGS[m] for m in mods if m in ROUNDINGS]
    if len(found) > 1:
        refuse(opcode, mods, types, "more than one rounding modifier")
    return found[0] if found else default


FTZ_FORMATS = ("f32", "f16")


def source_formats(opcode, types, count):
    """Formats of the sources: all the destination's, or for the mixed-precision forms
    (`add.f32.f16 d, a, c`, `fma.rn.f32.bf16 d, a, b, c`) the narrow type for all but the last."""
    fmt = fmt_of(types[0])
    if len(types) == 1:
        return fmt, [fmt] * count
    narrow = fmt_of(types[1])
    if fmt != "f32" or narrow not in ("f16", "bf16") or opcode not in ("add", "sub", "fma", "mul"):
        return fmt, None
    return fmt, [narrow] * (count - 1) + ["f32"]


def _setup(opcode, mods, types, allowed, srcs):
    accept(opcode, mods, types, allowed | set(ROUNDINGS))
    fmt, src_fmts = source_formats(opcode, types, len(srcs))
    if fmt not in SCALAR_FLOATS or src_fmts is None:
        refuse(opcode, mods, types, "not a float form")
    ftz = ".ftz" in mods
    if ftz and fmt not in FTZ_FORMATS:
        refuse(opcode, mods, types, ".ftz is defined for .f32 and .f16 only")
    vals = [decode(s, f, ftz and f in FTZ_FORMATS) for s, f in zip(srcs, src_fmts)]
    return fmt, ftz, rounding_of(opcode, mods, types), vals


def _finish(vals, fmt, ftz, mods):
    if ".sat" in mods:
        vals = saturate(vals)
    if ".relu" in mods:
        vals = relu(vals)
    return encode(vals, fmt, ftz, canonical_nan=(fmt != "f64"))


# -- the exact pairs of each operation -------------------------------------------------------------

def _f64_lanes_exact(hi, lo, ok, fn, *args):
    """Replace the lanes where the fast pair is not exact by the Fraction fallback."""
    redo = ~ok & np.logical_and.reduce([np.isfinite(a) for a in args])
    if np.any(redo):
        h, low = fraction_pairs(fn, *(a[redo] for a in args))
        hi, lo = hi.copy(), lo.copy()
        hi[redo], lo[redo] = h, low
    return hi, lo


def pair_add(a, b, fmt):
    hi, lo = two_sum(a, b)
    ok = np.isfinite(hi)
    if fmt == "f64":
        hi, lo = _f64_lanes_exact(hi, lo, ok, lambda x, y: x + y, a, b)
    return hi, np.where(ok, lo, 0.0)


def pair_mul(a, b, fmt):
    if fmt != "f64":
        return a * b, np.zeros_like(a)           # a 24x24-bit product is exact in f64
    hi, lo = two_prod(a, b)
    return _f64_lanes_exact(hi, np.where(np.isfinite(lo), lo, 0.0), two_prod_exact(a, b),
                            lambda x, y: x * y, a, b)


def pair_fma(a, b, c, fmt):
    if fmt != "f64":
        p = a * b                               # exact
        hi, lo = two_sum(p, c)
        return hi, np.where(np.isfinite(hi), lo, 0.0)
    hi, ok = fma_nearest_f64(a, b, c)
    return _f64_lanes_exact(hi, np.zeros_like(a), ok, lambda x, y, z: x * y + z, a, b, c)


def pair_fma_f64_directed(a, b, c):
    """Directed f64 fma needs the remainder's sign: exact per lane (Fraction), not vectorised."""
    return _f64_lanes_exact(a * b + c, np.zeros_like(a), np.zeros(a.shape, bool),
                            lambda x, y, z: x * y + z, a, b, c)


def pair_div(a, b, fmt):
    q = a / b
    p, e = two_prod(q, b)
    ok = np.isfinite(q) & (q != 0) & two_prod_exact(q, b)
    resid = (a - p) - e                          # exact sign: a - p is exact (Sterbenz)
    lo = np.where(ok, resid * np.sign(b), 0.0)
    if fmt == "f64":
        redo = ~ok & np.isfinite(a) & np.isfinite(b) & (b != 0) & (a != 0)
        if np.any(redo):
            h, low = fraction_pairs(lambda x, y: x / y, a[redo], b[redo])
            q, lo = q.copy(), lo.copy()
            q[redo], lo[redo] = h, low
    return q, lo


def pair_sqrt(a, fmt):
    s = np.sqrt(np.where(a < 0, np.nan, a))
    p, e = two_prod(s, s)
    ok = np.isfinite(s) & (s > 0) & two_prod_exact(s, s)
    lo = np.where(ok, (a - p) - e, 0.0)
    if fmt == "f64":
        redo = ~ok & np.isfinite(s) & (s > 0)
        if np.any(redo):
            lo = lo.copy()
            lo[redo] = [_sqrt_rest_sign(x, y) for x, y in zip(a[redo].tolist(), s[redo].tolist())]
    return s, lo


def nearest_pair(pair, *args, fmt, mode):
    """Round-to-nearest division and square root into f32/f16/bf16 need no remainder: rounding the
    f64 result again is exact, since 53 >= 2p + 2 (Figueroa's double-rounding theorem)."""
    if mode != "rn" or fmt == "f64":
        return pair(*args, fmt)
    if pair is pair_div:
        hi = args[0] / args[1]
    else:
        hi = np.sqrt(np.where(args[0] < 0, np.nan, args[0]))
    return hi, np.zeros_like(hi)


def _sqrt_rest_sign(a, s):
    from fractions import Fraction
    d = Fraction(a) - Fraction(s) ** 2
    return float((d > 0) - (d < 0))


def _round(hi, lo, fmt, mode, overflow_inputs_finite=None):
    out = round_pair(hi, lo, FORMATS[fmt], mode)
    if fmt == "f64" and overflow_inputs_finite is not None:
        out = clamp_overflow_f64(out, np.isinf(hi) & overflow_inputs_finite, mode)
    return out


def _zero_sign(out, mode, *addends):
    """An exact zero sum is +0 except -0 + -0, and -0 in every case under .rm (IEEE 754)."""
    all_neg_zero = np.logical_and.reduce([(x == 0) & np.signbit(x) for x in addends])
    all_pos_zero = np.logical_and.reduce([(x == 0) & ~np.signbit(x) for x in addends])
    zero = out == 0
    if mode == "rm":
        return np.where(zero & ~all_pos_zero, -0.0, out)
    return np.where(zero & all_neg_zero, -0.0, out)


def _exact_zero(hi, lo):
    return (hi == 0) & (lo == 0)


# -- handlers ----------------------------------------------------------------------------------------

# -- fast paths: f32 round-to-nearest in numpy's own f32 arithmetic (IEEE, one rounding) ---------

_FAST_MODS = {".rn", ".ftz", ".f32"}
_F32_TINY = np.float32(2.0 ** -126)


def _fast_f32(mods, types):
    return types == (".f32",) and mods <= _FAST_MODS


def _f32_in(bits, ftz):
    x = np.asarray(bits).astype(np.uint32, copy=False).view(np.float32)
    return np.where(np.abs(x) < _F32_TINY, np.copysign(np.float32(0), x), x) if ftz else x


def _f32_out(r, ftz):
    if ftz:
        r = np.where(np.abs(r) < _F32_TINY, np.copysign(np.float32(0), r), r)
    return np.where(np.isnan(r), np.uint32(0x7FFFFFFF), r.view(np.uint32))


def _fma_f32_nearest(x, y, z):
    """RN_f32(x*y + z): the f64 sum is exact-or-nearest; only lanes that land on an f32 midpoint
    (or below the normal range, where the grid is coarser) need the exact pair."""
    p = x.astype(np.float64) * y.astype(np.float64)
    s = p + z.astype(np.float64)
    r = s.astype(np.float32)
    tail = s.view(np.uint64) & np.uint64((1 << 29) - 1)
    redo = (tail == np.uint64(1 << 28)) | ((np.abs(s) < 2.0 ** -126) & (s != 0))   # s == 0 is exact
    if np.any(redo):
        hi, lo = two_sum(p[redo], z[redo].astype(np.float64))
        out = round_pair(hi, np.where(np.isfinite(hi), lo, 0.0), FORMATS["f32"], "rn")
        out = np.where((hi == 0) & (lo == 0), _zero_sign(out, "rn", p[redo], z[redo].astype(np.float64)), out)
        r = r.copy()
        r[redo] = out.astype(np.float32)
    return r


_FAST_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def _fast_f64(mods, types):
    return types == (".f64",) and mods <= {".rn", ".f64"}


def _f64_in(bits):
    return np.asarray(bits).astype(np.uint64, copy=False).view(np.float64)


def _fma_f64_nearest(x, y, z):
    r, ok = fma_nearest_f64(x, y, z)
    special = ~(np.isfinite(x) & np.isfinite(y) & np.isfinite(z))
    if np.any(special):       # the error-free transforms give NaN on inf (inf - inf): IEEE's specials
        with np.errstate(invalid="ignore", over="ignore"):
            plain = np.where(np.isfinite(x) & np.isfinite(y), z, x * y + z)   # finite product + inf = inf
        r = np.where(special, plain, r)
    redo = ~ok & ~special
    if np.any(redo):
        r = r.copy()
        r[redo] = fraction_pairs(lambda p, q, t: p * q + t, x[redo], y[redo], z[redo])[0]
    zero = (r == 0) & ~special        # the rational lanes too (a product that two_prod cannot split)
    if np.any(zero):                              # exact zeros: the IEEE sign of a zero sum
        r = np.where(zero, _zero_sign(r, "rn", x * y, z), r)
    return r


def _addsub(opcode, negate_b):
    def handler(mods, types, a, b):
        if _fast_f32(mods, types):
            ftz = ".ftz" in mods
            return _f32_out(_FAST_BINARY[opcode](_f32_in(a, ftz), _f32_in(b, ftz)), ftz)
        if _fast_f64(mods, types):
            return _FAST_BINARY[opcode](_f64_in(a), _f64_in(b)).view(np.uint64)
        fmt, ftz, mode, (x, y) = _setup(opcode, mods, types, {".ftz", ".sat"}, (a, b))
        if negate_b:
            y = -y
        hi, lo = pair_add(x, y, fmt)
        out = _round(hi, lo, fmt, mode, np.isfinite(x) & np.isfinite(y))
        out = np.where(_exact_zero(hi, lo), _zero_sign(out, mode, x, y), out)
        return _finish(out, fmt, ftz, mods)
    return handler


handles("add", "float", quiet=True)(_addsub("add", False))
handles("sub", "float", quiet=True)(_addsub("sub", True))


@handles("mul", "float", quiet=True)
def mul(mods, types, a, b):
    if _fast_f32(mods, types):
        ftz = ".ftz" in mods
        return _f32_out(_f32_in(a, ftz) * _f32_in(b, ftz), ftz)
    if _fast_f64(mods, types):
        return (_f64_in(a) * _f64_in(b)).view(np.uint64)
    fmt, ftz, mode, (x, y) = _setup("mul", mods, types, {".ftz", ".sat"}, (a, b))
    hi, lo = pair_mul(x, y, fmt)
    return _finish(_round(hi, lo, fmt, mode, np.isfinite(x) & np.isfinite(y)), fmt, ftz, mods)


def _fma(opcode):
    def handler(mods, types, a, b, c):
        if _fast_f32(mods, types) and (opcode == "fma" or ".rn" in mods):
            ftz = ".ftz" in mods
            return _f32_out(_fma_f32_nearest(_f32_in(a, ftz), _f32_in(b, ftz), _f32_in(c, ftz)), ftz)
        if _fast_f64(mods, types):
            return _fma_f64_nearest(_f64_in(a), _f64_in(b), _f64_in(c)).view(np.uint64)
        fmt, ftz, mode, (x, y, z) = _setup(opcode, mods, types, {".ftz", ".sat", ".relu"}, (a, b, c))
        if opcode == "mad" and not any(m in mods for m in ROUNDINGS) and fmt == "f64":
            refuse(opcode, mods, types, "mad.f64 needs a rounding modifier")
        if fmt == "f64" and mode != "rn":
            hi, lo = pair_fma_f64_directed(x, y, z)
        else:
            hi, lo = pair_fma(x, y, z, fmt)
        out = _round(hi, lo, fmt, mode, np.isfinite(x) & np.isfinite(y) & np.isfinite(z))
        out = np.where(_exact_zero(hi, lo), _zero_sign(out, mode, x * y, z), out)
        return _finish(out, fmt, ftz, mods)
    return handler


handles("fma", "float", quiet=True)(_fma("fma"))
handles("mad", "float", quiet=True)(_fma("mad"))


@handles("div", "float", quiet=True)
def div(mods, types, a, b):
    fmt, ftz, mode, (x, y) = _setup("div", mods, types, {".ftz", ".approx", ".full"}, (a, b))
    if ".approx" in mods or ".full" in mods:
        if fmt != "f32" or any(m in mods for m in ROUNDINGS):
            refuse("div", mods, types, ".approx/.full are f32 forms without a rounding modifier")
        return _finish(div_approx(x, y, ftz, full=".full" in mods), fmt, ftz, mods)
    if fmt == "f32" and not any(m in mods for m in ROUNDINGS):
        refuse("div", mods, types, "div.f32 needs .approx, .full or a rounding modifier")
    hi, lo = nearest_pair(pair_div, x, y, fmt=fmt, mode=mode)
    return _finish(_round(hi, lo, fmt, mode, np.isfinite(x) & np.isfinite(y) & (y != 0)), fmt, ftz, mods)


def div_approx(x, y, ftz, full):
    """div.full.f32 (ISA: max 2 ulp) as the correctly rounded quotient; div.approx.f32 (ISA: max 2
    ulp for |y| in [2^-126, 2^126], else 0 for |y| in (2^126, 2^128)) as x * rcp(y), both rounded."""
    if full:
        hi, lo = nearest_pair(pair_div, x, y, fmt="f32", mode="rn")
        return round_pair(hi, lo, FORMATS["f32"], "rn")
    r = _to_f32(1.0 / y)
    r = np.where((np.abs(y) > 2.0 ** 126) & np.isfinite(y), np.copysign(0.0, y), r)
    return _to_f32(x * r)


def _to_f32(v):
    """Round-to-nearest f32 of f64 values (numpy's cast is correctly rounded)."""
    return np.asarray(v, np.float64).astype(np.float32).astype(np.float64)


@handles("sqrt", "float", quiet=True)
def sqrt(mods, types, a):
    fmt, ftz, mode, (x,) = _setup("sqrt", mods, types, {".ftz", ".approx"}, (a,))
    if ".approx" in mods:
        if fmt != "f32":
            refuse("sqrt", mods, types, ".approx is an f32 form")
        # ISA bound: max relative error 2^-23 (sqrt.approx.f32); this returns the rounded root.
        return _finish(_to_f32(np.sqrt(np.where(x < 0, np.nan, x))), fmt, ftz, mods)
    if not any(m in mods for m in ROUNDINGS):
        refuse("sqrt", mods, types, "needs .approx or a rounding modifier")
    hi, lo = nearest_pair(pair_sqrt, x, fmt=fmt, mode=mode)
    out = _round(hi, lo, fmt, mode)
    return _finish(np.where(x == 0, x, out), fmt, ftz, mods)       # sqrt(-0) = -0


# rcp.approx.ftz.f64's seed: the ISA computes it from the top 32 bits of a and leaves the low 32
# bits of d zero, i.e. an f64 with a 20-bit fraction.
RCP_SEED = FloatFormat("rcp_seed_f64", 11, 20)


@handles("rcp", "float", quiet=True)
def rcp(mods, types, a):
    if types == (".f64",) and mods >= {".approx", ".ftz"}:
        return rcp_approx_f64(mods, types, a)
    fmt, ftz, mode, (x,) = _setup("rcp", mods, types, {".ftz", ".approx"}, (a,))
    if ".approx" in mods:
        # ISA bound: max 1 ulp (rcp.approx.f32); the correctly rounded reciprocal is within it.
        if fmt != "f32":
            refuse("rcp", mods, types, "only rcp.approx.f32 and rcp.approx.ftz.f64")
        return _finish(_to_f32(1.0 / x), fmt, ftz, mods)
    if not any(m in mods for m in ROUNDINGS):
        refuse("rcp", mods, types, "needs .approx or a rounding modifier")
    hi, lo = nearest_pair(pair_div, np.ones_like(x), x, fmt=fmt, mode=mode)
    return _finish(_round(hi, lo, fmt, mode, x != 0), fmt, ftz, mods)


def rcp_approx_f64(mods, types, a):
    accept("rcp", mods, types, {".approx", ".ftz"})
    return approx_seed_f64(lambda x: 1.0 / x, a)


def approx_seed_f64(fn, a):
    """rcp/rsqrt.approx.ftz.f64: fn of (a with its low 32 bits dropped), rounded to a 20-bit
    fraction (the low 32 bits of d zero); subnormal inputs and results flushed; NaN -> the ISA's
    0x7fffffff00000000. Not bit-exact to the hardware's table: within 1 ulp of the 20-bit seed."""
    top = np.asarray(a).astype(np.uint64) & np.uint64(0xFFFFFFFF00000000)
    x = flush(top.view(np.float64), "f64")
    seed = flush(round_pair(fn(x), 0.0, RCP_SEED, "rn"), "f64")
    out = encode(seed, "f64", canonical_nan=False)
    return np.where(np.isnan(seed), SEED_NAN, out).astype(np.uint64)


SEED_NAN = np.uint64(0x7FFFFFFF00000000)     # the ISA's NaN for rcp/rsqrt.approx.ftz.f64


# -- sign and magnitude -----------------------------------------------------------------------------

CANONICAL_NANS = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF}
_SIGN = {"f32": np.uint32(0x80000000), "f64": np.uint64(0x8000000000000000), "f16": np.uint16(0x8000),
         "bf16": np.uint16(0x8000)}


def _bit_view(opcode, mods, types, a, allowed=frozenset({".ftz"})):
    accept(opcode, mods, types, allowed)
    fmt = fmt_of(types[0])
    if fmt not in _SIGN:
        refuse(opcode, mods, types, "not an f32/f64 form")
    if ".ftz" in mods and fmt not in FTZ_FORMATS:
        refuse(opcode, mods, types, ".ftz is defined for .f32 and .f16 only")
    bits = np.asarray(a).astype(_SIGN[fmt].dtype)
    if ".ftz" in mods:
        bits = encode(decode(bits, fmt, True), fmt, canonical_nan=False)
    return fmt, bits


def _sign_op(fmt, bits, result):
    """abs/neg: the sign bit changes; a NaN input gives the canonical NaN for f32/f16/bf16 (the ISA
    leaves it unspecified) and passes through unchanged for f64 (the ISA's rule for abs.f64)."""
    nan = np.isnan(decode(bits, fmt))
    keep = bits if fmt == "f64" else np.asarray(CANONICAL_NANS[fmt], bits.dtype)
    return np.where(nan, keep, result).astype(bits.dtype)


@handles("abs", "float", quiet=True)
def abs_(mods, types, a):
    fmt, bits = _bit_view("abs", mods, types, a)
    return _sign_op(fmt, bits, bits & ~_SIGN[fmt])


@handles("neg", "float", quiet=True)
def neg(mods, types, a):
    fmt, bits = _bit_view("neg", mods, types, a)
    return _sign_op(fmt, bits, bits ^ _SIGN[fmt])


@handles("copysign", "float", quiet=True)
def copysign(mods, types, a, b):
    """copysign d, a, b: b's magnitude with a's sign."""
    fmt, sign_src = _bit_view("copysign", mods, types, a, frozenset())
    _, mag_src = _bit_view("copysign", mods, types, b, frozenset())
    return (mag_src & ~_SIGN[fmt]) | (sign_src & _SIGN[fmt])


# -- min / max -------------------------------------------------------------------------------------

def _min_max(opcode, mods, types, srcs):
    fmt, ftz, _, vals = _setup(opcode, mods, types, {".ftz", ".NaN", ".xorsign.abs", ".xorsign", ".abs",
                                                     ".relu"}, srcs)
    if any(m in mods for m in ROUNDINGS):
        refuse(opcode, mods, types, "min/max take no rounding modifier")
    xorsign = ".xorsign.abs" in mods or ".xorsign" in mods
    if xorsign:
        sign = np.logical_xor.reduce([np.signbit(v) for v in vals])
        vals = [np.abs(v) for v in vals]
    out = vals[0]
    any_nan = np.isnan(out)
    for v in vals[1:]:
        out = _pick(opcode, out, v)
        any_nan = any_nan | np.isnan(v)
    if ".NaN" in mods:
        out = np.where(any_nan, np.nan, out)
    if xorsign:
        out = np.where(np.isnan(out), out, np.copysign(out, np.where(sign, -1.0, 1.0)))
    if ".relu" in mods:
        out = relu(out)
    return encode(out, fmt, ftz, canonical_nan=True)


def _pick(opcode, x, y):
    """IEEE minNum/maxNum with -0 < +0: a NaN operand yields the other one, two NaNs a NaN."""
    smaller = (x < y) | ((x == y) & np.signbit(x) & ~np.signbit(y))
    take_x = smaller if opcode == "min" else ((x > y) | ((x == y) & ~np.signbit(x) & np.signbit(y)))
    take_x = take_x | (np.isnan(y) & ~np.isnan(x)) | ((x == y) & (np.signbit(x) == np.signbit(y)))
    return np.where(take_x, x, y)


@handles("min", "float", quiet=True)
def min_(mods, types, *srcs):
    return _min_max("min", mods, types, srcs)


@handles("max", "float", quiet=True)
def max_(mods, types, *srcs):
    return _min_max("max", mods, types, srcs)


# -- testp ------------------------------------------------------------------------------------------

_TESTS = {
    ".finite": np.isfinite,
    ".infinite": np.isinf,
    ".number": lambda v: ~np.isnan(v),
    ".notanumber": np.isnan,
    ".normal": lambda v, t: np.isfinite(v) & ((np.abs(v) >= t) | (v == 0)),   # ISA: zeros are normal
    ".subnormal": lambda v, t: (v != 0) & (np.abs(v) < t),
}


@handles("testp", "float", quiet=True)
def testp(mods, types, a):
    accept("testp", mods, types, set(_TESTS))
    fmt = fmt_of(types[0])
    tests = [m for m in mods if m in _TESTS]
    if len(tests) != 1 or fmt not in ("f32", "f64"):
        refuse("testp", mods, types, "needs exactly one test on .f32/.f64")
    v = decode(a, fmt)
    smallest = 2.0 ** -126 if fmt == "f32" else 2.0 ** -1022
    test = tests[0]
    return _TESTS[test](v, smallest) if test in (".normal", ".subnormal") else _TESTS[test](v)
