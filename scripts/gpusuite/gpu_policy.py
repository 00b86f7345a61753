"""How a GPU result is compared, per kernel: the policy and the bound, each with its derivation.

Three policies:
  exact-int   every output the kernel writes is an integer: bit for bit, any build;
  bitwise     float outputs of operations the PTX ISA defines to the bit (`.rn` arithmetic, `fma`,
              conversions): bit for bit against the engine on the `--fmad=false` cubin, where ptxas
              contracts no `mul` + `add` pair into one FFMA (the engine rounds both);
  bounded     float outputs of an operation the ISA leaves open (the `.approx` functions within
              their stated accuracy, `div.full` within 2 ulp, an MMA's summation order, float
              atomics' order): |gpu - ref| <= atol + rtol |ref|, the bound derived below.

The default cubin (FMA contraction on) is compared within the contraction bound added to the
kernel's own. The bounds per operation class are data (OP_CLASSES); a kernel's bound sums the
classes it uses, each times the number of its instructions in the kernel's text (the error of
each use adds at most once along a dependence chain that is no longer than the text, loops
aside: a loop's accumulation is counted by the classes that accumulate, `mma` and atomics,
with the loop extent), plus half an output ulp on each side of the comparison.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

U32 = 2.0 ** -24          # f32 unit roundoff
U64 = 2.0 ** -53


@dataclass(frozen=True)
class OpClass:
    name: str
    pattern: str
    rtol: float            # relative error one use may add (GPU against a correctly rounded engine)
    derivation: str
    survives_nofma: bool   # still differs from the engine on the --fmad=false cubin
    accumulates: bool = False   # the error scales with the loop extent (K), not the text count


# ISA accuracies (PTX ISA 9.7.3, emulate/numerics/approx.py keeps the same table)
OP_CLASSES = (
    OpClass("tanh.approx", r"\btanh\.approx\.", 2.0 ** -11, "tanh.approx.f32: max rel. error 2^-11 (ISA)", True),
    OpClass("ex2.approx", r"\bex2\.approx\.", 4 * U32, "ex2.approx.f32: max 2 ulp (ISA) = 4 u", True),
    OpClass("lg2.approx", r"\blg2\.approx\.", 2.0 ** -22, "lg2.approx.f32: max rel. error 2^-22 (ISA)", True),
    OpClass("sin/cos.approx", r"\b(?:sin|cos)\.approx\.", 2.0 ** -20.5,
            "sin/cos.approx.f32: max abs. error 2^-20.5 in [-2pi, 2pi] (ISA; the inputs are there)", True),
    OpClass("rsqrt.approx", r"\brsqrt\.approx\.", 2.0 ** -22.9, "rsqrt.approx.f32: max rel. error 2^-22.9 (ISA)",
            True),
    OpClass("rcp.approx", r"\brcp\.approx\.", 2 * U32, "rcp.approx.f32: max 1 ulp (ISA) = 2 u", True),
    OpClass("sqrt.approx", r"\bsqrt\.approx\.", 4 * U32, "sqrt.approx.f32: max 2 ulp here (ISA: 'approximately')",
            True),
    OpClass("div.approx", r"\bdiv\.(?:approx|full)\.", 4 * U32, "div.approx/div.full.f32: max 2 ulp (ISA) = 4 u",
            True),
    OpClass("mma", r"\b(?:mma\.sync|wmma\.mma|wgmma\.mma_async|tcgen05\.mma)\b", 2 * U32,
            "MMA summation order open (ISA): one f32 rounding per k-step of partial sums, a GPU's order as "
            "much again: 2 (K/16) u per unit of sum|a b|", True, accumulates=True),
    OpClass("mma f16 accumulator", r"\b(?:mma\.sync|wgmma\.mma_async)(?:\.[\w:]+)*?\.f16\.f16\.f16\b", 2.0 ** -10,
            "an f16 accumulator rounds each k-step at f16: 2 (K/16) 2^-11 per unit of sum|a b|", True,
            accumulates=True),
    OpClass("float atomics", r"\b(?:atom|red)(?:\.[\w:]+)*\.add(?:\.noftz)?\.(?:f32|f64|f16|bf16|f16x2|bf16x2)\b",
            2 * U32, "float atomics add in any order: n terms, n u of sum|x| either side", True, accumulates=True),
)
# FMA contraction of the default build: each contracted mul + add skips the product's rounding
CONTRACTION = OpClass("fma contraction", r"\bmul(?:\.ftz)?\.(?:f32|f64|f16x2|f16|bf16x2|bf16)\b", U32,
                      "default build: ptxas contracts mul + add into FFMA (--fmad=true): one rounding "
                      "(u of the product) fewer per contracted pair", False)
_PLAIN_ADD = re.compile(r"\b(?:add|sub)(?:\.ftz)?\.(?:f32|f64|f16x2|f16|bf16x2|bf16)\b")

# half an ulp of each float output format (either side may round the other way at a tie)
OUTPUT_HALF_ULP = {"fp32": U32, "fp64": U64, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp8e4nv": 2.0 ** -4,
                   "fp8e5": 2.0 ** -3}
FLOATS = set(OUTPUT_HALF_ULP)


@dataclass(frozen=True)
class Policy:
    policy: str        # exact-int | bitwise | bounded
    rtol: float        # for the --fmad=false build (0 for exact-int/bitwise)
    atol: float
    default_rtol: float    # for the default build (contraction added)
    default_atol: float
    classes: tuple     # the op classes found
    derivation: str

    def bound(self) -> str:
        if self.policy != "bounded":
            nofma = "bit for bit"
        else:
            nofma = f"rtol {self.rtol:.3g} atol {self.atol:.3g}"
        if self.default_rtol == 0:
            return f"{nofma} (both builds)"
        return f"{nofma}; default build rtol {self.default_rtol:.3g} atol {self.default_atol:.3g}"


def _f64_only(text: str, cls: OpClass) -> bool:
    """Every use of the class is an f64 operation (it rounds at 2^-53, not 2^-24)."""
    return all(m.group(0).endswith(".f64") for m in re.finditer(cls.pattern, text))


def uses(text: str, cls: OpClass) -> int:
    if not any(h in text for h in _hints(cls.pattern)):
        return 0
    return len(re.findall(cls.pattern, text))


def _hints(pattern: str) -> list[str]:
    """Opcodes a class's pattern can start with (a quick `in` test before the regex)."""
    head = re.match(r"\\b(?:\(\?:)?([\w|\\.]+)", pattern).group(1)
    return [h.replace("\\", "").split(".")[0] + "." for h in head.split("|")]


