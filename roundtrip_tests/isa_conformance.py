"""The ISA conformance suite's cases: one small kernel per instruction form of
docs/emulate_coverage.md, run THROUGH PTX on the engine (operands loaded from memory into
registers of the operand's width, or written as immediates), each thread one case, and an
expected result computed here without emulate: Python integers for integer forms, exact rationals
(numerics_ref.round_fraction) for rounded float forms, float64 libm within the ISA's bound for
.approx forms, the ISA's tables for prmt/bfe/bfi/bmsk/shf/cvt packing.

A Form names its source types, destination type, reference and cases; `kernel()` writes the
PTX, `expected()` the reference, `check()` compares. Where the ISA leaves a result unspecified
(a NaN's payload, the sign of min/max of +0 and -0, integer division by zero, INT_MIN / -1) the
case is left out or only the specified part is compared.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from numerics_ref import round_fraction

HEAD = ".version 8.6\n.target sm_100a\n.address_size 64\n"
RNG_SEED = 37
INT_TYPES = {f".{k}{w}": (w, k == "s") for k in "sub" for w in (8, 16, 32, 64)}
FLOAT_FMT = {".f16": "f16", ".bf16": "bf16", ".f32": "f32", ".f64": "f64"}
FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
PACKED = {".f32x2": (".f32", 2), ".bf16x2": (".bf16", 2), ".f16x2": (".f16", 2)}


def bits_of(t: str) -> int:
    if t == ".pred":
        return 1
    if t in PACKED:
        base, n = PACKED[t]
        return bits_of(base) * n
    if t in FLOAT_FMT:
        return FLOAT_BITS[FLOAT_FMT[t]]
    return INT_TYPES[t][0]


def reg_bits(t: str) -> int:
    """The register width holding an operand of type t (8-bit operands live in 16-bit registers)."""
    return max(bits_of(t), 16) if t != ".pred" else 0


def mask(v: int, w: int) -> int:
    return v & ((1 << w) - 1)


def sval(v: int, w: int) -> int:
    v = mask(v, w)
    return v - (1 << w) if v >> (w - 1) else v


def ival(v: int, t: str) -> int:
    w, signed = INT_TYPES[t]
    return sval(v, w) if signed else mask(v, w)


# --- floats: bits <-> Python floats, exactly --------------------------------------------------------------
def fdec(bits: int, fmt: str) -> float:
    if fmt == "f64":
        return struct.unpack("<d", struct.pack("<Q", mask(bits, 64)))[0]
    if fmt == "f32":
        return struct.unpack("<f", struct.pack("<I", mask(bits, 32)))[0]
    if fmt == "bf16":
        return struct.unpack("<f", struct.pack("<I", mask(bits, 16) << 16))[0]
    return float(np.array([mask(bits, 16)], np.uint16).view(np.float16)[0])


def fenc(x: float, fmt: str) -> int:
    """Bits of a value the format represents exactly (or inf/NaN)."""
    if math.isnan(x):
        return {"f64": 0x7FF8000000000000, "f32": 0x7FFFFFFF, "bf16": 0x7FFF, "f16": 0x7FFF}[fmt]
    if fmt == "f64":
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    if fmt == "f32":
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if fmt == "bf16":
        return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
    return int(np.array([x], np.float16).view(np.uint16)[0])


TINY = {"f16": 2.0 ** -14, "bf16": 2.0 ** -126, "f32": 2.0 ** -126, "f64": 2.0 ** -1022}


def flush(x: float, fmt: str) -> float:
    """.ftz: a subnormal becomes a zero of the same sign."""
    return math.copysign(0.0, x) if math.isfinite(x) and abs(x) < TINY[fmt] else x


def rnd(q, fmt: str, mode: str, zero_sign: float = 1.0) -> float:
    """An exact Fraction rounded once (mode rn/rz/rm/rp/rna); exact zero gets zero_sign."""
    if isinstance(q, float):
        return q
    if q == 0:
        return math.copysign(0.0, zero_sign)
    return round_fraction(q, fmt, mode)


def _sum_zero_sign(x: float, y: float, mode: str) -> float:
    """IEEE 754 6.3: an exact zero sum is -0 in rm, +0 otherwise, unless both addends are zeros of one sign."""
    if x == 0 and y == 0 and math.copysign(1, x) == math.copysign(1, y):
        return x
    return -1.0 if mode == "rm" else 1.0


def f_add(x, y, mode):
    if not (math.isfinite(x) and math.isfinite(y)):
        return x + y
    return rnd(Fraction(x) + Fraction(y), _fmt, mode, _sum_zero_sign(x, y, mode))


def f_mul(x, y, mode):
    if not (math.isfinite(x) and math.isfinite(y)):
        return f_mul_special(x, y)
    return rnd(Fraction(x) * Fraction(y), _fmt, mode, math.copysign(1, x) * math.copysign(1, y))


def f_fma(x, y, z, mode):
    if not all(map(math.isfinite, (x, y, z))):
        if math.isfinite(x) and math.isfinite(y):
            return z                                   # a finite product plus inf/NaN
        return f_mul_special(x, y) + z
    p = Fraction(x) * Fraction(y)
    if p == 0:       # a zero product keeps its sign, then adds as a zero addend
        zs = _sum_zero_sign(math.copysign(0.0, math.copysign(1, x) * math.copysign(1, y)), z, mode)
    else:
        zs = -1.0 if mode == "rm" else 1.0
    return rnd(p + Fraction(z), _fmt, mode, zs)


def f_mul_special(x, y):
    """x * y where one is inf or NaN."""
    if (x == 0 and math.isinf(y)) or (y == 0 and math.isinf(x)):
        return math.nan
    return x * y


def f_div(x, y, mode):
    if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0) or (math.isinf(x) and math.isinf(y)):
        return math.nan
    s = math.copysign(1, x) * math.copysign(1, y)
    if math.isinf(x) or y == 0:
        return math.copysign(math.inf, s)
    if math.isinf(y):
        return math.copysign(0.0, s)
    return rnd(Fraction(x) / Fraction(y), _fmt, mode, s)


def f_sqrt(x, mode):
    if math.isnan(x) or x < 0:
        return math.nan
    if math.isinf(x) or x == 0:
        return x
    q = Fraction(x)
    # the root to 80 bits past the format's precision, with a sticky bit: rounding it is exact rounding
    scale = 2 ** 1200
    n = q.numerator * scale * scale // q.denominator
    r = math.isqrt(n)
    sticky = Fraction(1, 2 * scale * 2 ** 20) if r * r != n else 0
    return rnd(Fraction(r, scale) + sticky, _fmt, mode)


def f_minmax(x, y, is_max):
    if math.isnan(x):
        return y
    if math.isnan(y):
        return x
    return max(x, y) if is_max else min(x, y)


_fmt = "f32"        # the format the current form rounds to (set by Form.expected)


# --- the form table -------------------------------------------------------------------------------------
@dataclass
class Form:
    name: str                          # "add.s32"
    srcs: list                         # source types, in operand order
    dst: str                           # destination type (".pred" for setp)
    ref: object                        # f(*source bits) -> destination bits (int), or a float for check()
    cases: list = field(default_factory=list)   # tuples of source bits
    imms: list = field(default_factory=list)    # literals for source imm_pos (text, bits)
    imm_pos: int = -1
    check: str = "exact"               # exact | float:FMT | ulp:N:FMT | rel:E:FMT | pred
    pre: str = ""                      # PTX before the instruction ({s0} ... the source registers)
    post: str = ""                     # PTX after it (writes %r29 / %rd29 as an extra result)
    extra: str | None = None           # the extra result's type (carry out)
    ref_extra: object = None
    fmt: str = "f32"
    keep: object = None                # f(*source bits) -> whether the ISA specifies the case
    n_ops: int | None = None           # sources written in the instruction (the rest feed `pre`)

    @property
    def opcode(self):
        return self.name.split(".")[0]


def _reg(t: str, i: int) -> str:
    if t == ".pred":
        return f"%p{i + 1}"
    return {16: f"%h{i}", 32: f"%r{i}", 64: f"%rd{10 + i}"}[reg_bits(t)]


def _dst_reg(t: str) -> str:
    if t == ".pred":
        return "%p0"
    return {16: "%h9", 32: "%r9", 64: "%rd9"}[reg_bits(t)]


def _store(reg: str, t: str, slot: int) -> str:
    if t == ".pred":
        return f"  selp.u32 %r31, 1, 0, {reg};\n  st.global.b32 [%rd2+{8 * slot}], %r31;\n"
    return f"  st.global.b{reg_bits(t)} [%rd2+{8 * slot}], {reg};\n"


def slots(form: Form) -> int:
    return 1 + (form.extra is not None) + len(form.imms)


def kernel(form: Form) -> str:
    """Each thread loads its case's sources (8 bytes each) into registers, runs the form with
    register sources, then once per immediate with that source written as a literal, and stores
    every result (8 bytes each)."""
    n_src, n_out = len(form.srcs), slots(form)
    loads = []
    for i, t in enumerate(form.srcs):
        if t == ".pred":
            loads.append(f"  ld.global.b32 %r30, [%rd1+{8 * i}];\n  setp.ne.b32 {_reg(t, i)}, %r30, 0;\n")
        else:
            loads.append(f"  ld.global.b{reg_bits(t)} {_reg(t, i)}, [%rd1+{8 * i}];\n")
    regs = [_reg(t, i) for i, t in enumerate(form.srcs)]
    fill = {f"s{i}": r for i, r in enumerate(regs)}

    def instr(ops):
        ops = ops[:form.n_ops]
        return f"  {form.pre.format(**fill)}{form.name} {_dst_reg(form.dst)}, {', '.join(ops)};\n"
    body = instr(regs) + _store(_dst_reg(form.dst), form.dst, 0)
    if form.extra is not None:
        body += form.post + _store(_dst_reg(form.extra).replace("9", "29"), form.extra, 1)
    base = 1 + (form.extra is not None)
    for j, (text, _) in enumerate(form.imms):
        ops = list(regs)
        ops[form.imm_pos] = text
        body += instr(ops) + _store(_dst_reg(form.dst), form.dst, base + j)
    return HEAD + f""".visible .entry k(.param .u64 inp, .param .u64 out)
{{
  .reg .pred %p<8>;
  .reg .b16 %h<32>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<32>;
  ld.param.u64 %rd1, [inp];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r1, %r2, 256, %r1;
  mul.wide.u32 %rd3, %r1, {8 * n_src};
  add.s64 %rd1, %rd1, %rd3;
  mul.wide.u32 %rd3, %r1, {8 * n_out};
  add.s64 %rd2, %rd2, %rd3;
{''.join(loads)}{body}  ret;
}}
"""


def expected(form: Form) -> list[list]:
    """Per case, the expected result of each slot (int bits, a float for float checks)."""
    global _fmt
    _fmt = form.fmt
    out = []
    for case in form.cases:
        row = [form.ref(*case)]
        if form.extra is not None:
            row.append(form.ref_extra(*case))
        for _, bits in form.imms:
            c = list(case)
            c[form.imm_pos] = bits
            row.append(form.ref(*c))
        out.append(row)
    return out


def _ulps(got: float, want: float, fmt: str) -> float:
    if got == want:
        return 0.0
    e = max(math.frexp(want)[1] - 1, {"f32": -126, "f64": -1022, "f16": -14, "bf16": -126}[fmt])
    mbits = {"f32": 23, "f64": 52, "f16": 10, "bf16": 7}[fmt]
    return abs(got - want) / 2.0 ** (e - mbits)


def agrees(form: Form, got_bits: int, want) -> bool:
    kind, *arg = form.check.split(":")
    if kind == "exact":
        return mask(got_bits, bits_of(form.dst) if form.dst != ".pred" else 1) == want
    fmt = arg[-1]
    got = fdec(got_bits, fmt)
    if isinstance(want, tuple):         # packed lanes: (lane0, lane1) floats
        w = FLOAT_BITS[fmt]
        return all(_float_agrees(kind, arg, fdec(got_bits >> (w * k), fmt), x, fmt) for k, x in enumerate(want))
    return _float_agrees(kind, arg, got, want, fmt)


def _float_agrees(kind, arg, got: float, want: float, fmt: str) -> bool:
    if math.isnan(want):
        return math.isnan(got)         # the ISA leaves a NaN result's payload unspecified
    if kind == "float":
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    if kind == "floatz":               # the ISA leaves the sign of this zero open
        return got == want
    if math.isinf(want) or want == 0:
        return got == want
    if kind == "ulp":
        return _ulps(got, want, fmt) <= float(arg[0])
    return abs(got - want) <= float(arg[0]) * abs(want)          # rel


# --- source values: edges of every width and format, then seeded random bits -------------------------------
def int_edges(w: int) -> list[int]:
    h = w // 2
    return sorted({mask(v, w) for v in (0, 1, 2, 3, 7, -1, -2, -3, 1 << (w - 1), (1 << (w - 1)) - 1,
                                        (1 << (w - 1)) + 1, 0x5555555555555555, 1 << h, (1 << h) - 1, w, w + 1)})


def float_edges(fmt: str) -> list[int]:
    e, m = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}[fmt]
    w = 1 + e + m
    sign = 1 << (w - 1)
    inf = ((1 << e) - 1) << m
    one = ((1 << (e - 1)) - 1) << m
    vals = [0, sign, one, one | sign, one | (1 << (m - 1)), inf - 1, (inf - 1) | sign, 1 << m, (1 << m) | sign,
            1, 1 | sign, (1 << m) - 1, inf, inf | sign, inf | (1 << (m - 1)), one + (1 << m) + 3,
            (one - (3 << m)) | 5, ((one + (20 << m)) | 0x1F) & ((1 << w) - 1)]
    return vals


def random_bits(rng, t: str, n: int) -> list[int]:
    if t in FLOAT_FMT:
        fmt = FLOAT_FMT[t]
        x = rng.standard_normal(n) * np.exp2(rng.integers(-8, 9, n))
        return [fenc(float(_to_fmt(v, fmt)), fmt) for v in x]
    if t in PACKED:
        base, k = PACKED[t]
        w = bits_of(base)
        parts = [random_bits(rng, base, n) for _ in range(k)]
        return [sum(p[i] << (w * j) for j, p in enumerate(parts)) for i in range(n)]
    if t == ".pred":
        return [int(v) for v in rng.integers(0, 2, n)]
    w = bits_of(t)
    return [int(v) for v in rng.integers(0, 1 << min(w, 63), n, dtype=np.uint64)] if w < 64 else \
        [int(v) | (int(s) << 63) for v, s in zip(rng.integers(0, 1 << 63, n, dtype=np.uint64), rng.integers(0, 2, n))]


def _to_fmt(x: float, fmt: str) -> float:
    if fmt == "bf16":
        return fdec(fenc(float(np.float32(x)), "f32") >> 16, "bf16")
    with np.errstate(over="ignore"):        # beyond the format's range: inf, as intended
        return float({"f16": np.float16, "f32": np.float32, "f64": np.float64}[fmt](x))


def edges(t: str) -> list[int]:
    if t in FLOAT_FMT:
        return float_edges(FLOAT_FMT[t])
    if t in PACKED:
        base, _ = PACKED[t]
        w = bits_of(base)
        e = float_edges(FLOAT_FMT[base])
        return [a | (b << w) for a, b in zip(e, e[3:] + e[:3])]
    if t == ".pred":
        return [0, 1]
    return int_edges(bits_of(t))


def make_cases(srcs: list, rng, n_random=96, cap=448, keep=None) -> list[tuple]:
    """Every pair of edge values (two sources) or edges crossed with random values, then random
    cases; an 8-bit source gets random high bits in its 16-bit register (they must be ignored)."""
    import itertools

    es = [edges(t) for t in srcs]
    if len(srcs) <= 2:
        cases = list(itertools.product(*es))
    else:
        cases = [tuple(e[int(rng.integers(0, len(e)))] for e in es) for _ in range(cap // 2)]
    cases = cases[:cap - n_random]
    rand = [random_bits(rng, t, n_random) for t in srcs]
    cases += list(zip(*rand))
    cases = [tuple(v | (int(rng.integers(0, 256)) << 8) if bits_of(t) == 8 else v for v, t in zip(c, srcs))
             for c in cases]
    return [c for c in cases if keep is None or keep(*c)]


def int_imms(t: str) -> list[tuple[str, int]]:
    """Literals as written in PTX (negative and out-of-range for the type included) and their bits."""
    w = bits_of(t)
    lits = ["-1", "0", "1", "7", str((1 << (w - 1)) - 1), f"-{1 << (w - 1)}", f"0x{(1 << w) - 2:X}"]
    return [(s, mask(int(s, 0), w)) for s in lits]


def float_imms(t: str) -> list[tuple[str, int]]:
    fmt = FLOAT_FMT.get(t)
    if fmt == "f32":
        vals = [0x3F800000, 0xBFC00000, 0x7F800000, 0x00000001, 0x80000000, 0x7F7FFFFF, 0x3DCCCCCD]
        return [(f"0f{v:08X}", v) for v in vals]
    if fmt == "f64":
        vals = [0x3FF0000000000000, 0xBFF8000000000000, 0x7FF0000000000000, 1, 0x8000000000000000]
        return [(f"0d{v:016X}", v) for v in vals]
    return []        # no 16-bit float literals in PTX


# --- references, by family ------------------------------------------------------------------------------
TYPE_WORDS = set(INT_TYPES) | set(FLOAT_FMT) | set(PACKED) | {".pred", ".tf32"}
MODES = {".rn": "rn", ".rz": "rz", ".rm": "rm", ".rp": "rp", ".rna": "rna", ".rni": "rn", ".rzi": "rz",
         ".rmi": "rm", ".rpi": "rp"}


def _parts(name: str):
    op, *mods = name.split(".")
    mods = ["." + m for m in mods]
    return op, [m for m in mods if m not in TYPE_WORDS], [m for m in mods if m in TYPE_WORDS]


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


INT_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "min": min, "max": max,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "div": _tdiv, "rem": lambda a, b: a - b * _tdiv(a, b),
}


def _int_form(name, op, mods, t) -> Form:
    w, signed = INT_TYPES[t] if t in INT_TYPES else (bits_of(t), False)
    v = (lambda x: ival(x, t)) if t in INT_TYPES else (lambda x: mask(x, w))
    keep = None
    if op in ("div", "rem"):     # division by zero and INT_MIN / -1: the ISA leaves them unspecified
        keep = lambda a, b: v(b) != 0 and not (signed and v(a) == -(1 << (w - 1)) and v(b) == -1)  # noqa: E731
    if op == "mul":
        kind = mods[0]
        if kind == ".wide":
            return Form(name, [t, t], _wide(t), lambda a, b: mask(v(a) * v(b), 2 * w), imms=int_imms(t))
        shift = w if kind == ".hi" else 0
        return Form(name, [t, t], t, lambda a, b: mask((v(a) * v(b)) >> shift, w), imms=int_imms(t))
    if op in ("shl", "shr"):
        def shift(a, b):
            n = min(mask(b, 32), w)
            if op == "shl":
                return mask(a << n, w)
            return mask((ival(a, t) if signed else mask(a, w)) >> n, w)
        imms = [(s, mask(int(s, 0), 32)) for s in ("0", "1", str(w - 1), str(w), str(w + 5), "255", "0xFFFFFFFF")]
        return Form(name, [t, ".u32"], t, shift, imms=imms)
    if op in ("neg", "not"):
        return Form(name, [t], t, (lambda a: mask(-v(a), w)) if op == "neg" else (lambda a: mask(~a, w)))
    fn = INT_BINARY[op]
    return Form(name, [t, t], t, lambda a, b: mask(fn(v(a), v(b)), w), imms=int_imms(t), keep=keep)


def _wide(t: str) -> str:
    w, signed = INT_TYPES[t]
    return f".{'s' if signed else 'u'}{2 * w}"


def _mad_form(name, mods, t) -> Form:
    w, _ = INT_TYPES[t]
    v = lambda x: ival(x, t)  # noqa: E731
    if ".wide" in mods:
        tw = _wide(t)
        return Form(name, [t, t, tw], tw, lambda a, b, c: mask(v(a) * v(b) + ival(c, tw), 2 * w), imms=int_imms(tw))
    shift = w if ".hi" in mods else 0
    return Form(name, [t, t, t], t, lambda a, b, c: mask(((v(a) * v(b)) >> shift) + v(c), w), imms=int_imms(t))


def _carry_form(name, op, mods, t) -> Form:
    """add.cc/sub.cc/addc/subc/mad.lo.cc/madc: the carry in comes from a .cc instruction of the
    same family on the case's last source (nonzero: carry/borrow set); the carry out is read back
    with addc.u32 %r29, 0, 0 (sub family: subc.u32 %r29, 0, 0 gives -borrow)."""
    w = 32
    sub = op in ("sub", "subc")
    carry_in = op.endswith("c")
    carry_out = ".cc" in mods
    n = 3 if op in ("mad", "madc") else 2
    srcs = [t] * n + ([".u32"] if carry_in else [])
    hi = ".hi" in mods

    def full(*xs):
        cin = (xs[n] != 0) if carry_in else 0
        a, b = xs[0], xs[1]
        if n == 3:
            prod = a * b
            return ((prod >> 32) if hi else mask(prod, 32)) + xs[2] + cin
        return a - b - cin if sub else a + b + cin
    form = Form(name, srcs, t, lambda *xs: mask(full(*xs), w), imms=[], n_ops=n)
    if carry_in:
        last = "{s" + str(n) + "}"
        set_cf = f"sub.cc.u32 %r28, 0, {last};\n  " if sub else f"add.cc.u32 %r28, {last}, 0xFFFFFFFF;\n  "
        form.pre = set_cf
    if carry_out:
        form.extra = ".u32"
        form.post = "  subc.u32 %r29, 0, 0;\n" if sub else "  addc.u32 %r29, 0, 0;\n"
        form.ref_extra = (lambda *xs: mask(-int(full(*xs) < 0), 32)) if sub else (lambda *xs: int(full(*xs) >> 32))
    return form


def _bits_form(name, op, mods, t) -> Form:
    w = bits_of(t)
    if op == "clz":
        return Form(name, [t], ".u32", lambda a: w - mask(a, w).bit_length())
    if op == "popc":
        return Form(name, [t], ".u32", lambda a: bin(mask(a, w)).count("1"))
    if op == "brev":
        return Form(name, [t], t, lambda a: int(f"{mask(a, w):0{w}b}"[::-1], 2))
    if op == "bfe":
        signed = t.startswith(".s")
        msb = w - 1

        def bfe(a, b, c):
            pos, ln = b & 0xFF, c & 0xFF
            sbit = 0 if not signed or ln == 0 else (a >> min(pos + ln - 1, msb)) & 1
            return sum((((a >> (pos + i)) & 1) if i < ln and pos + i <= msb else sbit) << i for i in range(w))
        return Form(name, [t, ".u32", ".u32"], t, bfe, imms=[(s, int(s, 0)) for s in ("0", "8", "31", "40", "0xFF")])
    if op == "bfi":
        def bfi(a, b, c, d):
            pos, ln, f = c & 0xFF, d & 0xFF, mask(b, w)
            for i in range(ln):
                if pos + i > w - 1:
                    break
                f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
            return f
        lits = ("0", "17", "63", "70", "0xFF")
        return Form(name, [t, t, ".u32", ".u32"], t, bfi, imms=[(s, int(s, 0)) for s in lits])
    if op == "prmt":
        return Form(name, [t, t, t], t, _prmt, imms=[(s, int(s, 0)) for s in ("0x3210", "0x7654", "0x0123", "0xBA98",
                                                                                "0x8888", "0xFFFF7654")])
    if op == "bmsk":
        lits = ("0", "1", "31", "32", "33", "0xFFFFFFFF")
        return Form(name, [t, ".u32"], t, _bmsk, imms=[(s, int(s, 0)) for s in lits])
    if op == "shf":
        left, wrap = ".l" in mods, ".wrap" in mods

        def shf(a, b, c):
            n = (c & 31) if wrap else min(c, 32)
            both = (mask(b, 32) << 32) | mask(a, 32)
            return mask((both << n) >> 32, 32) if left else mask(both >> n, 32)
        return Form(name, [t, t, ".u32"], t, shf, imms=[(s, int(s, 0)) for s in ("0", "1", "31", "32", "45")])
    raise KeyError(name)


def _prmt(a, b, c):
    """prmt default mode (PTX ISA): bytes {b, a} numbered 0..7 from a's low byte; each of c's
    four selector nibbles picks a byte, its bit 3 replicating that byte's sign bit."""
    tmp = (mask(b, 32) << 32) | mask(a, 32)
    out = 0
    for i in range(4):
        sel = (c >> (4 * i)) & 0xF
        byte = (tmp >> (8 * (sel & 7))) & 0xFF
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    return out


