"""Moving a sugared statement moves its whole PTX: every construct kind of `--sugar` output
(`at(...)` and `label(...)` prefixes, `asm.`/`nvasm.` brackets, `with inline_asm():`, typed families, aliases,
`loc(...)`, rolled `for` loops, raised loops) is swapped with the plain instruction after it in
sample files; the PTX must be the original with the two units' lines swapped (markers, blank
lines and layout travel with their statement: no debris, nothing re-formatted) and must
assemble with ptxas."""

from __future__ import annotations

import ast
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

import ptx2py
from ptx2py import transpile
from ptx2py.sugar.ir import _DIRECTIVES
from ptx2py.transpile.dsl.families import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
# (the last: debug labels joined, a named inlined frame)
SAMPLES = ["triton/matmul_tma_fp16_sm90.ptx", "nvcc/cub_block.sm_90a.lineinfo.ptx",
           "nvcc/tcgen05_sm100.sm_100a.lineinfo.ptx", "triton/cummax_2d_fp32_sm90.ptx"]
PREFIXES = ("at", "asm", "nvasm", "loc", "label")
MARKERS = ("// begin inline asm", "// end inline asm")
# moves known to leave debris, each still failing (strict: a fix must take it off the list):
# `ret` moved above a `with skip_if` block at the end of a kernel leaves a blank line behind
KNOWN_DEBRIS = {("nvcc/cub_block.sm_90a.lineinfo.ptx", "with skip_if")}


def _kind(node, aliases) -> str | None:
    """The sugared construct kind of a statement (None: a plain `ptx.<insn>(...)` or other)."""
    if isinstance(node, ast.For):
        return "for"
    if isinstance(node, ast.With):
        head = ast.unparse(node.items[0].context_expr)
        return "with " + head.split("(", 1)[0].split(".")[-1] if not head.startswith("ptx.") else None
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        head = ast.unparse(node.value.func)
        first = head.split("(", 1)[0].split(".", 1)[0]
        if first in PREFIXES or first in FAMILIES or first in aliases:
            return first if first in PREFIXES or first in aliases else "family " + first
        if first not in ("ptx",) and head[:1].isalpha():
            return "call " + first
    return None


def _plain(node) -> bool:
    """A plain instruction call `ptx.<opcode>...(...)` (not a directive, label or comment)."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func).startswith("ptx.")
            and ast.unparse(node.value.func).split(".")[1] not in _DIRECTIVES | {"insn"})


def _binds(node) -> set:
    """The names a statement binds by `name := ...` (sugar/regnames.py's register names)."""
    return {x.target.id for x in ast.walk(node) if isinstance(x, ast.NamedExpr)}


def _reads(node) -> set:
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}


def _moves(src: str):
    """(kind, start line, end line, sibling end line) for the first statement of each kind
    followed, in the same body, by a plain instruction (or one with an `at(...)` prefix)."""
    tree = ast.parse(src)
    aliases = {n.targets[0].id for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Attribute)}
    frames = {n.targets[0].id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
              and ast.unparse(n.value.func) == "inlined"}  # `kernels_215 = inlined(fn=0, at=(1, 215, 9))`
    seen = {}

    def inlined(node) -> bool:
        text = ast.unparse(node)
        return "inlined_at" in text or any(isinstance(x, ast.Name) and x.id in frames for x in ast.walk(node))

    def visit(body):
        for a, b in zip(body, body[1:]):
            k = _kind(a, aliases)
            # (a sibling whose `.loc` names an `inlined_at` location, itself or by a frame, must stay
            # after that `.loc`: ptxas requires it, so it is not one to swap with)
            # (nor one reading a register name the statement binds, `K := r[5]`: the swap would read
            # it before its definition, which py2ptx refuses: test_a_use_moved_above_its_definition_is_refused)
            if k is not None and k not in seen and (_plain(b) or _kind(b, aliases) == "at" and not inlined(b)) \
                    and not _binds(a) & _reads(b):
                seen[k] = (a.lineno, a.end_lineno, b.end_lineno)
        for n in body:
            for f in ("body", "orelse"):
                if isinstance(getattr(n, f, None), list):
                    visit(getattr(n, f))

    visit(tree.body)
    return sorted(seen.items())


def _norm(text: str) -> list:
    return [" ".join(line.split()) for line in text.split("\n")]


SHARED = 4  # boundary lines two swapped units may have in common


def _rotation(orig: list, moved: list):
    """(x, y, z) with moved == orig[:x] + orig[y:z] + orig[x:y] + orig[z:], else None."""
    if len(orig) != len(moved):
        return None
    x = 0
    while x < len(orig) and orig[x] == moved[x]:
        x += 1
    z = len(orig)
    while z > x and orig[z - 1] == moved[z - 1]:
        z -= 1
    # the two units may share their first or last lines (both end with `// end inline asm`):
    # those lines look unchanged, so the rotation may start a little before x or end after z
    for x0 in range(x, max(x - SHARED, 0) - 1, -1):
        for z0 in range(z, min(z + SHARED, len(orig)) + 1):
            for y in range(x0 + 1, z0):
                if moved[x0:z0] == orig[y:z0] + orig[x0:y]:
                    return x0, y, z0
    return None


