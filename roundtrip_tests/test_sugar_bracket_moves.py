"""An inline-asm bracket is trivia of the call it brackets: every family spells its calls one
way whatever brackets the producer wrote, and moving a bracketed call one statement up or
down changes only the moved lines of the PTX.

The families are found in corpus/ptx itself (every first opcode word that some file writes
alone between `// begin inline asm` and `// end inline asm`), each tried in the smallest
file that has it. The oracle is the PTX text: the call's lines (its `.loc` prefix, both
markers, the comments inside) and its neighbour's lines swapped as text, compared with what
py2ptx writes for the Python with the two statements swapped. Which lines are a statement's
is found by deleting that statement from the Python (they must be one run of lines, and the
call's run must hold its whole bracket)."""

from __future__ import annotations

import ast
import difflib
import re
from functools import lru_cache
from pathlib import Path

import pytest

import ptx2py
from ptx2py import transpile
from ptx2py.transpile.names import to_python

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus" / "ptx"
BEGIN, END = "// begin inline asm", "// end inline asm"
LOC = re.compile(r"\s*\.loc\b")
LABEL = re.compile(r"\$?[\w$]+:\s*\Z")
BIG = 50_000  # bytes: a family found only in files this large is tried in the slow run (-m slow)


def _bracketed(lines: list) -> list:
    """(family, begin index, end index) of each bracket holding exactly one instruction."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != BEGIN:
            i += 1
            continue
        j, insns = i + 1, []
        while j < len(lines) and lines[j].strip() not in (BEGIN, END):
            t = lines[j].strip()
            if t and not t.startswith("//") and not LOC.match(lines[j]):
                insns.append(t)
            j += 1
        if j < len(lines) and lines[j].strip() == END and len(insns) == 1 and insns[0].endswith(";") \
                and not insns[0].startswith(("{", "}")):
            words = insns[0].rstrip(";").split()
            op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
            out.append((op.split(".")[0], i, j))
        i = j + 1
    return out


@lru_cache(maxsize=1)
def _families() -> dict:
    """family -> the smallest corpus file with a one-instruction bracket of it."""
    best: dict = {}
    for path in sorted(CORPUS.rglob("*.ptx")):
        size = path.stat().st_size
        for fam, _, _ in _bracketed(path.read_text(encoding="latin-1").split("\n")):
            if fam not in best or size < best[fam][0]:
                best[fam] = (size, path)
    return {f: p for f, (_, p) in sorted(best.items())}


def _params():
    out = []
    for fam, path in _families().items():
        marks = [pytest.mark.slow] if path.stat().st_size > BIG else []
        out.append(pytest.param(fam, path, id=fam, marks=marks))
    return out


def _statements(tree) -> list:
    """(statement, its body list) of every simple call statement outside rolled loops."""
    out = []

    def visit(body):
        for node in body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                out.append((node, body))
            elif isinstance(node, (ast.With, ast.If)):
                visit(node.body)

    visit(tree.body)
    return out


def _without(lines: list, node) -> str:
    """The Python without the statement `node`, the names it binds (`K := r[5]`) still bound
    (to the same registers) for the statements after it."""
    indent = " " * node.col_offset
    keep = [f"{indent}{x.target.id} = {ast.unparse(x.value)}" for x in ast.walk(node) if isinstance(x, ast.NamedExpr)]
    return "\n".join(lines[:node.lineno - 1] + (keep or [indent + "pass"]) + lines[node.end_lineno:])


def _span(orig: list, out: list) -> list:
    """Each (start, end) of a run of lines whose removal from `orig` gives `out` (one run
    slides where the lines after it repeat its own: `// end inline asm` then another bracket)."""
    sm = difflib.SequenceMatcher(a=orig, b=out, autojunk=False)
    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "delete":
        return []
    s, e = ops[0][1], ops[0][2]
    while s > 0 and orig[s - 1] == orig[e - 1]:
        s, e = s - 1, e - 1
    runs = [(s, e)]
    while e < len(orig) and orig[s] == orig[e]:
        s, e = s + 1, e + 1
        runs.append((s, e))
    return runs


def _swap(lines: list, a: tuple, b: tuple) -> list:
    """lines with the adjacent runs a = (s, m) and b = (m, e) swapped."""
    (s, m), (_, e) = a, b
    return lines[:s] + lines[m:e] + lines[s:m] + lines[e:]


def _swapped_source(lines: list, first, second) -> str:
    """The Python with the adjacent sibling statements `first` and `second` swapped."""
    a, b = first.lineno - 1, first.end_lineno
    c = second.end_lineno
    return "\n".join(lines[:a] + lines[b:c] + lines[a:b] + lines[c:])


def to_python_words(line: str) -> tuple:
    """(opcode, operands) of an instruction line (guard dropped) as Python spells their words."""
    words = line.strip().rstrip(";").split(None, 2 if line.strip().startswith("@") else 1)
    if words[0].startswith("@"):
        words = words[1:]
    op = ".".join(to_python(w) for w in words[0].replace("::", "__").split(".") if w)
    return op, re.sub(r"%([a-z]+)(\d+)", r"\1[\2]", " ".join(words[1:]))


def _words(text: str) -> list:
    return re.findall(r"[A-Za-z][A-Za-z0-9]*|\d+", text)


def _in_other_bracket(lines: list, span: tuple) -> bool:
    """Whether the run `span` holds statements of a bracket that opens or closes outside it."""
    depth = 0
    for k in range(span[0]):
        t = lines[k].strip()
        depth = 1 if t == BEGIN else 0 if t == END else depth
    if depth:
        return True
    for k in range(*span):
        t = lines[k].strip()
        depth = 1 if t == BEGIN else 0 if t == END else depth
    return bool(depth) or any(lines[k].strip() == END for k in range(*span)) and not any(
        lines[k].strip() == BEGIN for k in range(*span))


def _reads(node) -> set:
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}


def _binds(node) -> set:
    return {x.target.id for x in ast.walk(node) if isinstance(x, ast.NamedExpr)}


def _independent(first, second) -> bool:
    """The two may trade places: neither reads a name the other binds (`K := r[5]`)."""
    return not (_binds(first) & _reads(second)) and not (_binds(second) & _reads(first))


@pytest.mark.parametrize("family,path", _params())
def test_a_bracketed_call_moves_with_only_its_own_lines(family, path):
    text = path.read_text(encoding="latin-1")
    orig = text.split("\n")
    brackets = {(b, e) for fam, b, e in _bracketed(orig) if fam == family}
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(path))
    lines = src.split("\n")
    # one spelling: no call says how the producer bracketed it (a `{ }` scope of nvcc's is a block)
    spelled = [x for x in lines if re.match(r"\s*(?:(?:asm|nvasm)\.(?!block\.)|with (?:asm|nvasm)(?:\.here)?\(\))", x)]
    assert spelled == [], (path.name, spelled[:3])
    tree = ast.parse(src)
    units: dict = {}

    def unit(node):
        if id(node) not in units:
            units[id(node)] = _span(orig, transpile.python_to_ptx(_without(lines, node)).split("\n"))
        return units[id(node)]

    aliases = {n.targets[0].id: ast.unparse(n.value) for n in tree.body if isinstance(n, ast.Assign)
               and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Attribute)}

    # the bracketed instructions' opcode words, as Python spells them (`shared::cta` -> shared__cta)
    wanted = [[set(_words(w)) for w in to_python_words(orig[k])] for b, e in brackets for k in range(b + 1, e)
              if orig[k].strip() and not orig[k].strip().startswith("//") and not LOC.match(orig[k])]

    def likeness(node) -> tuple:  # (a filter only: the deletion says which lines are the call's)
        head, text = ast.unparse(node.value.func), ast.unparse(node)
        first = re.split(r"[.(]", head, maxsplit=1)[0]
        heads, words = set(_words(aliases.get(first, "") + "." + head)), set(_words(text))
        return max(((len(op & heads) / len(op), len(args & words) / max(len(args), 1)) for op, args in wanted
                    if family in heads), default=(0.0, 0.0))

    candidates = sorted((x for x in _statements(tree) if likeness(x[0])[0] >= 0.5), key=lambda x: likeness(x[0]),
                        reverse=True)
    for node, siblings in candidates[:12]:
        spans = [x for x in unit(node) if any(x[0] <= b and e < x[1] for b, e in brackets)]
        if len(spans) != 1:
            continue
        span = spans[0]
        # the call's lines: its bracket, what is inside, and only its own `.loc` lines (and debug
        # label: `label(L.tmp2678).at(...).<insn>`) before it
        inner = [k for k in range(*span) if not LOC.match(orig[k]) and not LABEL.match(orig[k])]
        assert orig[inner[0]].strip() == BEGIN and orig[inner[-1]].strip() == END, (path.name, orig[slice(*span)])
        k = siblings.index(node)
        moved = 0
        for other in (siblings[k - 1] if k else None, siblings[k + 1] if k + 1 < len(siblings) else None):
            if other is None or not isinstance(other, ast.Expr) or not _independent(node, other):
                continue
            near = [x for x in unit(other) if x[1] == span[0] or x[0] == span[1]]
            if len(near) != 1:
                continue  # lines between them (a label, a comment) belong to neither
            o = near[0]
            if _in_other_bracket(orig, o):
                continue  # one statement of a bracket of several: moving next to it is a move into that group
            if not orig[min(o[0], span[0]) - 1].strip():
                continue  # a blank line before the pair: the layout's (after a branch), not the call's
            first, second = (other, node) if o[1] == span[0] else (node, other)
            a, b = (o, span) if first is other else (span, o)
            want = _swap(orig, a, b)
            got = transpile.python_to_ptx(_swapped_source(lines, first, second)).split("\n")
            assert got == want, (path.name, family, "\n".join(difflib.unified_diff(want, got, lineterm="", n=2)))
            moved += 1
        if moved:
            return
    pytest.fail(f"{path.name}: no {family} call found whose move could be checked")
