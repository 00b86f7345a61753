"""verify shows first what ptxas says differently about the edit (warnings and the `info`
advisories: wgmma serialisation, an injected wgmma.wait_group, spills, setmaxnreg, stack), located
at the PTX and the Python line; SASS changes ranked by what they touch."""

from __future__ import annotations

import pytest
from conftest import CORPUS, ROOT, needs

from ptx2py.verify import diagnostics, sass, tools
from ptx2py.verify import report as verify
from ptx2py.verify.locate import Source

PTXAS_94 = tools.find_ptxas((9, 4))[0]
needs_ptxas_94 = pytest.mark.skipif(PTXAS_94 is None, reason="no ptxas for PTX ISA 9.4 (pip install '.[cuda-tools]')")
needs_disasm = pytest.mark.skipif(tools.find_disassembler()[0] is None, reason="no cuobjdump/nvdisasm")
WORKED = ROOT / "examples" / "worked_matmul"
MATMUL = CORPUS / "triton" / "matmul_tma_fp16_sm90.ptx"

STDERR = """ptxas info    : (C7517) wgmma.wait_group is injected in around line 7 by compiler to allow use of \
registers defined by GMMA in function 'k'
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 90 registers, used 1 barriers
ptxas-blackwell info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to \
the presence of Extern calls in the function 'k'
ptxas /tmp/x/module.ptx, line 6; warning : Register r1 is used before defined
ptxas info    : Compile time = 97.603 ms
"""
PTX = ".version 8.0\n.target sm_90a\n.entry k()\n{\n\t.reg .b32 %r<2>;\n\tadd.s32 %r1, %r1, 1;\n\tret;\n}\n"


def test_advisories_are_the_warnings_and_the_info_lines_that_are_not_figures():
    got = diagnostics.advisories(STDERR)
    assert [(d.kind, d.message.split(")")[0], d.ptx_line) for d in got] == [
        ("info", "(C7517", 7), ("info", "(C7514", 0), ("warning", "Register r1 is used before defined", 6)]


def test_only_what_differs_is_reported_new_then_gone_a_shifted_line_is_the_same():
    base = diagnostics.advisories(STDERR.replace("around line 7", "around line 5").split("ptxas-blackwell")[0])
    edited = diagnostics.advisories(STDERR)
    src = Source("k.ptx", PTX)
    diffs = diagnostics.differing(base, edited, src, src, PTX, PTX)
    assert [(d["change"], d["code"]) for d in diffs] == [("new", "C7514"), ("new", None)]
    gone = diagnostics.differing(edited, base, src, src, PTX, PTX)
    assert [d["change"] for d in gone] == ["gone", "gone"]


def test_a_diagnostic_of_python_input_names_the_python_line_and_the_ptx_line():
    py = "from ptx2py.dsl import *\n\nwith kernel():\n    ptx.add.s32(r[1], r[1], 1)\n    ptx.ret()\n"
    src = Source("k.py", py, {6: 4, 7: 5}, True)
    [d] = diagnostics.differing([], diagnostics.advisories(STDERR)[2:], Source("b.ptx", PTX), src, PTX, PTX)
    assert (d["ptx_line"], d["python_line"]) == (6, 4)
    first, line, _caret, note = d["located"].splitlines()
    assert first.startswith("k.py:4:") and "warning: Register r1" in first
    assert line == "    ptx.add.s32(r[1], r[1], 1)" and note == "  (PTX line 6: `add.s32 %r1, %r1, 1;`)"


@needs_ptxas_94
@needs(CORPUS)
def test_deleting_the_epilogue_wait_is_reported_first_at_its_python_line(tmp_path):
    """The worked example without its epilogue `wgmma.wait_group 0`: ptxas injects one (C7517)
    or serialises the wgmmas (C7514); either is new, told first, and the verify exits 1."""
    lines = (WORKED / "matmul_sugar.py").read_text().splitlines(keepends=True)
    at = next(k for k, x in enumerate(lines) if "wgmma.wait_group.sync.aligned(0)" in x)
    assert lines[at - 1].strip() == "with asm():"
    edited = tmp_path / "nowait.py"
    edited.write_text("".join(lines[:at - 1] + lines[at + 1:]))
    report = verify.verify_files(str(MATMUL), str(edited))
    new = [d for d in report["diagnostics"] if d["change"] == "new"]
    assert new and new[0]["code"] in ("C7514", "C7517") and new[0]["python_line"], report["diagnostics"]
    assert report["exit"] == 1
    text = verify.format_report(report)
    assert text.splitlines()[0].startswith("ptxas diagnostics that differ from the base: ")
    assert text.splitlines()[1].startswith(f"  new: {edited}:{new[0]['python_line']}:")
    assert "ptxas diagnostics differ (" in verify.verdict(report)
    from ptx2py.verify.html import render_html

    assert "ptxas diagnostics that differ from the base</h3><pre>new: " in render_html(report)