def _ptxas(text: str) -> str:
    from ptx2py.verify.tools import find_ptxas

    m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.M)
    target = re.search(r"^\s*\.target\s+(\w+)", text, re.M).group(1)
    tool, _ = find_ptxas((int(m.group(1)), int(m.group(2))))
    if tool is None:
        pytest.skip(f"no ptxas for PTX ISA {m.group(1)}.{m.group(2)} "
                    "(verify/tools.py searches PATH and the pip wheels)")
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "k.ptx"
        p.write_text(text)
        r = subprocess.run([tool.path, f"--gpu-name={target}", str(p), "-o", str(Path(d) / "k.cubin")],
                           capture_output=True, text=True)
        return "" if r.returncode == 0 else r.stderr


@pytest.mark.parametrize("sample", SAMPLES)
def test_moving_each_sugared_kind_moves_its_ptx_as_a_unit(sample):
    path = ROOT / "corpus" / "ptx" / sample
    text = path.read_bytes().decode("latin-1")
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(path))
    lines = src.split("\n")
    moves = _moves(src)
    assert len(moves) >= 3, moves
    orig = _norm(text)
    for kind, (a, b, c) in moves:
        moved_lines = lines[:a - 1] + lines[b:c] + lines[a - 1:b] + lines[c:]
        out = transpile.python_to_ptx("\n".join(moved_lines))
        rot = _rotation(orig, _norm(out))
        if (sample, kind) in KNOWN_DEBRIS:
            assert rot is None, f"{sample}: moving {kind} now moves as a unit: take it off KNOWN_DEBRIS"
            continue
        assert rot is not None, f"{sample}: moving the {kind} statement at line {a} did not move its PTX as a unit"
        x, y, z = rot
        unit = orig[x:y]
        for marker in MARKERS:   # a bracket the unit opens or closes is all inside it
            assert unit.count(MARKERS[0]) == unit.count(MARKERS[1]), (sample, kind, unit)
        assert not (orig[x:y] and orig[x] == MARKERS[1]), (sample, kind, "an end marker left at the front")
        err = _ptxas(out)
        assert not err, f"{sample}: after moving the {kind} statement, ptxas: {err[:400]}"


def test_a_use_moved_above_its_definition_is_refused():
    """A register named where it is defined (`ptx.ld.param.b32(K := r[5], ...)`) cannot be read
    above that statement: the move gives a located error, not PTX reading an unset register."""
    path = ROOT / "corpus" / "ptx" / SAMPLES[0]
    text = path.read_bytes().decode("latin-1")
    lines = ptx2py.ptx_to_python(text, sugar=True, filename=str(path)).split("\n")
    at = next(k for k, line in enumerate(lines) if "ptx.ld.param.b32(K := r[5]" in line)
    use = next(k for k, line in enumerate(lines) if k > at and re.search(r"\bK\b", line)
               and line.strip().startswith("ptx.") and line.endswith(")"))
    moved = lines[:at] + [lines[use]] + lines[at:use] + lines[use + 1:]
    with pytest.raises(transpile.DSLError) as e:
        transpile.python_to_ptx("\n".join(moved))
    assert f":{at + 1}:" in str(e.value) and "name 'K' is not defined" in str(e.value)


def test_a_new_guard_with_an_invented_label_assembles():
    """`with skip_if(p, to=L.skip_last):` around a sugared statement, the label the reader's own."""
    path = ROOT / "corpus" / "ptx" / SAMPLES[0]
    text = path.read_bytes().decode("latin-1")
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(path))
    tree = ast.parse(src)
    target = next(n for n in ast.walk(tree) if isinstance(n, ast.Expr) and ast.unparse(n).startswith("mbarrier_wait("))
    lines = src.split("\n")
    indent = " " * target.col_offset
    body = ["    " + line for line in lines[target.lineno - 1:target.end_lineno]]
    guarded = (lines[:target.lineno - 1] + [indent + "with skip_if(p[1], to=L.skip_last):"] + body
               + lines[target.end_lineno:])
    out = transpile.python_to_ptx("\n".join(guarded))
    assert any("@%p1" in line and "bra" in line and "$L__skip_last" in line for line in out.split("\n"))
    assert "$L__skip_last:" in out
    err = _ptxas(out)
    assert not err, err[:400]


# files whose rolled `for` loops stand for statements with layout of their own (Pallas' wgmma
# operand spacing, Triton's tight `{...}` vectors): each iteration's layout is its own table entry
ROLLED = ["pallas/matmul_f16_64x64x32_sm90.ptx", "triton/attn_fwd_fp16_d64_w4_sm90.ptx"]


