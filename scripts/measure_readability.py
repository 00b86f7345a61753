"""Readability of `--sugar` output per producer (and, with --check, its exactness).

For every corpus file with at least MIN_INSNS instructions: (non-blank,
non-comment lines of the sugar Python) / (PTX instruction count). Prints the
median per producer and the file count. `--plain` measures without sugar.
`--check` also runs every file (any size) PTX -> sugar Python -> PTX and
black, and prints the byte-identical and black-stable counts. `--floor` counts
only the lines of instruction statements (calls with their continuation lines,
`for`/`skip_if`/`loop` headers): the figure a sugar without any other line would reach.
`--layout` counts, in the kernel bodies (before the layout trailer), the layout keywords
(`fmt=`, `indent=`, `close_indent=`, `lead=`, ..., and a comment's `inline=`) and `.loc` mini-language strings
(`at("1:2:3@0")`, `loc("...")`, `at="..."`) left, files that open with `ptx.style(`, and
inline asm spelled `inline_asm(...)` instead of `asm` (one spelling).
`--loops` also counts the back edges raised as `with loop(...)` and checks every raised
block against the control-flow graph (`sugar.loopcheck`). `--per-file` also prints one
line per measured file (producer, instructions, sugar lines, lines per instruction, path).
`--names` prints, per producer, the mean per-file share of register references written as names
(`K`, `acc[3]`, the binding `K := r[5]`) among all register references of the kernel bodies
(numbered ones: `r[5]`, `r[i + 126]`; see `register_references`), the plain spellings of
instructions that have a typed form, and the distinct spellings of each instruction family
(`family_spellings`: how the call writes the producer's inline-asm bracket).
`--breakdown` prints, per producer, the median lines per instruction of each kind of line:
instruction statements, `ptx.label(L.tmpN)`, `loc(...)`, `ptx.comment(...)`, the DWARF
`with ptx.section(...)` blocks, and the rest. Files are converted with their
path, as `ptx2py FILE --sugar` does (so launch sidecars and sources name parameters).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MIN_INSNS = 500


def code_lines(src: str) -> int:
    n = 0
    for line in src.split("\n"):
        s = line.strip()
        if s and not s.startswith("#"):
            n += 1
    return n


def instruction_lines(src: str) -> int:
    """Lines of the instruction statements of a generated module (see `--floor`)."""
    text = src.split("\n")
    return sum(1 for k in instruction_line_numbers(src) if _code(text[k - 1]))


def _code(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def instruction_line_numbers(src: str) -> set:
    """The (1-based) numbers of the lines of the instruction statements of `src`."""
    import ast

    from ptx2py.sugar.ir import _DIRECTIVES
    from ptx2py.transpile.dsl.families import FAMILIES

    lines = set()
    tree = ast.parse(src)
    aliases = set()  # `wmma_mma = ptx.wmma.mma...` (sugar/aliases.py)

    def is_insn(call) -> bool:
        parts = ast.unparse(call.func).split("(")[0].split(".")
        if parts[0] == "ptx":
            return len(parts) > 1 and (parts[1] == "insn" or parts[1] not in _DIRECTIVES)
        return parts[0] in ("asm", "nvasm", "at") or parts[0] in FAMILIES or parts[0] in aliases

    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Attribute) and is_insn(ast.Call(node.value, [], [])):
            aliases.add(node.targets[0].id)

    def visit(body):
        for node in body:
            if isinstance(node, (ast.With, ast.For)):
                head = "for" if isinstance(node, ast.For) else ast.unparse(node.items[0].context_expr)
                if head == "for" or head.startswith(("skip_if", "loop")):
                    lines.update(range(node.lineno, node.body[0].lineno))
                visit(node.body)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and is_insn(node.value):
                lines.update(range(node.lineno, node.end_lineno + 1))

    visit(tree.body)
    return lines


# the kinds of lines `--breakdown` counts besides the instruction statements (first match wins)
LINE_KINDS = (("tmp labels", re.compile(r"ptx\.label\(L\.tmp\d+\)$")), ("loc lines", re.compile(r"loc\(")),
              ("ptx.comment", re.compile(r"ptx\.comment\(")))


def breakdown(src: str) -> dict:
    """Code lines of `src` by kind: instruction statements, the LINE_KINDS, the module-level
    `with ptx.section(...)` blocks (DWARF), and the rest."""
    import ast

    text = src.split("\n")
    insn = instruction_line_numbers(src)
    sections = set()
    for node in ast.parse(src).body:
        if isinstance(node, ast.With) and ast.unparse(node.items[0].context_expr).startswith("ptx.section("):
            sections.update(range(node.lineno, node.end_lineno + 1))
    out = dict.fromkeys(["instructions", *(k for k, _ in LINE_KINDS), "sections", "rest"], 0)
    for k, line in enumerate(text, 1):
        if not _code(line):
            continue
        kind = "instructions" if k in insn else "sections" if k in sections else None
        kind = kind or next((name for name, pat in LINE_KINDS if pat.match(line.strip())), "rest")
        out[kind] += 1
    return out


LAYOUT_WORDS = re.compile(r"\b(?:fmt|indent|lead|close_indent|close_lead|end_indent|inline)=")
MINI_LANGUAGE = re.compile(r"""\b(?:at|loc)\(["']|\bat=["']""")
LONG_ASM = re.compile(r"\binline_asm\(")


def layout_counts(src: str) -> tuple:
    """(layout keywords, mini-language strings, opens with ptx.style, `inline_asm(` brackets)
    in the body of `src`."""
    from ptx2py.transpile.dsl.trivia_table import split_trailer

    body = split_trailer(src)[0]
    head = body.split("\n", 3)[2] if body.count("\n") >= 3 else ""
    return (len(LAYOUT_WORDS.findall(body)), len(MINI_LANGUAGE.findall(body)), int(head.startswith("ptx.style(")),
            len(LONG_ASM.findall(body)))


_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")
_FAMILIES = re.compile(r"^\s*([A-Za-z_][\w, ]*) = (?:regs|reg\.\w+)\(", re.M)
_BOUND = re.compile(r"(?<![\w.])([A-Za-z_]\w*) (?::=|=) ([A-Za-z_]\w*)\[")


def register_references(src: str) -> tuple:
    """(named, numbered) register references in the kernel bodies of a `--sugar` module: a
    numbered one spells a register family's index (`r[5]`, `r[i + 126]`), a named one a name
    bound to a register or a range of them (`K`, `acc`, `acc[3]`; `K := r[5]` is one named
    reference). Declarations (`acc = r[125:189]`), strings and comments are not counted."""
    from ptx2py.transpile.dsl.trivia_table import split_trailer

    body = split_trailer(src)[0]
    lines = [_STRING.sub('""', line).split("#", 1)[0] for line in body.split("\n")]
    families = {f.strip() for m in _FAMILIES.finditer(body) for f in m.group(1).split(",")}
    if not families:
        return 0, 0
    names = {m.group(1) for line in lines for m in _BOUND.finditer(line) if m.group(2) in families}
    numbered_pat = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, families)) + r")\[")
    named_pat = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, names or {"\0"})) + r")(?![\w(])(?! = )")
    named = numbered = 0
    for line in lines:
        if _FAMILIES.match(line) or re.match(r"\s*[A-Za-z_]\w* = [A-Za-z_]\w*\[[^\]]*\]\s*$", line):
            continue
        line = re.sub(r"(?<![\w.])([A-Za-z_]\w*) := [A-Za-z_]\w*\[[0-9]+\]", r"\1", line)
        numbered += len(numbered_pat.findall(line))
        named += len(named_pat.findall(line))
    return named, numbered


