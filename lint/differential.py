"""Differential testing of the linter against ptxas.

Every distinct instruction shape in a PTX corpus is rewritten into a canonical one-instruction
module (registers renamed to one pool per declared type, symbols to one variable per state space,
branch targets to one label); single-instruction mutants of it (drop/add/swap an operand, operand
kind or register class, add/drop/replace a modifier, type, vector width, shape, immediate, target,
.version) are written next to it. ptxas decides each module; the verdicts are cached as data so the
test suite replays a seeded sample without ptxas.

    python -m lint.differential generate corpus/ptx -o cases.jsonl.gz     # shapes + mutants
    python -m lint.differential verdicts cases.jsonl.gz --ptxas PATH      # run ptxas, add verdicts
    python -m lint.differential score cases.jsonl.gz --matrix out.json    # lint vs ptxas
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

# --- canonical modules ----------------------------------------------------------------------

REG_TYPES = (".pred", ".b16", ".u16", ".s16", ".f16", ".f16x2", ".b32", ".u32", ".s32",
             ".f32", ".b64", ".u64", ".s64", ".f64", ".b128")
POOL = 300  # registers per type (wgmma accumulators need up to 256)
INSTRUCTION_LINE = 14
_SPACE_SYMBOL = {".shared": "smem", ".shared::cta": "smem", ".shared::cluster": "smem", ".const": "cmem",
                 ".local": "lmem", ".param": "kparam", ".param::entry": "kparam"}
_LABEL_OPS = {"bra", "brx"}
_SKIP_OPS = {"call", "ret", "exit", "trap", "brkpt", "pmevent"}


def reg_name(rtype: str, n: int) -> str:
    return f"%{rtype[1:]}_{n}"


MODULE = """\
.version {version}
.target {target}
.address_size 64

.global .align 16 .b8 gmem[4096];
.shared .align 16 .b8 smem[4096];
.const .align 16 .b8 cmem[4096];