def kernel_policy(text: str, output_dtypes: list[str], loop_extent: int = 1, magnitude: float = 1.0) -> Policy:
    """The policy and bound of one kernel (its own text: the entry and the functions it may call)
    for its float output dtypes (canonical names); loop_extent: the K of an MMA loop or the terms
    of an atomic sum; magnitude: a bound on |a b| (sum terms) relative to 1 for the atol."""
    floats = [d for d in output_dtypes if d in FLOATS]
    if not floats:
        return Policy("exact-int", 0.0, 0.0, 0.0, 0.0, (), "integer outputs only: exact on any build")
    found = [(c, uses(text, c)) for c in OP_CLASSES]
    found = [(c, n) for c, n in found if n]
    half_ulp = max(OUTPUT_HALF_ULP[d] for d in floats)
    rtol = atol = 0.0
    parts = []
    for c, n in found:
        if c.accumulates:
            terms = max(loop_extent, 1)
            if c.name == "mma f16 accumulator":
                atol += c.rtol * terms / 16 * terms * magnitude
                parts.append(f"{c.derivation} (K = {terms})")
                continue
            # f64-only atomics round at u64; everything else accumulates in f32
            u = c.rtol * (U64 / U32 if c.name == "float atomics" and _f64_only(text, c) else 1.0)
            steps = terms / 16 if c.name == "mma" else terms
            atol += u * steps * terms * magnitude
            parts.append(f"{c.derivation} (terms = {terms}, each |term| <= {magnitude:g})")
        else:
            rtol += c.rtol * n
            parts.append(f"{c.derivation}; {n} use(s)")
    contracted = min(uses(text, CONTRACTION), len(_PLAIN_ADD.findall(text)))
    default_extra = CONTRACTION.rtol * contracted
    # a contraction inside a loop skips a rounding on every trip: K u of sum|a b| at worst
    loop_atol = CONTRACTION.rtol * contracted * loop_extent * loop_extent * magnitude if contracted and has_loop(text) \
        else 0.0
    if found:
        rtol += 2 * half_ulp
        parts.append(f"output rounding: half an ulp of {'/'.join(sorted(set(floats)))} either side")
    default_rtol = 0.0
    if contracted:
        default_rtol = rtol + default_extra + (0.0 if found else 2 * half_ulp)
        parts.append(f"{CONTRACTION.derivation}; {contracted} pair(s) possible"
                     + (f", in a loop of up to {loop_extent} trips" if loop_atol else ""))
    policy = "bounded" if found else "bitwise"
    why = "; ".join(parts) if parts else "float results of exactly rounded operations only"
    return Policy(policy, rtol, atol, default_rtol, atol + loop_atol, tuple(c.name for c, _ in found), why)


_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+([\w$]+)\s*;")


def has_loop(text: str) -> bool:
    """A branch back to a label above it: a loop."""
    labels = {m.group(1): m.start() for m in re.finditer(r"^\s*([\w$]+):", text, re.M)}
    return any(labels.get(m.group(1), len(text)) < m.start() for m in _BRANCH.finditer(text))
