"""File-level scope mutants: whole corpus files with one scoping edit each, judged by ptxas.

The edits (a corpus instruction line I using register R of type T, a later line J of the same
function using R2 of type T2, a fresh name N):

    inner-other-type    `{ .reg .T' R; I }`         R re-declared in an inner block with another type
    inner-same-type     `{ .reg .T R; I }`          ... with its own type
    after-close         `{ .reg .T2 N; I }`, J uses N: a name used after its block closed
    sibling-undeclared  `{ .reg .T2 N; I }`, `{ .reg .b32 M; J with N }`: a sibling's name
    sibling-both        `{ .reg .T N; I with N }`, `{ .reg .T2 N; J with N }`: each block its own
    param-body          `.reg .b64 P;` in the body of a function with parameter P: declared twice
    param-inner         `{ .reg .b64 P; I }`: a parameter shadowed in an inner block
    duplicate           `.reg .T R;` again before I, in I's block
    before-declaration  I uses N, `.reg .T N;` after it

A case keeps the source file (relative to the repository), its digest and the edit (line number ->
replacement lines), so the suite rebuilds each mutant from corpus/ without ptxas.

    python scripts/lint_scope_mutants.py --regenerate     # new mutants, ptxas decides
    python scripts/lint_scope_mutants.py                  # score lint against the stored verdicts
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

OTHER_TYPE = {"pred": "b32", "b16": "b32", "u16": "b32", "s16": "b32", "f16": "b32", "b32": "b64",
              "u32": "b64", "s32": "b64", "f32": "f64", "b64": "b32", "u64": "b32", "s64": "b32", "f64": "f32"}
MUTATIONS = ("inner-other-type", "inner-same-type", "after-close", "sibling-undeclared", "sibling-both",
             "param-body", "param-inner", "duplicate", "before-declaration")
FRESH, OTHER = "%scope_n", "%scope_m"


def _sub_register(line: str, old: str, new: str) -> str:
    """`line` with every operand `old` (a whole register name) written `new`."""
    head, sep, rest = line.partition(" ")
    if not sep:
        head, sep, rest = line.partition("\t")
    pattern = re.compile(rf"(?<![\w%$.]){re.escape(old)}(?![\w$])")
    return head + sep + pattern.sub(new, rest)


def _register_uses(placed):
    """(name, declared type) of the `%` registers an instruction names, in its block."""
    from ptx2py.ptxgrammar.tree import operands as O

    from .operands import _names

    out = []
    scope = placed.scope
    scope.now = placed.serial
    for op in placed.instruction.operands:
        for name, is_register in _names(op):
            if is_register and not name.startswith("%tid") and op.__class__ is not O.SpecialRegister:
                rtype = scope.register_type(name)
                if rtype in OTHER_TYPE:
                    out.append((name, rtype))
    return out


def _sites(text: str):
    """Per function: [(line index, registers used, its block is the body)], and the parameter names."""
    from ptx2py import ptxgrammar

    from .rules import _line_col, walk_module

    walk = walk_module(ptxgrammar.parse(text, "m.ptx"))
    lines = text.split("\n")
    functions: dict[int, dict] = {}
    for p in walk.placed:
        if p.function is None or p.instruction.opcode in ("ret", "exit", "bra", "call"):
            continue
        line = _line_col(walk.newlines, p.start)[0] - 1
        # one instruction alone on its line (the edits replace whole lines)
        if lines[line].strip().count(";") != 1 or "//" in lines[line] or "{" in lines[line] or "}" in lines[line]:
            continue
        uses = _register_uses(p)
        if not uses:
            continue
        f = functions.setdefault(id(p.function), {"sites": [], "params": _params(p.function)})
        f["sites"].append((line, uses, p.scope.parent is walk.module_scope))
    return [f for f in functions.values() if f["sites"]]


def _params(function) -> list[str]:
    head = function.head
    return [p.name for plist in (head.returns, head.params) for p in (plist.params if plist else ())]


def _edits(text: str, rng: random.Random, per_file: int) -> list[tuple[str, dict]]:
    lines = text.split("\n")
    out: list[tuple[str, dict]] = []
    for f in _sites(text):
        sites = f["sites"]
        for _ in range(per_file):
            what = rng.choice(MUTATIONS)
            i, uses, in_body = rng.choice(sites)
            name, rtype = rng.choice(uses)
            later = [s for s in sites if s[0] > i]
            line_i = lines[i]
            if what in ("inner-other-type", "inner-same-type"):
                t = OTHER_TYPE[rtype] if what == "inner-other-type" else rtype
                out.append((what, {i: ["{", f"\t.reg .{t} {name};", line_i, "}"]}))
            elif what == "duplicate" and in_body:
                out.append((what, {i: [f"\t.reg .{rtype} {name};", line_i]}))
            elif what == "before-declaration":
                out.append((what, {i: [_sub_register(line_i, name, FRESH), f"\t.reg .{rtype} {FRESH};"]}))
            elif what in ("param-body", "param-inner") and f["params"]:
                param = rng.choice(f["params"])
                if what == "param-body" and in_body:
                    out.append((what, {i: [f"\t.reg .b64 {param};", line_i]}))
                elif what == "param-inner":
                    out.append((what, {i: ["{", f"\t.reg .b64 {param};", line_i, "}"]}))
            elif what in ("after-close", "sibling-undeclared", "sibling-both") and later:
                j, uses_j, _ = rng.choice(later)
                name_j, type_j = rng.choice(uses_j)
                line_j = _sub_register(lines[j], name_j, FRESH)
                if what == "after-close":
                    out.append((what, {i: ["{", f"\t.reg .{type_j} {FRESH};", line_i, "}"], j: [line_j]}))
                elif what == "sibling-undeclared":
                    out.append((what, {i: ["{", f"\t.reg .{type_j} {FRESH};", line_i, "}"],
                                       j: ["{", f"\t.reg .b32 {OTHER};", line_j, "}"]}))
                else:
                    out.append((what, {i: ["{", f"\t.reg .{rtype} {FRESH};", _sub_register(line_i, name, FRESH), "}"],
                                       j: ["{", f"\t.reg .{type_j} {FRESH};", line_j, "}"]}))
    return out


def apply_edit(text: str, edit: dict) -> str:
    lines = text.split("\n")
    for index in sorted((int(k) for k in edit), reverse=True):
        lines[index:index + 1] = edit[index] if index in edit else edit[str(index)]
    return "\n".join(lines)


def digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def generate(root: Path, files: list[Path], seed: int = 31, per_file: int = 3) -> list[dict]:
    rng = random.Random(seed)
    cases, seen = [], set()
    for path in files:
        text = path.read_text()
        try:
            edits = _edits(text, rng, per_file)
        except Exception:  # a file lint cannot parse is no source of mutants
            continue
        for what, edit in edits:
            key = (str(path), tuple(sorted((k, tuple(v)) for k, v in edit.items())))
            if key in seen:
                continue
            seen.add(key)
            cases.append({"id": len(cases), "mutation": what, "file": str(path.relative_to(root)),
                          "sha1": digest(text), "edit": {str(k): v for k, v in edit.items()}})
    return cases


# --- ptxas and lint ---------------------------------------------------------------------------

def _target(text: str) -> str | None:
    m = re.search(r"^\s*\.target\s+(sm_\w+)", text, re.M)
    return m.group(1) if m else None


def ptxas_verdict(ptxas: str, text: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.ptx")
        Path(path).write_text(text)
        r = subprocess.run(["nice", "-n", "10", ptxas, "-c", "-O0", "-arch", _target(text) or "sm_80", path, "-o",
                            os.path.join(tmp, "o")], capture_output=True, text=True)
    out = r.stdout + r.stderr
    lines = sorted({int(n) for n in re.findall(r"line (\d+); (?:error|fatal)", out)})
    errors = [ln for ln in out.splitlines() if "error" in ln or "fatal" in ln]
    return {"ptxas": "accept" if r.returncode == 0 else "reject", "ptxas_lines": lines,
            "ptxas_error": re.sub(r"^ptxas \S+, ", "", errors[0]) if errors else ""}


def mutant_text(root: Path, case: dict) -> str:
    text = (root / case["file"]).read_text()
    if digest(text) != case["sha1"]:
        raise ValueError(f"{case['file']} changed since the mutants were made: regenerate them")
    return apply_edit(text, case["edit"])


def add_verdicts(root: Path, cases: list[dict], ptxas: str, jobs: int = 2) -> None:
    with ThreadPoolExecutor(jobs) as pool:
        for c, v in zip(cases, pool.map(lambda c: ptxas_verdict(ptxas, mutant_text(root, c)), cases)):
            c.update(v)


def lint_verdict(root: Path, case: dict) -> tuple[str, list[str]]:
    """('clean' | 'at-line' | 'elsewhere', findings): at-line where lint has an error on a line
    ptxas blames."""
    from ptx2py import ptxgrammar

    from .rules import lint_module

    text = mutant_text(root, case)
    try:
        found = [v for v in lint_module(ptxgrammar.parse(text, "m.ptx"), "m.ptx") if v.severity == "error"]
    except ptxgrammar.ParseError as e:
        return "elsewhere", [f"[parse] {str(e).splitlines()[0]}"]
    if not found:
        return "clean", []
    hit = any(v.line in case.get("ptxas_lines", ()) for v in found)
    return ("at-line" if hit else "elsewhere"), [str(v) for v in found[:3]]


def score(root: Path, cases: list[dict]) -> dict:
    matrix = {"accept": {"clean": 0, "flagged": 0}, "reject": {"clean": 0, "at-line": 0, "elsewhere": 0}}
    by_mutation: dict[str, dict] = {}
    wrong = []
    for c in cases:
        verdict, findings = lint_verdict(root, c)
        row = by_mutation.setdefault(c["mutation"], {"accept": 0, "reject": 0, "agree": 0})
        row[c["ptxas"]] += 1
        if c["ptxas"] == "accept":
            matrix["accept"]["clean" if verdict == "clean" else "flagged"] += 1
            row["agree"] += verdict == "clean"
            if verdict != "clean":
                wrong.append({**c, "lint": findings, "kind": "false-positive"})
        else:
            matrix["reject"][verdict] += 1
            row["agree"] += verdict == "at-line"
            if verdict != "at-line":
                wrong.append({**c, "lint": findings, "kind": "missed"})
    rejected = sum(matrix["reject"].values())
    return {"matrix": matrix, "cases": len(cases), "false_positives": matrix["accept"]["flagged"],
            "caught_share": matrix["reject"]["at-line"] / rejected if rejected else 1.0,
            "by_mutation": by_mutation, "disagreements": wrong}