@needs_ptxas_94
@needs_disasm
@needs(CORPUS)
def test_a_moved_mbarrier_wait_leads_the_sass_summary(tmp_path):
    """The loop's mbarrier wait moved three instructions down (still before the bar.sync and
    the shared loads): the wait's SYNCS leads, not the uniform address arithmetic around it."""
    lines = MATMUL.read_text().split("\n")
    begin = next(k for k, x in enumerate(lines) if "mbarrier.try_wait" in x) - 7
    end = next(k for k in range(begin, len(lines)) if lines[k].strip() == "// end inline asm") + 1
    assert lines[begin].strip() == "// begin inline asm" and lines[end + 3].strip().startswith("add.s32")
    moved = lines[:begin] + lines[end:end + 4] + lines[begin:end] + lines[end + 4:]
    edited = tmp_path / "moved.ptx"
    edited.write_text("\n".join(moved))
    report = verify.verify_files(str(MATMUL), str(edited))
    assert report["exit"] == 0 and not report["diagnostics"]
    first = verify.format_report(report).splitlines()[2]
    assert "SYNCS" in first, verify.format_report(report)
    wait = next(k for k, x in enumerate(moved, 1) if "mbarrier.try_wait" in x)
    assert first.endswith(f"(PTX line {wait})")        # ptxas's line info, pointed at the PTX itself


@needs_ptxas_94
@needs_disasm
@needs(CORPUS)
def test_a_sass_change_names_the_ptx_and_the_python_line_that_made_it():
    edited = WORKED / "matmul_edited.py"
    report = verify.verify_files(str(MATMUL), str(edited))
    ptx = report["edited_ptx"].split("\n")
    py = edited.read_text().splitlines()
    line = next(x for x in verify.format_report(report).splitlines() if "changed: WARPGROUP.DEPBAR" in x)
    at_ptx = [k for k, x in enumerate(ptx, 1) if "wgmma.wait_group.sync.aligned 0;" in x]
    at_py = next(k for k, x in enumerate(py, 1) if "at(265, 15).wgmma.wait_group.sync.aligned(0)" in x)
    assert any(line.endswith(f"(PTX line {n}, {edited}:{at_py})") for n in at_ptx), line


def test_the_located_copy_points_every_instruction_at_its_own_line():
    from ptx2py.verify.lineinfo import SELF, self_located

    ptx = ('.version 8.0\n.target sm_90a\n.address_size 64\n.entry k()\n{\n\t.reg .b32 %r<2>;\n'
           '\t.loc\t2 7 1\n\tadd.s32 %r1, %r1, 1;\n$L: // x\n\t@%p bra $L;\n\tret;\n}\n\t.file\t2 "k.py"\n')
    out = self_located(ptx).split("\n")
    assert f'\t.file\t1 "{SELF}"' in out and not any(".loc\t2" in x or "k.py" in x for x in out)
    locs = [x for x in out if x.startswith("\t.loc")]
    assert locs == ["\t.loc\t1 8 1", "\t.loc\t1 10 1", "\t.loc\t1 11 1"]   # add, bra, ret: their lines in `ptx`


def test_changes_rank_by_what_they_touch():
    def stream(texts):
        return [sass.SassInstr(16 * n, t) for n, t in enumerate(texts)]

    base = stream(["UMOV UR10, 0x40", "IADD3 R1, R2, R3, RZ", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR11], R7",
                   "LDS R4, [R5]", "BAR.SYNC.DEFER_BLOCKING 0x0", "EXIT"])
    edited = stream(["UMOV UR27, 0x2", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR11], R7", "IADD3 R1, R2, R3, RZ",
                     "LDS.U8 R4, [R5]", "BAR.SYNC.DEFER_BLOCKING 0x0", "EXIT"])
    k = sass.compare_kernel(base, edited)
    assert [c["family"] for c in k["changed"]] == ["shared memory", "constant/uniform"]
    lines = verify.sass_lines(k, None, False)[1:]
    assert lines[0].startswith("    moved:   SYNCS") or lines[0].startswith("    changed: LDS")
    assert lines[-1].startswith("    changed: UMOV"), lines