def _bmsk(a, b):
    """bmsk.clamp (PTX ISA semantics block)."""
    a1, b1 = a & 0x1F, b & 0x1F
    mask0 = mask(~0 << a1, 32)
    s = a1 + b1
    mask1 = mask(~0 << s, 32) if s < 32 else 0
    over = s >= 32
    if a >= 32:
        mask0 = 0
    if b >= 32:
        over = True
    if over:
        mask1 = 0
    elif b1 == 0:
        mask1 = 0xFFFFFFFF
    return mask0 & ~mask1 & 0xFFFFFFFF


INT_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
           "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _setp_form(name, mods, t) -> Form:
    cmp = mods[0][1:]
    if t in FLOAT_FMT:
        fmt = FLOAT_FMT[t]
        ftz = ".ftz" in mods
        base = INT_CMP[cmp.rstrip("u")] if cmp not in ("equ", "neu") else INT_CMP[cmp[:2]]
        unordered = cmp.endswith("u") and cmp not in ("equ",) or cmp == "equ"

        def fcmp(a, b):
            x, y = fdec(a, fmt), fdec(b, fmt)
            if ftz:
                x, y = flush(x, fmt), flush(y, fmt)
            if math.isnan(x) or math.isnan(y):
                return int(unordered)
            return int(base(x, y))
        return Form(name, [t, t], ".pred", fcmp, imms=float_imms(t))
    fn = INT_CMP[cmp]
    v = (lambda x: ival(x, t)) if t in INT_TYPES else (lambda x: mask(x, bits_of(t)))
    return Form(name, [t, t], ".pred", lambda a, b: int(fn(v(a), v(b))), imms=int_imms(t))