.visible .entry k(.param .align 16 .b8 kparam[256])
{{
{regs}
\t.local .align 16 .b8 lmem[256];
\tLBL:
\t{instruction}
\tret;
}}
"""


def module_text(version: str, target: str, instruction: str) -> str:
    # only the pools the instruction names: a `.reg .b128` would need PTX 8.3 by itself
    used = [t for t in REG_TYPES if reg_name(t, "") in instruction]
    regs = "\t" + " ".join(f".reg {t} {reg_name(t, '')}<{POOL}>;" for t in used)
    text = MODULE.format(version=version, target=target, regs=regs, instruction=instruction)
    assert text.splitlines()[INSTRUCTION_LINE - 1].strip() == instruction.strip()
    return text


def _declared_types(function) -> dict[str, str]:
    """register name -> declared type, for every `.reg` in the function (parameterized names expanded
    lazily: the prefix is kept with its count)."""
    from ptx2py.ptxgrammar.tree.declarations import VarDecl

    found: dict[str, str] = {}
    for node in function.walk():
        if isinstance(node, VarDecl) and node.space == ".reg" and node.type:
            for d in node.declarators:
                if d.count is not None:
                    for i in range(int(d.count)):
                        found[f"{d.name}{i}"] = node.type
                else:
                    found[d.name] = node.type
    return found


class _Unsupported(Exception):
    pass


def _canon_operand(op, types, counters, symbol) -> str:
    from ptx2py.ptxgrammar.emitter import emit
    from ptx2py.ptxgrammar.tree import operands as O

    if isinstance(op, O.SpecialRegister):
        return emit(op).strip()
    if isinstance(op, (O.Register, O.Symbol)) and (isinstance(op, O.Register) or op.name in types):
        rtype = types.get(op.name)
        if rtype is None or rtype not in REG_TYPES:
            raise _Unsupported(op.name)
        key = (op.name,)
        if key not in counters:
            counters[key] = reg_name(rtype, sum(1 for k, v in counters.items() if v.startswith(f"%{rtype[1:]}_")))
        return counters[key] + (op.component or "")
    if isinstance(op, O.Symbol):
        return symbol
    if isinstance(op, (O.IntLiteral, O.FloatLiteral, O.Sink)):
        return emit(op).strip()
    if isinstance(op, O.Negation):
        return "!" + _canon_operand(op.operand, types, counters, symbol)
    if isinstance(op, O.BinaryExpr):
        return (f"{_canon_operand(op.left, types, counters, symbol)}{op.op}"
                f"{_canon_operand(op.right, types, counters, symbol)}")
    if isinstance(op, O.Vector):
        return "{" + ", ".join(_canon_operand(i, types, counters, symbol) for i in op.items) + "}"
    if isinstance(op, O.Address):
        return "[" + ", ".join(_canon_operand(i, types, counters, symbol) for i in op.items) + "]"
    if isinstance(op, O.PredPair):
        return (f"{_canon_operand(op.first, types, counters, symbol)}|"
                f"{_canon_operand(op.second, types, counters, symbol)}")
    raise _Unsupported(type(op).__name__)


def _symbol_for(instr) -> str:
    if instr.opcode in _LABEL_OPS:
        return "LBL"
    for m in instr.modifiers:
        if m in _SPACE_SYMBOL:
            return _SPACE_SYMBOL[m]
    return "gmem"


@dataclass(frozen=True)
class Shape:
    version: str
    target: str
    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[str, ...]
    guard: str = ""

    def text(self) -> str:
        ops = (" " + ", ".join(self.operands)) if self.operands else ""
        return f"{self.guard}{self.opcode}{''.join(self.modifiers)}{ops};"

    def key(self):
        kinds = tuple(_kind(o) for o in self.operands)
        return (self.opcode, self.modifiers, kinds)


def _kind(text: str) -> str:
    if text.startswith("["):
        return "addr"
    if text.startswith("{"):
        return f"vec{text.count(',') + 1}"
    if text.startswith("%"):
        return text.split("_")[0]
    return "imm" if re.match(r"^-?[0-9]", text) else text


def corpus_shapes(paths) -> list[Shape]:
    """One Shape per distinct (opcode, modifiers, operand kinds), first seen wins (files sorted)."""
    from ptx2py import ptxgrammar
    from ptx2py.ptxgrammar.tree.declarations import Function
    from ptx2py.ptxgrammar.tree.statements import Instruction

    from .rules import module_targets, module_version

    seen: dict = {}
    for path in paths:
        try:
            module = ptxgrammar.parse(ptxgrammar.read_ptx(str(path)), str(path))
        except Exception:
            continue
        version = module_version(module)
        targets = [t for t in module_targets(module) if t.startswith("sm_")]
        if version is None or not targets:
            continue
        vtext = f"{version[0]}.{version[1]}"
        for fn in module.items:
            if not isinstance(fn, Function) or fn.body is None:
                continue
            types = _declared_types(fn)
            for node in fn.walk():
                if not isinstance(node, Instruction) or node.opcode in _SKIP_OPS:
                    continue
                try:
                    counters: dict = {}
                    ops = tuple(_canon_operand(o, types, counters, _symbol_for(node)) for o in node.operands)
                except _Unsupported:
                    continue
                shape = Shape(vtext, targets[0], node.opcode, tuple(node.modifiers), ops)
                seen.setdefault(shape.key(), shape)
    return list(seen.values())


# --- mutants --------------------------------------------------------------------------------

TYPES = (".b8 .b16 .b32 .b64 .b128 .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32"
         " .f64 .tf32 .e4m3 .e5m2 .pred").split()
EXTRA_MODIFIERS = (".ftz .sat .rn .rz .rni .cc .lo .hi .wide .nc .v2 .v4 .v8 .volatile .relaxed .acquire .release"
                   " .gpu .cta .sync .aligned .approx .full .uni .shared .global .local .const .L1::evict_last"
                   " .satfinite .relu .NaN .x4 .trans .row .col .cluster .b32 .u64 .f32").split()
TARGETS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a")
VERSIONS = ("6.5", "7.0", "7.5", "7.8", "8.0", "8.3", "8.6", "8.8", "9.0")
IMMEDIATES = ("0", "-1", "7", "31", "255", "300", "4096", "0x7fffffff", "0f3F800000")
REG_SWAPS = {".b32": (".b64", ".f32", ".pred", ".b16"), ".u32": (".u64", ".f32", ".pred"),
             ".s32": (".s64", ".f32"), ".f32": (".b32", ".f64", ".f16", ".pred"), ".b64": (".b32", ".f64", ".u64"),
             ".u64": (".u32", ".f64"), ".s64": (".s32",), ".f64": (".b64", ".f32"), ".pred": (".b32", ".b16"),
             ".b16": (".b32", ".f16", ".pred"), ".u16": (".u32",), ".s16": (".s32",), ".f16": (".b16", ".f32"),
             ".bf16": (".b16", ".f16"), ".f16x2": (".b32", ".f32"), ".bf16x2": (".b32",), ".b128": (".b64",)}
_REG = re.compile(r"%(pred|[buisf]\d+|bf16|f16x2|bf16x2)_(\d+)")
_SHAPE = re.compile(r"^\.m(\d+)n(\d+)k(\d+)$")


def _with(shape: Shape, **change) -> Shape:
    data = dict(version=shape.version, target=shape.target, opcode=shape.opcode, modifiers=shape.modifiers,
                operands=shape.operands, guard=shape.guard)
    data.update(change)
    return Shape(**data)


def _fresh(rtype: str) -> str:
    return reg_name(rtype, POOL - 1)


def mutants(shape: Shape, pool_mods: list[str], rng: random.Random) -> list[tuple[str, Shape]]:
    out: list[tuple[str, Shape]] = []
    ops, mods = list(shape.operands), list(shape.modifiers)
    for i in range(len(ops)):
        out.append((f"drop-operand {i}", _with(shape, operands=tuple(ops[:i] + ops[i + 1:]))))
    if ops:
        out.append(("add-operand", _with(shape, operands=tuple(ops + [ops[-1]]))))
        out.append(("add-operand-imm", _with(shape, operands=tuple(ops + ["1"]))))
    for i in range(len(ops) - 1):
        if ops[i] != ops[i + 1]:
            swapped = ops[:i] + [ops[i + 1], ops[i]] + ops[i + 2:]
            out.append((f"swap-operands {i}", _with(shape, operands=tuple(swapped))))
    for i, op in enumerate(ops):
        def put(new, what):
            out.append((f"{what} {i}", _with(shape, operands=tuple(ops[:i] + [new] + ops[i + 1:]))))
        m = _REG.fullmatch(op)
        if m:
            put("1", "reg-to-imm")
            put(f"[{_fresh('.b64')}]", "reg-to-addr")
            put("{" + op + ", " + _fresh("." + m.group(1)) + "}", "scalar-to-vector")
            for other in REG_SWAPS.get("." + m.group(1), ()):
                put(_fresh(other), f"reg-class {other}")
            put("%undeclared_1", "undeclared-reg")
        elif op.startswith("["):
            put(_fresh(".b64"), "addr-to-reg")
            put("[" + _fresh(".b64") + "+8]", "addr-offset")
        elif op.startswith("{"):
            items = [x.strip() for x in op[1:-1].split(",")]
            put(items[0], "vector-to-scalar")
            if len(items) > 1:
                put("{" + ", ".join(items[:-1]) + "}", "vector-shorter")
            put("{" + ", ".join(items + [items[-1]]) + "}", "vector-longer")
        elif re.match(r"^-?(0[xX][0-9a-fA-F]+|\d+)$", op):
            for imm in rng.sample(IMMEDIATES, 3):
                if imm != op:
                    put(imm, f"imm {imm}")
            put(_fresh(".b32"), "imm-to-reg")
        elif op == "LBL":
            put("NOLABEL", "undeclared-label")
            put(f"[{_fresh('.b64')}]", "label-to-addr")
    for i, m in enumerate(mods):
        out.append((f"drop-modifier {m}", _with(shape, modifiers=tuple(mods[:i] + mods[i + 1:]))))
        if m in TYPES:
            for t in rng.sample([t for t in TYPES if t != m], 3):
                out.append((f"type {m}->{t}", _with(shape, modifiers=tuple(mods[:i] + [t] + mods[i + 1:]))))
        elif m in (".v2", ".v4", ".v8"):
            for v in (".v2", ".v4", ".v8"):
                if v != m:
                    out.append((f"vector {m}->{v}", _with(shape, modifiers=tuple(mods[:i] + [v] + mods[i + 1:]))))
        elif _SHAPE.match(m):
            mm, nn, kk = (int(x) for x in _SHAPE.match(m).groups())
            for new in {(mm, nn, kk * 2), (mm, nn + 8, kk), (mm, nn * 2, kk), (mm, nn, kk + 1), (mm * 2, nn, kk)}:
                s = f".m{new[0]}n{new[1]}k{new[2]}"
                out.append((f"shape {m}->{s}", _with(shape, modifiers=tuple(mods[:i] + [s] + mods[i + 1:]))))
        else:
            choices = [x for x in pool_mods if x != m and x not in mods]
            for r in rng.sample(choices, min(2, len(choices))):
                out.append((f"replace-modifier {m}->{r}", _with(shape, modifiers=tuple(mods[:i] + [r] + mods[i + 1:]))))
    extra = [x for x in pool_mods + EXTRA_MODIFIERS if x not in mods]
    for x in rng.sample(sorted(set(extra)), min(4, len(set(extra)))):
        pos = rng.randrange(len(mods) + 1)
        out.append((f"add-modifier {x}", _with(shape, modifiers=tuple(mods[:pos] + [x] + mods[pos:]))))
    if not shape.guard:
        out.append(("add-guard", _with(shape, guard=f"@{reg_name('.pred', 1)} ")))
    for t in rng.sample([t for t in TARGETS if t != shape.target], 2):
        out.append((f"target {t}", _with(shape, target=t)))
    older = [v for v in VERSIONS if tuple(map(int, v.split("."))) < tuple(map(int, shape.version.split(".")))]
    for v in rng.sample(older, min(2, len(older))):
        out.append((f"version {v}", _with(shape, version=v)))
    return out


def generate(paths, seed: int = 17, per_shape: int = 12) -> list[dict]:
    rng = random.Random(seed)
    shapes = corpus_shapes(paths)
    by_op: dict[str, set[str]] = {}
    for s in shapes:
        by_op.setdefault(s.opcode, set()).update(s.modifiers)
    cases = []
    for k, s in enumerate(shapes):
        cases.append(dict(mutation="original", version=s.version, target=s.target, instruction=s.text(), shape=k))
        muts = mutants(s, sorted(by_op[s.opcode]), rng)
        for what, m in rng.sample(muts, min(per_shape, len(muts))):
            cases.append(dict(mutation=what, version=m.version, target=m.target, instruction=m.text(),
                              base=s.text(), shape=k))
    seen, unique = set(), []
    for c in cases:
        key = (c["version"], c["target"], c["instruction"])
        if key not in seen:
            seen.add(key)
            unique.append(c)
    for i, c in enumerate(unique):
        c["id"] = i
    return unique


# --- ptxas ----------------------------------------------------------------------------------

def default_ptxas() -> str:
    """The newest ptxas here: the pip package nvidia-cuda-nvcc (13.5) when installed, else PATH."""
    try:
        import nvidia

        for base in nvidia.__path__:
            p = Path(base) / "cu13" / "bin" / "ptxas"
            if p.is_file():
                return str(p)
    except ImportError:
        pass
    return "ptxas"


def ptxas_version(ptxas: str) -> str:
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"V(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else "unknown"


def ptxas_verdict(ptxas: str, case: dict, workdir: str) -> tuple[bool, str]:
    path = os.path.join(workdir, f"m{case['id']}.ptx")
    with open(path, "w") as f:
        f.write(module_text(case["version"], case["target"], case["instruction"]))
    r = subprocess.run(["nice", "-n", "10", ptxas, "-arch", case["target"], path, "-o", os.devnull],
                       capture_output=True, text=True)
    os.unlink(path)
    errors = [ln for ln in (r.stdout + r.stderr).splitlines() if "error" in ln or "fatal" in ln]
    first = re.sub(r"^ptxas [^,]*, ", "", errors[0]) if errors else ""
    return r.returncode == 0, first


def add_verdicts(cases: list[dict], ptxas: str, jobs: int = 2) -> None:
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(jobs) as pool:
        todo = [c for c in cases if "ptxas" not in c]
        for c, (ok, msg) in zip(todo, pool.map(lambda c: ptxas_verdict(ptxas, c, tmp), todo)):
            c["ptxas"] = "accept" if ok else "reject"
            if msg:
                c["ptxas_error"] = msg


# --- lint verdicts and the confusion matrix -------------------------------------------------

def ptxas_line(case: dict) -> int:
    """The line ptxas blames (its first error); the instruction's when it names none."""
    m = re.match(r"line (\d+);", case.get("ptxas_error", ""))
    return int(m.group(1)) if m else INSTRUCTION_LINE