def plain_family_spellings(src: str) -> int:
    """Instruction statements of the kernel bodies spelled as the plain chain of an instruction
    that has a typed form (`ptx.mbarrier.try_wait...(...)` where `mbarrier_try_wait` exists)."""
    import ast

    from ptx2py.transpile.dsl.families import FAMILIES, OTHERS
    from ptx2py.transpile.dsl.trivia_table import split_trailer
    from ptx2py.transpile.names import to_python

    leads = [".".join(to_python(w) for w in lead.split(".")) for lead, _ in FAMILIES.values()]
    others = [".".join(to_python(w) for w in o.split(".")) for o in OTHERS]
    n = 0
    for node in ast.walk(ast.parse(split_trailer(src)[0])):
        if isinstance(node, ast.Call):
            head = re.sub(r"^(?:(?:label|at)\([^()]*\)\.|ptx\.|asm\.|nvasm\.|here\.|block\.)+", "",
                          ast.unparse(node.func))
            if any(head == lead or head.startswith(lead + ".") for lead in leads) and not any(
                    head.startswith(o) for o in others):
                n += 1
    return n


# the words before an instruction that say how it is bracketed (`asm.`, `nvasm.`, `asm.here.`,
# `asm.block.`), after the prefixes that only place it (`label(...).`, `at(...).`)
_PLACE = re.compile(r"(?:label|at)\([^()]*(?:\([^()]*\)[^()]*)*\)\.")
_BRACKET_WORDS = ("asm", "nvasm", "here", "block")