def _selp_form(name, t) -> Form:
    w = bits_of(t)
    imms = int_imms(t) if t in INT_TYPES else float_imms(t)
    return Form(name, [t, t, ".pred"], t, lambda a, b, c: mask(a if c else b, w), imms=imms, imm_pos=1)


def _pred_form(name, op) -> Form:
    fn = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}
    if op == "not":
        return Form(name, [".pred"], ".pred", lambda a: 1 - a)
    return Form(name, [".pred", ".pred"], ".pred", fn[op])


# --- floats -----------------------------------------------------------------------------------------------
def _round_mode(mods) -> str:
    return next((MODES[m] for m in mods if m in MODES), "rn")


def _finish(r: float, fmt: str, ftz: bool, sat: bool) -> float:
    if ftz:
        r = flush(r, fmt)
    if sat:
        r = 0.0 if math.isnan(r) else min(max(r, 0.0), 1.0)
    return r


FLOAT_OPS = {"add": (2, lambda m: lambda x, y: f_add(x, y, m)), "sub": (2, lambda m: lambda x, y: f_add(x, -y, m)),
             "mul": (2, lambda m: lambda x, y: f_mul(x, y, m)), "fma": (3, lambda m: lambda x, y, z: f_fma(x, y, z, m)),
             "div": (2, lambda m: lambda x, y: f_div(x, y, m)), "sqrt": (1, lambda m: lambda x: f_sqrt(x, m)),
             "rcp": (1, lambda m: lambda x: f_div(1.0, x, m)),
             "min": (2, lambda m: lambda x, y: f_minmax(x, y, False)),
             "max": (2, lambda m: lambda x, y: f_minmax(x, y, True)),
             "abs": (1, lambda m: abs), "neg": (1, lambda m: lambda x: -x),
             "copysign": (2, lambda m: lambda x, y: math.copysign(y, x))}