# ptxas refusing to run at all (a target it no longer knows) decides nothing about the PTX
UNDECIDED = re.compile(r"is not defined for option")


def lint_verdict(case: dict) -> tuple[str, list[str]]:
    """('clean' | 'at-line' | 'elsewhere', findings) for the case's module; at-line: a finding with a
    rule id on the line ptxas blames."""
    from ptx2py import ptxgrammar

    from .rules import lint_module

    text = module_text(case["version"], case["target"], case["instruction"])
    try:
        module = ptxgrammar.parse(text, "m.ptx")
    except ptxgrammar.ParseError as e:
        line = getattr(e, "line", None)
        return ("at-line" if line == ptxas_line(case) else "elsewhere"), [f"[parse] {str(e).splitlines()[0]}"]
    found = [v for v in lint_module(module, "m.ptx") if v.severity == "error"]
    if not found:
        return "clean", []
    ruled = [v for v in found if v.line == ptxas_line(case) and v.rule]
    return ("at-line" if ruled else "elsewhere"), [f"[{v.rule}] {v.message}" for v in found]


def score(cases: list[dict]) -> dict:
    matrix = {"accept": {"clean": 0, "flagged": 0}, "reject": {"clean": 0, "at-line": 0, "elsewhere": 0}}
    false_positives, misses = [], []
    cases = [c for c in cases if not UNDECIDED.search(c.get("ptxas_error", ""))]
    for c in cases:
        verdict, findings = lint_verdict(c)
        if c["ptxas"] == "accept":
            matrix["accept"]["clean" if verdict == "clean" else "flagged"] += 1
            if verdict != "clean":
                false_positives.append({**c, "lint": findings})
        else:
            matrix["reject"][verdict] += 1
            if verdict != "at-line":
                misses.append({**c, "lint": findings})
    rejected = sum(matrix["reject"].values())
    return dict(matrix=matrix, cases=len(cases), false_positives=len(false_positives),
                caught_share=matrix["reject"]["at-line"] / rejected if rejected else 1.0,
                false_positive_cases=false_positives, missed_cases=misses)