def _spelled(head: str) -> tuple:
    """(bracket words, instruction words) of a call's head: `asm.at(1, 2).here.wgmma.fence...`
    -> ("asm.here", ["wgmma", "fence", ...])."""
    words = [w for w in _PLACE.sub("", head).split(".") if w]
    if words[:1] == ["ptx"]:
        words = words[1:]
    bracket = []
    while words and words[0] in _BRACKET_WORDS:
        bracket.append(words.pop(0))
    return ".".join(bracket), words


def family_spellings(src: str) -> dict:
    """{instruction family: {spelling: count}} of the kernel bodies' instruction statements. The
    family is the instruction's first PTX word (`wgmma` for `ptx.wgmma.fence...` and
    `wgmma_mma...`, `mbarrier` for `mbarrier_wait`); its spelling is how the call says the
    producer's inline-asm bracket: "" (none), `asm`, `asm.here`, `nvasm`, `asm.block`, or
    `with asm` for a statement of a `with asm():` block; an alias (`tma_load = asm.cp...`)
    counts as the spelling of what it names."""
    import ast

    from ptx2py.sugar.ir import _DIRECTIVES
    from ptx2py.transpile.dsl.structured import STATEMENT_CALLS
    from ptx2py.transpile.dsl.trivia_table import split_trailer
    from ptx2py.transpile.dsl.typed import FAMILIES

    tree = ast.parse(split_trailer(src)[0])
    aliases = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Attribute):
            aliases[node.targets[0].id] = ast.unparse(node.value)
    out: dict = {}

    def family(words):
        if not words:
            return None
        if words[0] in FAMILIES:
            return FAMILIES[words[0]].lead[0].split(".")[0]
        if words[0] in STATEMENT_CALLS:
            return words[0].split("_")[0]
        return None if words[0] in _DIRECTIVES or words[0] in ("insn", "comment") else words[0].rstrip("_")

    def note(call, around):
        head = ast.unparse(call.func)
        first = head.split(".", 1)[0].split("(", 1)[0]
        if first in aliases:
            head = aliases[first] + head[len(first):]
        elif not (head.startswith(("ptx.", "asm.", "nvasm.", "at(", "label(")) or first in FAMILIES
                  or first in STATEMENT_CALLS):
            return
        bracket, words = _spelled(head)
        fam = family(words)
        if fam is not None:
            spelling = bracket or around
            out.setdefault(fam, {})[spelling] = out.setdefault(fam, {}).get(spelling, 0) + 1

    def visit(body, around):
        for node in body:
            if isinstance(node, ast.With):
                ctx = node.items[0].context_expr
                head = ast.unparse(ctx.func) if isinstance(ctx, ast.Call) else ""
                inner = around
                if head.split(".")[0] in ("asm", "nvasm"):
                    inner = "with " + head
                visit(node.body, inner)
            elif isinstance(node, (ast.For, ast.If)):
                visit(node.body, around)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                note(node.value, around)

    visit(tree.body, "")
    return out