def _float_form(name, op, mods, types) -> Form:
    """Rounded float forms (exact rational reference), scalar or packed lane by lane; mixed
    add/sub.f32.f16: a narrow, c f32."""
    t = types[0]
    base, lanes = PACKED.get(t, (t, 1))
    fmt = FLOAT_FMT[base]
    n, make = FLOAT_OPS[op]
    fn = make(_round_mode(mods))
    ftz, sat = ".ftz" in mods, ".sat" in mods
    srcs = [t] * n
    src_fmts = [fmt] * n
    if len(types) == 2:                  # sub.rn.f32.f16 d, a, c
        srcs = [types[1], t]
        src_fmts = [FLOAT_FMT[types[1]], fmt]
    w = FLOAT_BITS[fmt]

    def lane(k, *xs):
        vals = [fdec(x >> (w * k) if lanes > 1 else x, f) for x, f in zip(xs, src_fmts)]
        if ftz:
            vals = [flush(v, f) for v, f in zip(vals, src_fmts)]
        return _finish(fn(*vals), fmt, ftz, sat)

    def ref(*xs):
        return tuple(lane(k, *xs) for k in range(lanes)) if lanes > 1 else lane(0, *xs)
    kind = "floatz" if op in ("min", "max") or sat else "float"
    return Form(name, srcs, t, ref, imms=float_imms(t) if lanes == 1 and len(types) == 1 else [],
                check=f"{kind}:{fmt}", fmt=fmt)