@pytest.mark.parametrize("sample", SAMPLES + ROLLED)
def test_the_body_holds_no_layout_and_no_loc_strings(sample):
    """Layout keywords and `.loc` mini-language strings live in the trailer, not the kernel body."""
    from ptx2py.transpile.dsl.trivia_table import TRAILER, split_trailer

    path = ROOT / "corpus" / "ptx" / sample
    text = path.read_bytes().decode("latin-1")
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(path))
    assert transpile.python_to_ptx(src) == text
    body, trailer = split_trailer(src)
    if sample in ROLLED:
        assert re.search(r"^ +for \w+ in ", body, re.M)
    assert trailer is not None and TRAILER in trailer
    assert not body.split("\n")[2].startswith("ptx.style(")
    assert re.findall(r"\b(?:fmt|indent|lead|close_indent|close_lead|end_indent|inline)=", body) == []
    assert re.findall(r"""\b(?:at|loc)\(["']|\bat=["']""", body) == []
    long = [n for n in ast.walk(ast.parse(body)) if isinstance(n, ast.Call) and ast.unparse(n.func) == "ptx.comment"
            and isinstance(n.args[0], ast.Constant) and len(n.args[0].value) > 100]
    assert long == []  # Triton's ~1,000-character `// wait for regs: ...` is in the trailer
    assert "wait for regs" not in body or sample.startswith("nvcc")
    assert "inline_asm(" not in body  # one spelling: `asm.<insn>(...)`, `with asm():`


def test_table_lines_fill_around_the_bodys_own_lines():
    from ptx2py.transpile.dsl.trivia_table import merge_lines

    body = [("//", " kept"), "\t// raw"]
    assert merge_lines(["", None, "\t// end inline asm", [""]], body) == [
        "", ("//", " kept"), "\t// end inline asm", "\t// raw"]
    assert merge_lines([["  "]], [("//", " x")]) == ["  // x"]
    assert merge_lines(["a", None], []) == ["a"]                      # a slot the body no longer fills
    assert merge_lines(["a"], [("//", " new")]) == ["a", ("//", " new")]  # a comment the reader added


BRACKETS = ("asm.", "nvasm.")  # a call's own `// begin inline asm` ... `// end inline asm`


def _family(node, aliases) -> str | None:
    """The bracketed family of a statement: `asm.<insn>` / `nvasm.<insn>` calls by their
    instruction, `with asm():` blocks, `mbarrier_wait`, typed families and their aliases; else None."""
    if isinstance(node, ast.With):
        head = ast.unparse(node.items[0].context_expr)
        bracket = head.split("(")[0]
        return "with " + bracket if bracket in ("asm", "nvasm", "asm.here", "nvasm.here") else None
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    head = re.sub(r"^(?:(?:label|at)\([^()]*\)\.)+", "", ast.unparse(node.value.func))
    first = head.split(".", 1)[0]
    if head.startswith(BRACKETS):
        return ".".join(head.split(".")[:3])
    if first in FAMILIES or first in aliases or first == "mbarrier_wait":
        return first
    return None


@pytest.mark.parametrize("sample", SAMPLES[:3])
def test_moving_a_bracketed_call_one_statement_moves_only_its_lines(sample):
    """Each bracketed family's first call swapped with the statement after it (it moves down,
    the other up): the PTX is the original with the two units swapped, brackets and comments
    inside their own unit (a dependent neighbour, one reading a name the call binds, is skipped)."""
    path = ROOT / "corpus" / "ptx" / sample
    text = path.read_bytes().decode("latin-1")
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(path))
    lines = src.split("\n")
    tree = ast.parse(src)
    aliases = {n.targets[0].id for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Attribute)}
    moves = {}

    def visit(body):
        for a, b in zip(body, body[1:]):
            fam = _family(a, aliases)
            if fam is not None and fam not in moves and not isinstance(b, ast.For) and not _binds(a) & _reads(b) \
                    and (_family(b, aliases) is not None or _plain(b) or _kind(b, aliases) == "at"):
                moves[fam] = (a.lineno, a.end_lineno, b.end_lineno)
        for n in body:  # (not into a rolled `for`: its body stands for several copies)
            if isinstance(getattr(n, "body", None), list) and not isinstance(n, ast.For):
                visit(n.body)

    visit(tree.body)
    assert len(moves) >= 3, moves
    orig = _norm(text)
    for fam, (a, b, c) in sorted(moves.items()):
        out = transpile.python_to_ptx("\n".join(lines[:a - 1] + lines[b:c] + lines[a - 1:b] + lines[c:]))
        rot = _rotation(orig, _norm(out))
        assert rot is not None, f"{sample}: moving the {fam} call at line {a} changed more than the moved lines"
        x, y, _ = rot
        assert orig[x:y].count(MARKERS[0]) == orig[x:y].count(MARKERS[1]), (sample, fam, orig[x:y])