# why a ptxas-rejected mutant passes the linter: the kind of check that is not (yet) in the tables,
# by the ptxas message (first match wins)
MISS_REASONS = [
    (r"Illegal vector size|Vector expected|vector size|Result vector expected|Vector operand is not allowed"
     r"|Vector qualifier|Vector type too large",
     "vector/fragment sizes of this form (texture, wmma, mov packing) are not in the tables"),
    (r"State space|state space|32-Bit|Illegal to use symbol|cannot be applied to .* space",
     "state-space rule of this instruction not in the tables (ptxas checks the address against the space)"),
    (r"requires \.target|requires PTX ISA", "minimum target/PTX version of this form or modifier not in the tables"),
    (r"out of range|must be constant|unexpected value|expected to be in range|expected to be",
     "immediate range or constness of this operand not in the tables"),
    (r"modifier required|Modifier .* requires|cannot be combined|Illegal modifier|Rounding modifier"
     r"|requires .* type with|Incorrect type",
     "modifier dependency (one modifier requiring or excluding another) not in the tables"),
    (r"Unexpected instruction types|Incorrect instruction type",
     "type combination of this form (cvt/wmma/tex/ldmatrix pairs) not in the tables"),
    (r"Arguments mismatch|must be register|Result register|Special register argument|number of arguments",
     "operand kind/class ptxas checks for this form beyond its `args` (texture, tcgen05, TMA operand lists,"
     " registers in fixed-type positions)"),
    (r"Not a name of any known instruction", "an opcode/modifier spelling ptxas does not know but the tables do"),
    (r"^$", "ptxas failed without naming a line"),
]