APPROX = {  # opcode -> (sources, float64 reference, check)
    "ex2": (1, lambda x: x if math.isnan(x) else (2.0 ** x if x < 1024 else math.inf), "ulp:2"),
    "rsqrt": (1, lambda x: math.nan if x < 0 else (math.copysign(math.inf, x) if x == 0 else
                                                   (0.0 if math.isinf(x) else 1 / math.sqrt(x))), "rel:1.4e-7"),
    "sqrt": (1, lambda x: math.nan if x < 0 else math.sqrt(x), "rel:1.2e-7"),
    "tanh": (1, math.tanh, "rel:4.9e-4"),
    "rcp": (1, lambda x: f_div(1.0, x, "rn"), "ulp:1"),
    "div": (2, lambda x, y: f_div(x, y, "rn"), "ulp:2"),
}


def _approx_form(name, op, mods, t) -> Form:
    fmt = FLOAT_FMT[t]
    n, fn, check = APPROX[op]
    ftz = ".ftz" in mods
    if op == "rcp" and fmt == "f64":
        check = "rel:1.9e-6"            # a seed with a 20-bit fraction (ISA)

    def ref(*xs):
        vals = [fdec(x, fmt) for x in xs]
        if ftz:
            vals = [flush(v, fmt) for v in vals]
        r = _to_fmt(fn(*vals), fmt)      # float64, then the format's range (overflow to inf)
        return flush(r, fmt) if ftz and math.isfinite(r) else r

    def keep(*xs):                     # the ISA bounds hold on these domains
        vals = [fdec(x, fmt) for x in xs]
        if op == "div" and ".full" not in mods:
            return 2.0 ** -126 <= abs(vals[1]) <= 2.0 ** 126 or not math.isfinite(vals[1])
        if op == "ex2":
            return vals[0] > -126 or not math.isfinite(vals[0]) if ftz else True
        return True
    return Form(name, [t] * n, t, ref, check=f"{check}:{fmt}", fmt=fmt, keep=keep)


