"""Which arithmetic instruction forms the corpus uses, and whether ALU computes each exactly.

    python -m emulate.numerics.coverage corpus/ptx -o docs/emulate_coverage.md [--json out.json]

Every form (opcode plus modifiers, as written) found by `ptxgrammar.parse` is run once through
`ALU` on small inputs: it is "exact" when it returns, "approx" (with the accuracy stated) for the
.approx/.full forms, and "refused" with the NotEmulated reason otherwise.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

from . import ALU, NotEmulated
from .approx import ACCURACY, FUNCTIONS
from .dtypes import TYPES, UINT
from .formats import encode, format_of

# opcode -> number of sources (cvt: 1, or one per lane of a packed destination)
SOURCES = {
    "add": 2, "sub": 2, "mul": 2, "mad": 3, "fma": 3, "div": 2, "rem": 2, "abs": 1, "neg": 1,
    "min": 2, "max": 2, "and": 2, "or": 2, "xor": 2, "not": 1, "cnot": 1, "shl": 2, "shr": 2,
    "shf": 3, "bfe": 3, "bfi": 4, "prmt": 3, "lop3": 4, "popc": 1, "clz": 1, "brev": 1, "bfind": 1,
    "dp4a": 3, "dp2a": 3, "sad": 3, "mul24": 2, "mad24": 3, "addc": 2, "subc": 2, "madc": 3,
    "setp": 2, "set": 2, "selp": 3, "slct": 3, "cvt": 1, "sqrt": 1, "rcp": 1, "rsqrt": 1, "ex2": 1,
    "lg2": 1, "sin": 1, "cos": 1, "tanh": 1, "testp": 1, "copysign": 2, "szext": 2, "bmsk": 2, "fns": 3,
}
ARITHMETIC = set(SOURCES)
CARRY_IN = {"addc", "subc", "madc"}
U32_OPERANDS = {"shl": (1,), "shr": (1,), "shf": (2,), "bfe": (1, 2), "bfi": (2, 3), "lop3": (3,), "szext": (1,),
                "fns": (1,)}


def forms_in(paths):
    """Counter of arithmetic forms ("fma.rn.f32") over the PTX files, and the files that failed."""
    from ptx2py import ptxgrammar
    from ptx2py.ptxgrammar.tree import Instruction
    counts, failed = collections.Counter(), []
    for path in paths:
        try:
            module = ptxgrammar.parse(Path(path).read_text(), filename=str(path))
        except Exception as exc:            # a file the grammar rejects is listed, not fatal
            failed.append(f"{path}: {exc}")
            continue
        for node in module.walk():
            if isinstance(node, Instruction) and node.opcode in ARITHMETIC:
                counts[(node.opcode, node.modifiers)] += 1
    return counts, failed


def _sample(type_name, k):
    """One lane of a plausible operand value of a type (never zero: divisions stay defined)."""
    if type_name == ".pred":
        return np.array([True])
    t = TYPES[type_name]
    fmt = format_of(type_name)
    if fmt is None:
        return np.array([3 + k], UINT[t.width])
    lanes = t.lanes if t.kind in ("packed_half", "packed_narrow") else 1
    lane_bits = t.width // lanes
    one = encode(np.array([1.5 + k]), fmt, satfinite=True).astype(np.uint64)
    word = sum(int(one[0]) << (lane_bits * i) for i in range(lanes))
    return np.array([word], UINT[t.width])


def probe(opcode, mods):
    """("exact" | "approx" | "refused" | "error", detail) for one form."""
    types = tuple(m for m in mods if m in TYPES)
    if not types:
        return "refused", "no operand type"
    srcs = _operands(opcode, mods, types)
    kw = {"cc": np.array([False])} if opcode in CARRY_IN else {}
    try:
        ALU[opcode](frozenset(mods), types, *srcs, **kw)
    except NotEmulated as exc:
        return "refused", str(exc)
    except Exception as exc:                 # a crash is a bug in a handler: report it as such
        return "error", f"{type(exc).__name__}: {exc}"
    if opcode in FUNCTIONS or ".approx" in mods or ".full" in mods:
        return "approx", _approx_note(opcode, mods, types)
    return "exact", "bit-exact"


def _operands(opcode, mods, types):
    n = SOURCES[opcode]
    src_type = types[-1] if opcode in ("cvt", "set") else types[0]
    if opcode == "cvt":
        d = TYPES[types[0]]
        if d.lanes > 1 and TYPES[types[1]].lanes == 1:
            n = d.lanes
    if opcode == "cvt" and ".rs" in mods:
        n += 1                                     # the random-bits operand
    if opcode in ("dp4a", "dp2a"):
        src_type = ".u32"
    srcs = [_sample(src_type, k) for k in range(n)]
    if opcode == "cvt" and ".rs" in mods:
        srcs[-1] = np.array([0x12345678], np.uint32)
    if len(types) == 2 and opcode in ("add", "sub", "fma", "mul"):       # mixed precision
        srcs = [_sample(types[1], k) for k in range(n - 1)] + [_sample(types[0], n)]
    for i in U32_OPERANDS.get(opcode, ()):
        srcs[i] = np.array([0x96 if opcode == "lop3" else 4], np.uint32)
    if opcode in ("mad", "madc") and ".wide" in mods:
        srcs[2] = _sample(f".u{TYPES[types[0]].width * 2}", 0)
    if opcode == "selp":
        srcs[2] = np.array([True])
    if opcode == "slct":
        srcs[2] = _sample(types[1], 0)
    if opcode in ("setp", "set") and any(m in mods for m in (".and", ".or", ".xor")):
        srcs.append(np.array([True]))
    return srcs


def _approx_note(opcode, mods, types):
    if opcode in FUNCTIONS:
        fmt = format_of(types[0]) or ""
        return FUNCTIONS[opcode][1].get(fmt, "") + "; " + ACCURACY
    if opcode == "div" and ".full" in mods:
        return "max 2 ulp (ISA); returns the correctly rounded quotient"
    if opcode == "div":
        return "max 2 ulp for |b| in [2^-126, 2^126] (ISA); returns RN(a * RN(1/b))"
    if opcode == "rcp" and ".f64" in types:
        return "a seed with a 20-bit fraction (ISA: from a's top 32 bits, d's low 32 bits zero); within 1 ulp of it"
    if opcode == "rcp":
        return "max 1 ulp (ISA); returns the correctly rounded reciprocal"
    if opcode == "sqrt":
        return "max rel. error 2^-23 (ISA); returns the correctly rounded root"
    return ACCURACY


def table(counts):
    rows = []
    for (opcode, mods), uses in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        status, detail = probe(opcode, mods)
        rows.append({"form": opcode + "".join(mods), "uses": uses, "status": status, "detail": detail})
    return rows


def summary(rows):
    done = [r for r in rows if r["status"] in ("exact", "approx")]
    uses = sum(r["uses"] for r in rows)
    return {"forms": len(rows), "forms_done": len(done), "uses": uses,
            "uses_done": sum(r["uses"] for r in done),
            "forms_exact": sum(r["status"] == "exact" for r in rows),
            "forms_approx": sum(r["status"] == "approx" for r in rows),
            "errors": [r["form"] for r in rows if r["status"] == "error"]}


def markdown(rows, stats, source):
    def pct(a, b):
        return f"{100.0 * a / b:.1f} %" if b else "n/a"

    out = [
        "# CPU engine: arithmetic coverage (`emulate/numerics`)",
        "",
        f"Generated by `python -m emulate.numerics.coverage {source} -o docs/emulate_coverage.md` from the",
        "corpus's PTX (every arithmetic form, as written, parsed with `ptxgrammar.parse`); each form is run",
        "once through `emulate.numerics.ALU`.",
        "",
        f"- forms: **{stats['forms_done']} of {stats['forms']}** implemented "
        f"({pct(stats['forms_done'], stats['forms'])});"
        f" {stats['forms_exact']} bit-exact, {stats['forms_approx']} approximate within the ISA's bound",
        f"- static uses: **{stats['uses_done']} of {stats['uses']}** instructions "
        f"({pct(stats['uses_done'], stats['uses'])})",
        "",
        "## How the values are computed",
        "",
        "`emulate/numerics/` is pure value semantics for the engine (`ALU[opcode](mods, types, *srcs)`,",
        "raw bits in unsigned numpy containers, one element per active lane; see the module docstrings):",
        "",
        "| module | job |",
        "|---|---|",
        "| `int_ops.py` | add/sub (.sat, .cc, addc/subc), mul/mad .lo/.hi/.wide (64-bit high halves by 32-bit limbs), "
        "mul24/mad24, div/rem, abs/neg/min/max (.relu, .s16x2/.u16x2), sad |",
        "| `bit_ops.py` | and/or/xor/not/cnot, shl/shr (clamped), shf, bfe/bfi, szext, bmsk, fns, prmt (all modes), "
        "lop3 (any immLut), popc/clz/brev/bfind, dp4a/dp2a |",
        "| `float_ops.py` | f64/f32/f16/bf16 add sub mul fma mad div sqrt rcp, "
        "min/max (.NaN, .xorsign.abs, .relu), abs neg copysign testp; .ftz, .sat |",
        "| `half_ops.py` | .f16x2/.bf16x2/.f32x2 lane by lane; setp on packed halves (p low lane, q high lane) |",
        "| `compare.py` | setp (all integer and float comparisons, .and/.or/.xor, p and q), set, selp, slct |",
        "| `cvt.py` | cvt for every integer/float pair, packed x2 forms, cvt.pack, cvt.rs (f16x2/bf16x2) |",
        "| `formats.py`, `rounding.py` | decode/encode of f64 f32 f16 bf16 tf32 "
        "e4m3 e5m2 e2m3 e3m2 e2m1 ue8m0; exact rounding |",
        "| `approx.py` | ex2 lg2 sin cos tanh rsqrt .approx (and the f64 seeds) |",
        "",
        "Exact rounding: each float result is first computed as an exact pair `hi + lo` of f64 values",
        "(TwoSum, Dekker's TwoProduct, division and square-root remainders, Boldo-Melquiond's round-to-odd",
        "for f64 fma) and then rounded once to the destination in the instruction's mode; lanes where such",
        "a pair cannot be formed exactly (f64 products near the ends of the exponent range, directed-mode",
        "f64 fma) are computed with `fractions.Fraction`. Round-to-nearest f32/f64 add/sub/mul use numpy's",
        "own IEEE arithmetic.",
        "",
        "Accuracy: *bit-exact* means the destination bits follow IEEE 754 and the PTX ISA's rules for",
        "every input: every rounding mode, subnormals and .ftz, signed zeros, infinities, overflow,",
        "saturation. Where the ISA leaves a value unspecified the choice is stated: f32/f16/bf16 NaN",
        "results are the canonical NaN (0x7fffffff / 0x7fff; the ISA says \"unspecified NaN\"), f64 NaN",
        "payloads propagate as numpy (x86) propagates them, integer division by zero is refused, and",
        "`INT_MIN / -1` wraps. *approx* forms state the ISA's bound and what is returned. Unrounded",
        "`add/sub/mul.f32` may be fused into `fma` by ptxas; the engine computes them as written. The",
        "*exact* status below means the form's handler accepts it; the handlers' families are tested",
        "against independent references in `roundtrip_tests/test_emulate_numerics_*.py`.",
        "",
        "| form | uses | status | accuracy / reason |",
        "|---|---:|---|---|",
    ]
    for r in rows:
        out.append(f"| `{r['form']}` | {r['uses']} | {r['status']} | {r['detail'].replace('|', '/')} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m emulate.numerics.coverage", description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="PTX files or folders")
    ap.add_argument("-o", "--output", help="markdown table to write")
    ap.add_argument("--json", help="rows and summary as JSON")
    args = ap.parse_args(argv)
    files = []
    for p in map(Path, args.paths):
        files += sorted(p.rglob("*.ptx")) if p.is_dir() else [p]
    counts, failed = forms_in(files)
    rows = table(counts)
    stats = summary(rows)
    text = markdown(rows, stats, " ".join(args.paths))
    if args.output:
        Path(args.output).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": stats, "rows": rows, "unparsed": failed}, indent=1))
    print(json.dumps({k: v for k, v in stats.items()}, indent=1))
    for f in failed:
        print("unparsed:", f, file=sys.stderr)
    return 1 if stats["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
