"""Linter (lint/rules.py) and the instruction tables (ptxgrammar/isa):
no false positives on valid PTX, every listed invalid instruction caught with its rule."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest
from conftest import (
    CASES,
    CORPUS,
    EXTERNAL,
    corpus_files,
    external_files,
    needs,
    probe_files,
    sample,
    small,
)

from ptx2py import ptxgrammar
from ptx2py.lint import RULES, Violation, check_instruction, lint_module, lint_text
from ptx2py.lint.operands import function_declarations
from ptx2py.ptxgrammar.isa import spec

INVALID = CASES / "lint" / "invalid.txt"
KNOWN_EXTERNAL = CASES / "lint" / "external_known_invalid.txt"

MODULE = """\
.version {version}
.target {target}
.address_size 64

.visible .entry k()
{{
\t.reg .b32 %r<200>;
\t.reg .b64 %rd<20>;
\t.reg .pred %p<8>;
\t.reg .f32 %f<200>;
\t.reg .b16 %h<10>;
\t.local .align 4 .b8 lmem[16];
\t{instruction}
\tret;
}}
"""
INSTRUCTION_LINE = 13


def invalid_cases():
    out = []
    for n, line in enumerate(INVALID.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        head, rest = line.split("|", 1)
        instruction, rule = (x.strip() for x in rest.rsplit("|", 1))
        target, version = head.split()
        out.append(pytest.param(target, version, instruction, rule, id=f"L{n}-{rule}"))
    return out


def lint_path(path) -> list[str]:
    text = ptxgrammar.read_ptx(str(path))
    return [str(v) for v in lint_module(ptxgrammar.parse(text, str(path)), str(path))]


# --- tables ---------------------------------------------------------------------------------

def test_tables_load_and_validate():
    table = spec.load()
    for op in ("ld", "st", "cp", "mbarrier", "fence", "membar", "bar", "barrier", "wgmma", "tcgen05", "mma",
               "ldmatrix", "stmatrix", "setmaxnreg", "elect", "redux", "atom", "red", "shfl", "vote", "match",
               "cvt", "prmt", "add", "sub", "mul", "mad", "fma", "div", "rem", "abs", "neg", "min", "max", "setp",
               "selp", "mov", "and", "or", "xor", "not", "shl", "shr", "lop3", "cvta"):
        assert op in table, op


def test_table_errors_are_reported():
    with pytest.raises(spec.SpecError):
        spec._build(dict(op="x", groups={"a": ".p"}, required=("b",)), "t")
    with pytest.raises(spec.SpecError):
        spec._build(dict(op="x", groups={"a": "p"}), "t")
    with pytest.raises(spec.SpecError):
        spec._build(dict(op="x", since="8"), "t")
    with pytest.raises(spec.SpecError):
        spec._build(dict(op="x", bogus=1), "t")


# --- invalid instructions ---------------------------------------------------------------------

CASE_LIST = invalid_cases()


def test_at_least_forty_invalid_cases():
    assert len(CASE_LIST) >= 40
    assert {p.values[3] for p in CASE_LIST} >= set(RULES) - {"unknown-opcode", "duplicate-declaration"}


@pytest.mark.parametrize("target, version, instruction, rule", CASE_LIST)
def test_invalid_instruction_is_rejected(target, version, instruction, rule):
    text = MODULE.format(version=version, target=target, instruction=instruction)
    violations = lint_text(text, "case.ptx")
    assert rule in [v.rule for v in violations], [str(v) for v in violations]
    hit = next(v for v in violations if v.rule == rule)
    # the column is the operand's or modifier's at fault (the instruction's own when it is the whole)
    assert (hit.file, hit.line) == ("case.ptx", INSTRUCTION_LINE) and hit.col >= 2
    assert f"error: [{rule}]" in str(hit)
    # the per-instruction API the DSL calls agrees
    module = ptxgrammar.parse(text, "c")
    function = next(n for n in module.walk() if isinstance(n, ptxgrammar.Function))
    instr = next(n for n in module.walk() if isinstance(n, ptxgrammar.Instruction) and n.opcode != "ret")
    found = check_instruction(instr, version, (target,), function_declarations(function), allow_unknown=())
    assert any(m.startswith(f"[{rule}]") for m in found), found


def test_same_instructions_are_fine_where_supported():
    ok = [("sm_90a", "8.0", "wgmma.fence.sync.aligned;"),
          ("sm_100a", "8.6", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;"),
          ("sm_80", "7.0", "cp.async.ca.shared.global [%r1], [%rd1], 4;"),
          ("sm_90a", "8.0", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
           + ", ".join(f"%f{i}" for i in range(32)) + "}, %rd1, %rd2, 1, 1, 1, 0, 0;"),
          ("sm_80", "7.0", "ld.global.nc.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1+16];"),
          ("sm_80", "7.0", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4},"
           " {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f3, %f4, %f5, %f6};")]
    for target, version, instruction in ok:
        text = MODULE.format(version=version, target=target, instruction=instruction)
        assert lint_text(text, "ok.ptx") == [], instruction


def test_percent_names_resolve_to_their_declarations():
    # identifiers may begin with `%`: a `.global` variable and a label so named are no registers,
    # and a variable so named still cannot stand where a register is written
    text = (".version 9.0\n.target sm_90a\n.address_size 64\n.global .b32 %g;\n.visible .entry k()\n{\n"
            "\t.reg .b32 %r<2>;\n\t.reg .pred %p<2>;\n\tld.global.u32 %r1, [%g];\n%L:\n\t@%p1 bra %L;\n"
            "\tmov.u32 %g, 1;\n\tret;\n}\n")
    (v,) = lint_text(text, "pct.ptx")
    assert (v.rule, v.line) == ("operand-kind", 12) and "`%g` is a .global variable" in v.message


def test_unknown_opcode_is_reported_with_a_suggestion_unless_allowed():
    text = MODULE.format(version="9.0", target="sm_100a", instruction="frobnicate.sync.b32 %r1, %r2;")
    (v,) = lint_text(text, "f.ptx")
    assert (v.rule, v.severity, v.line) == ("unknown-opcode", "error", INSTRUCTION_LINE)
    assert "unknown instruction `frobnicate`" in v.message
    assert lint_text(text, "f.ptx", allow_unknown=("frobnicate",)) == []
    text = MODULE.format(version="9.0", target="sm_100a", instruction="shfll.sync.idx.b32 %r1, %r2, 0, 31, -1;")
    (v,) = lint_text(text, "f.ptx")
    assert "did you mean `shfl`?" in v.message


def test_every_opcode_of_the_isa_has_a_table():
    from ptx2py.ptxgrammar.isa import spellings

    assert sorted(set(spellings.OPCODES) - set(spec.load())) == []


def test_finding_columns_point_at_the_operand_or_modifier():
    text = MODULE.format(version="8.0", target="sm_90", instruction="add.ftz.s32 %r1, %r2, %f3;")
    found = {v.rule: v.col for v in lint_text(text, "c.ptx")}
    line = text.splitlines()[INSTRUCTION_LINE - 1]
    assert line[found["modifier-type"] - 1:].startswith(".ftz")
    assert line[found["register-class"] - 1:].startswith("%f3")


def test_positions_with_crlf_guards_and_comments():
    text = (".version 8.0\r\n.target sm_80\r\n.address_size 64\r\n.visible .entry k()\r\n{\r\n"
            "\t.reg .pred %p<2>; /* x\r\n y */ @%p1 wgmma.fence.sync.aligned;\r\n\tret;\r\n}\r\n")
    (v,) = [v for v in lint_text(text, "p.ptx") if v.rule == "target"]
    assert (v.line, v.col) == (7, 7)


def test_violation_format():
    v = Violation("a.ptx", 3, 5, "target", "msg")
    assert str(v) == "a.ptx:3:5: error: [target] msg"


# --- no false positives -----------------------------------------------------------------------

def test_no_false_positives_on_probes():
    files = probe_files()
    if not files:
        pytest.skip("ptx-syntax-probes not present")
    found = [m for f in files for m in lint_path(f)]
    assert found == [], found[:20]


@needs(CORPUS)
def test_no_false_positives_on_a_corpus_sample():
    files = sample(small(corpus_files(), 100_000), 40)
    found = [m for f in files for m in lint_path(f)]
    assert found == [], found[:20]


def _lint_many(files):
    with ProcessPoolExecutor() as pool:
        return [m for ms in pool.map(lint_path, files, chunksize=4) for m in ms]


@pytest.mark.slow
@needs(CORPUS)
def test_no_false_positives_on_the_whole_corpus():
    found = _lint_many(corpus_files())
    assert found == [], found[:20]


def _known_external() -> set[str]:
    return {line.strip() for line in KNOWN_EXTERNAL.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


@pytest.mark.slow
@needs(EXTERNAL)
def test_external_corpus_only_known_invalid_lines():
    """pyptx's corpus holds PTX that ptxas rejects (LLVM test fragments at .version 8.5 with
    sm_100a features, a few hand-written mistakes); every violation must be one of those
    ptxas-confirmed lines, and nothing else may be reported."""
    known = _known_external()
    found = set()
    for f in external_files():
        for v in lint_module(ptxgrammar.parse(ptxgrammar.read_ptx(str(f)), str(f)), str(f)):
            found.add(f"{f.relative_to(EXTERNAL)}:{v.line} {v.rule}")
    assert found - known == set(), sorted(found - known)[:20]
    # and every known-invalid line is still caught (the list is not only a filter)
    assert known - found == set(), sorted(known - found)[:20]


# --- command line -----------------------------------------------------------------------------

def _cli(*args, cwd=None):
    from conftest import ROOT

    return subprocess.run([sys.executable, str(ROOT / "cli.py"), "lint", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_cli_exit_codes(tmp_path):
    good = tmp_path / "good.ptx"
    good.write_text(MODULE.format(version="8.0", target="sm_90a", instruction="wgmma.fence.sync.aligned;"))
    bad = tmp_path / "bad.ptx"
    bad.write_text(MODULE.format(version="8.0", target="sm_80", instruction="wgmma.fence.sync.aligned;"))
    broken = tmp_path / "broken.ptx"
    broken.write_text(".version 8.0\n.target sm_80\n.entry k( { ret; }\n")
    r = _cli(str(good))
    assert r.returncode == 0, r.stdout + r.stderr
    r = _cli(str(bad))
    assert r.returncode == 1
    assert f"{bad}:{INSTRUCTION_LINE}:2: error: [target]" in r.stdout
    r = _cli(str(broken))
    assert r.returncode == 2 and "error" in r.stderr
    r = _cli(str(tmp_path))     # a folder: all three
    assert r.returncode == 2 and "[target]" in r.stdout


def test_cli_allow_unknown(tmp_path):
    path = tmp_path / "u.ptx"
    path.write_text(MODULE.format(version="8.0", target="sm_90a", instruction="frob.b32 %r1;"))
    r = _cli(str(path))
    assert r.returncode == 1 and "[unknown-opcode] unknown instruction `frob`" in r.stdout
    assert _cli(str(path), "--allow-unknown", "frob,knob").returncode == 0
    listing = tmp_path / "allowed.txt"
    listing.write_text("# opcodes of a newer PTX\nfrob\n")
    assert _cli(str(path), "--allow-unknown", f"@{listing}").returncode == 0