def _cvt_form(name, mods, types) -> Form:
    dt, st = types
    ftz, sat = ".ftz" in mods, ".sat" in mods
    mode = _round_mode(mods)
    if dt in INT_TYPES and st in INT_TYPES:
        dw = bits_of(dt)
        return Form(name, [st], dt, lambda a: mask(ival(a, st), dw))
    if dt in PACKED:                       # cvt.rn.f16x2.f32 d, a, b: a to the upper half (ISA)
        base, _ = PACKED[dt]
        f = FLOAT_FMT[base]
        def half(a):
            x = fdec(a, "f32")
            return rnd(Fraction(x), f, mode, x) if math.isfinite(x) else x
        return Form(name, [st, st], dt, lambda a, b: (half(b), half(a)), check=f"float:{f}", fmt=f)
    if dt == ".tf32":
        def tf32(a):
            x = fdec(a, "f32")
            return rnd(Fraction(x), "tf32", "rna", x) if math.isfinite(x) else x
        return Form(name, [st], ".u32", tf32, check="float:f32", fmt="f32")
    if st in INT_TYPES:                    # integer -> float
        f = FLOAT_FMT[dt]
        return Form(name, [st], dt, lambda a: rnd(Fraction(ival(a, st)), f, mode), check=f"float:{f}", fmt=f)
    sf = FLOAT_FMT[st]
    if dt in INT_TYPES:                    # float -> integer: rounded, clamped, NaN -> 0 (ISA)
        w, signed = INT_TYPES[dt]
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)

        nan_value = 1 << (w - 1) if st == ".f64" or w == 64 else 0     # PTX ISA 9.0, cvt

        def to_int(a):
            x = fdec(a, sf)
            if math.isnan(x):
                return nan_value
            if math.isinf(x):
                return mask(hi if x > 0 else lo, w)
            return mask(min(max(_round_int(Fraction(x), mode), lo), hi), w)
        return Form(name, [st], dt, to_int)
    f = FLOAT_FMT[dt]

    def to_float(a):
        x = fdec(a, sf)
        if ftz:
            x = flush(x, sf)
        r = rnd(Fraction(x), f, mode, x) if math.isfinite(x) else x
        return _finish(r, f, ftz, sat)
    return Form(name, [st], dt, to_float, check=f"{'floatz' if sat else 'float'}:{f}", fmt=f)