def miss_reason(case: dict) -> str:
    msg = re.sub(r"^line \d+; ", "", case.get("ptxas_error", ""))
    for pattern, reason in MISS_REASONS:
        if re.search(pattern, msg):
            return reason
    return "semantic check only ptxas makes"


def disagreements(result: dict) -> list[dict]:
    """Every case where lint and ptxas disagree, with its reason (false positives first)."""
    rows = [dict(id=c["id"], kind="false-positive", target=c["target"], version=c["version"],
                 instruction=c["instruction"], lint=c["lint"][:1], reason="lint is wrong: fix the tables")
            for c in result["false_positive_cases"]]
    rows += [dict(id=c["id"], kind="missed", target=c["target"], version=c["version"], instruction=c["instruction"],
                  ptxas=c.get("ptxas_error", ""), reason=miss_reason(c)) for c in result["missed_cases"]]
    return rows


def read_cases(path) -> list[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_cases(path, cases, header: dict | None = None) -> None:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as f:
        if header:
            f.write(json.dumps({"header": header}) + "\n")
        for c in cases:
            f.write(json.dumps(c, sort_keys=True) + "\n")


def split_header(rows):
    if rows and "header" in rows[0]:
        return rows[0]["header"], rows[1:]
    return {}, rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lint.differential")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("paths", nargs="+")
    g.add_argument("-o", "--output", required=True)
    g.add_argument("--seed", type=int, default=17)
    g.add_argument("--per-shape", type=int, default=12)
    v = sub.add_parser("verdicts")
    v.add_argument("cases")
    v.add_argument("--ptxas", default=None)
    v.add_argument("-j", "--jobs", type=int, default=2)
    s = sub.add_parser("score")
    s.add_argument("cases")
    s.add_argument("--matrix", help="write the confusion matrix and the disagreements (JSON)")
    s.add_argument("--disagreements", help="write every disagreement with its reason (JSON lines)")
    args = ap.parse_args(argv)

    if args.cmd == "generate":
        files = []
        for p in args.paths:
            files += sorted(Path(p).rglob("*.ptx")) if Path(p).is_dir() else [Path(p)]
        cases = generate(files, args.seed, args.per_shape)
        write_cases(args.output, cases, {"seed": args.seed, "sources": args.paths})
        print(f"{len(cases)} cases ({sum(c['mutation'] == 'original' for c in cases)} shapes)")
    elif args.cmd == "verdicts":
        header, cases = split_header(read_cases(args.cases))
        ptxas = args.ptxas or default_ptxas()
        add_verdicts(cases, ptxas, args.jobs)
        header["ptxas"] = ptxas_version(ptxas)
        # mutants of a shape whose canonical original ptxas rejects say nothing: keep them out
        bad_bases = {c["shape"] for c in cases if c["mutation"] == "original" and c["ptxas"] == "reject"}
        kept = [c for c in cases if c["shape"] not in bad_bases]
        header["rejected_originals"] = len(bad_bases)
        write_cases(args.cases, kept, header)
        print(f"ptxas {header['ptxas']}: {sum(c['ptxas'] == 'accept' for c in kept)} accepted, "
              f"{sum(c['ptxas'] == 'reject' for c in kept)} rejected")
    else:
        header, cases = split_header(read_cases(args.cases))
        result = score(cases)
        m = result["matrix"]
        print(f"{result['cases']} cases (ptxas {header.get('ptxas', '?')}): accepted {m['accept']}, "
              f"rejected {m['reject']}; false positives {result['false_positives']}; "
              f"caught at the line {100 * result['caught_share']:.1f}%")
        if args.matrix:
            with open(args.matrix, "w") as f:
                json.dump(dict(ptxas=header.get("ptxas"), matrix=m, cases=result["cases"],
                               false_positives=result["false_positives"], caught_share=result["caught_share"],
                               disagreements=disagreements(result)), f, indent=1)
        if args.disagreements:
            with open(args.disagreements, "w") as f:
                f.write(f"// lint vs ptxas {header.get('ptxas', '?')}: each case where they disagree, with why"
                        f" (python -m lint.differential score CASES --disagreements THIS)\n")
                for row in disagreements(result):
                    f.write(json.dumps(row, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