def one(job):
    path, sugar, check, min_insns, floor, loops, layout, kinds = job
    import ptx2py
    from ptx2py import transpile
    from ptx2py.ptxgrammar import parse
    from ptx2py.ptxgrammar.tree import Instruction

    text = Path(path).read_bytes().decode("latin-1")
    n = sum(1 for x in parse(text).walk() if x.__class__ is Instruction)
    if n < min_insns and not check and not loops and not layout:
        return path, n, None, None, None, None, None
    try:
        src = ptx2py.ptx_to_python(text, sugar=sugar, filename=path)
    except Exception as e:  # noqa: BLE001
        return path, n, None, False, f"generate: {e}", None, None
    lay = layout_counts(src) if layout else None
    loop_report = None
    if loops:
        from ptx2py.sugar.loopcheck import check as check_loops

        rep = check_loops(text, src)
        loop_report = (rep.back_edges, rep.raised, rep.errors)
    r = (instruction_lines(src) if floor else code_lines(src)) / max(n, 1)
    if kinds:
        lay = {k: v / max(n, 1) for k, v in breakdown(src).items()}
    elif layout == "names":
        lay = (*register_references(src), plain_family_spellings(src), family_spellings(src))
    ok = black_ok = None
    if check:
        try:
            ok = transpile.python_to_ptx(src) == text
        except Exception as e:  # noqa: BLE001
            return path, n, r, False, f"run: {e}", loop_report, lay
        import black

        black_ok = black.format_str(src, mode=black.Mode()) == src
    return path, n, r, ok, black_ok, loop_report, lay


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--plain", action="store_true", help="measure the output without sugar")
    ap.add_argument("--check", action="store_true", help="also check byte identity and black on all files")
    ap.add_argument("--floor", action="store_true", help="count only instruction statement lines")
    ap.add_argument("--loops", action="store_true",
                    help="also count the back edges raised as loops and check them against the CFG (sugar.loopcheck)")
    ap.add_argument("--layout", action="store_true",
                    help="also count layout keywords and .loc mini-language strings left in the kernel bodies")
    ap.add_argument("--per-file", action="store_true", help="also print every measured file's figures")
    ap.add_argument("--names", action="store_true",
                    help="also print the mean per-file share of register references written as names "
                         "(not with --layout)")
    ap.add_argument("--breakdown", action="store_true",
                    help="also print the median lines per instruction of each kind of line (not with --layout)")
    ap.add_argument("--min", type=int, default=MIN_INSNS)
    ap.add_argument("-j", type=int, default=None)
    ap.add_argument("folders", nargs="*", default=[str(ROOT / "corpus" / "ptx")])
    args = ap.parse_args(argv)
    files = [str(f) for folder in args.folders for f in sorted(Path(folder).rglob("*.ptx"))]
    per = defaultdict(list)
    total = same = black_same = 0
    bad = []
    edges = raised = 0
    disagree = []
    rows = []
    kinds = defaultdict(list)
    shares = defaultdict(list)
    plain_files = []
    spellings: dict = defaultdict(lambda: defaultdict(int))  # family -> spelling -> count, all files
    spelled_files: dict = defaultdict(lambda: defaultdict(set))  # family -> spelling -> files
    with ProcessPoolExecutor(args.j) as ex:
        jobs = [(f, not args.plain, args.check, args.min, args.floor, args.loops,
                 "names" if args.names else args.layout, args.breakdown) for f in files]
        lay_total, lay_files = [0, 0, 0, 0], []
        for path, n, r, ok, black_ok, lr, lay in ex.map(one, jobs, chunksize=2):
            if args.breakdown:
                if lay is not None and n >= args.min:
                    kinds[Path(path).parent.name].append(lay)
                lay = None
            if args.names:
                if lay is not None and n >= args.min and sum(lay[:2]):
                    shares[Path(path).parent.name].append(lay[0] / sum(lay[:2]))
                if lay is not None and lay[2]:
                    plain_files.append((path, lay[2]))
                for fam, by in (lay[3] if lay is not None else {}).items():
                    for sp, c in by.items():
                        spellings[fam][sp] += c
                        spelled_files[fam][sp].add(path)
                lay = None
            if lay is not None:
                lay_total = [a + b for a, b in zip(lay_total, lay)]
                if any(lay):
                    lay_files.append((path, lay))
            if lr is not None:
                edges += lr[0]
                raised += lr[1]
                disagree += [f"{path}: {e}" for e in lr[2]]
            if args.check:
                total += 1
                same += ok is True
                black_same += black_ok is True
                if ok is not True or black_ok is not True:
                    bad.append((path, ok, black_ok))
            if r is not None and n >= args.min:
                per[Path(path).parent.name].append(r)
                rows.append((Path(path).parent.name, n, round(r * n), r, path))
    for row in sorted(rows) if args.per_file else ():
        print("FILE {:10} {:6d} {:6d} {:6.3f} {}".format(*row))
    print(f"{'producer':10} {'files':>5} {'median':>7}  {'min':>6} {'max':>6}")
    for prod in sorted(per):
        rs = per[prod]
        print(f"{prod:10} {len(rs):5d} {statistics.median(rs):7.3f}  {min(rs):6.3f} {max(rs):6.3f}")
    for prod in sorted(kinds):
        med = {k: statistics.median(d[k] for d in kinds[prod]) for k in kinds[prod][0]}
        print(f"{prod:10} lines per instruction by kind (median): " + ", ".join(f"{k} {v:.3f}" for k, v in med.items()))
    for prod in sorted(shares):
        sh = shares[prod]
        print(f"{prod:10} register references written as names: mean per file {statistics.mean(sh):.1%} "
              f"({len(sh)} files, min {min(sh):.1%}, max {max(sh):.1%})")
    if args.names:
        print(f"plain spellings of instructions that have a typed form: {sum(c for _, c in plain_files)} "
              f"({len(plain_files)} files with any)")
        for f, c in plain_files[:20]:
            print("  PLAIN", f, c)
        several = {f: by for f, by in spellings.items() if len(by) > 1}
        print(f"instruction families: {len(spellings)}, spelled more than one way: {len(several)} "
              f"(spelling: the inline-asm bracket words; '' = none)")
        for fam in sorted(spellings):
            by = spellings[fam]
            print(f"  SPELLINGS {fam:12} {len(by)}: " + ", ".join(
                f"{sp or '-'} {c} ({len(spelled_files[fam][sp])} files)" for sp, c in sorted(by.items())))
    if args.check:
        print(f"byte-identical: {same}/{total}  black-stable: {black_same}/{total}")
        for b in bad[:20]:
            print("  FAIL", *b)
    if args.layout:
        print(f"in kernel bodies: layout keywords {lay_total[0]}, .loc mini-language strings {lay_total[1]}; "
              f"files opening with ptx.style: {lay_total[2]}; inline_asm( brackets: {lay_total[3]} "
              f"({len(lay_files)} files with any)")
        for f, c in lay_files[:20]:
            print("  LAYOUT", f, *c)
    if args.loops:
        share = 100.0 * raised / edges if edges else 100.0
        print(f"back edges raised as loops: {raised}/{edges} ({share:.1f}%)  "
              f"disagreements with the CFG: {len(disagree)}")
        for d in disagree[:20]:
            print("  CFG", d)
    return 0 if not bad and not disagree else 1


if __name__ == "__main__":
    sys.exit(main())