def _round_int(q: Fraction, mode: str) -> int:
    fl = math.floor(q)
    if mode == "rz":
        return math.trunc(q)
    if mode == "rm":
        return fl
    if mode == "rp":
        return math.ceil(q)
    frac = q - fl
    return fl + (frac > Fraction(1, 2) or (frac == Fraction(1, 2) and fl % 2 == 1))


# --- the table ---------------------------------------------------------------------------------------------
def build(name: str, rng) -> Form:
    op, mods, types = _parts(name)
    if op == "cvt":
        form = _cvt_form(name, mods, types)
    elif op in ("add", "sub") and ".cc" in mods or op in ("addc", "subc", "madc") or op == "mad" and ".cc" in mods:
        form = _carry_form(name, op, mods, types[0])
    elif op == "mad":
        form = _mad_form(name, mods, types[0])
    elif op == "setp":
        form = _setp_form(name, mods, types[0])
    elif op == "selp":
        form = _selp_form(name, types[0])
    elif types == [".pred"]:
        form = _pred_form(name, op)
    elif ".approx" in mods or ".full" in mods:
        form = _approx_form(name, op, mods, types[0])
    elif types[0] in FLOAT_FMT or types[0] in PACKED:
        form = _float_form(name, op, mods, types)
    elif op in ("clz", "popc", "brev", "bfe", "bfi", "prmt", "bmsk", "shf"):
        form = _bits_form(name, op, mods, types[0])
    else:
        form = _int_form(name, op, mods, types[0])
    form.cases = make_cases(form.srcs, rng, keep=form.keep)
    if form.keep is not None:
        form.imms = [(s, b) for s, b in form.imms if all(
            form.keep(*[b if i == (form.imm_pos % len(form.srcs)) else v for i, v in enumerate(c)])
            for c in form.cases)]
    return form


def coverage_forms(doc_text: str) -> list[str]:
    """The forms of docs/emulate_coverage.md's table."""
    import re

    return [f for f in re.findall(r"^\| `([^`]+)` \| \d+ \|", doc_text, re.M)]


def run_form(form: Form):
    """Runs the form's kernel over its cases; returns (mismatches, cases compared). A mismatch is
    (slot, source bits, got bits, expected)."""
    from ptx2py.emulate.frontend import run

    n = len(form.cases)
    padded = form.cases + [form.cases[0]] * (-n % 256)
    inp = np.array([mask(v, 64) for c in padded for v in c], np.uint64)
    k = slots(form)
    spec = {"kernel": "k", "grid": [len(padded) // 256, 1, 1], "block": [256, 1, 1], "seed": 0,
            "args": [{"name": "inp", "kind": "pointer", "dtype": "u64", "count": inp.size, "init": "zeros"},
                     {"name": "out", "kind": "pointer", "dtype": "u64", "count": len(padded) * k, "init": "zeros"}]}
    res = run(kernel(form), spec, {"inp": inp})
    if res.reports:
        raise AssertionError(f"{form.name}: sanitizer reports {res.reports[:2]}")
    got = res.outputs["out"].reshape(-1, k)
    bad = []
    for i, (case, want) in enumerate(zip(form.cases, expected(form))):
        for s, wv in enumerate(want):
            extra = form.extra is not None and s == 1
            check = Form(form.name, [], form.extra, None) if extra else form
            if not agrees(check, int(got[i, s]), wv):
                bad.append((s, case, int(got[i, s]), wv))
    return bad, n * k
