"""Named inlined frames (`kernels_215 = inlined(fn=0, at=(1, 215, 9))`, used as
`at(207, 12, kernels_215)`: sugar/frames.py, sugar/srcloc.py), LLVM's debug-scope labels left
to `scope_labels()` (sugar/scopelabels.py, transpile/dsl/scopelabels.py) and the other debug
labels as a prefix (`label(L.tmp1).at(...).max.f32(...)`: sugar/debuglabels.py), spelled by
transpile/dsl/locs.py and transpile/dsl/structured.py."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT
from inlined_snippet import FILE, HEAD, body_lines

import ptx2py
from ptx2py import transpile
from ptx2py.transpile.dsl.errors import DSLError
from ptx2py.transpile.dsl.trivia_table import TRAILER
from ptx2py.transpile.format import black_format

# kernels whose source inlines small functions (scans, reductions)
SCANS = ["cummax_2d_fp32_sm90", "cumsum_i32_b4096_w8_sm90", "linear_recurrence_fp32_sm90"]
REDUCTIONS = ["softmax_fp32_b16384_w16_sm90", "attn_fwd_fp16_d64_w8_causal_sm90"]
FRAME_DEF = re.compile(r"^(\w+) = inlined\(fn=\d+, at=\(\d+, \d+, \d+\)(?:, file=\d+)?\)$", re.M)
PREFIXED = re.compile(r"^ +label\((L\.\w+)\)\.", re.M)


def _sugar(name):
    path = ROOT / "corpus" / "ptx" / "triton" / f"{name}.ptx"
    text = path.read_bytes().decode("latin-1")
    return text, ptx2py.ptx_to_python(text, sugar=True, filename=str(path))


def _branch_targets(ptx: str) -> set:
    """Every label a `bra`/`brx.idx`/`.branchtargets` line of the PTX names (read off the text)."""
    out = set(re.findall(r"\bbra(?:\.uni)?\s+(\$?[\w$]+)\s*;", ptx))
    for m in re.finditer(r"\.branchtargets\s+([^;]*);", ptx):
        out.update(x.strip() for x in m.group(1).split(","))
    return out


@pytest.mark.parametrize("name", SCANS + REDUCTIONS)
def test_scan_and_reduction_kernels_round_trip_with_the_new_forms(name):
    text, src = _sugar(name)
    assert transpile.python_to_ptx(src) == text
    assert black_format(src) == src
    body = src.split(TRAILER)[0]
    labels = len(re.findall(r"^\$L__tmp\d+:$", text, re.M))
    assert re.search(r"^    scope_labels\(\)$", body, re.M)
    assert len(re.findall(r"\blabel\(L\.tmp", body)) < labels / 3, "the scope labels are still in the body"
    assert PREFIXED.findall(body), "no debug label the rule leaves joined its instruction"
    assert all(len(line) <= 88 for line in src.split("\n") if line.lstrip().startswith("label("))
    if name in SCANS:
        frames = FRAME_DEF.findall(src)
        assert frames
        for frame in frames:  # each one used, and in the `at(line, col, frame)` form
            assert re.search(rf"^ +at\(\d+, \d+, {frame}\)\.", src, re.M), frame


def test_the_frame_is_defined_once_after_srcmap():
    _, src = _sugar("cummax_2d_fp32_sm90")
    lines = src.split("\n")
    assert lines[2].startswith("srcmap(")
    assert lines[3] == "kernels_215 = inlined(fn=0, at=(1, 215, 9))"
    assert src.count("kernels_215 = ") == 1
    assert "inlined_at=(1, 215, 9)" not in src  # every use spelled with the name
    assert "    at(207, 12, kernels_215).max.f32(y_41 := r[170], y_39, y_38)" in lines  # $L__tmp3: left to the rule


@pytest.mark.parametrize("name", SCANS)
def test_renaming_a_frame_variable_emits_the_same_ptx(name):
    text, src = _sugar(name)
    for frame in FRAME_DEF.findall(src):
        renamed = re.sub(rf"\b{frame}\b", "combine_frame", src)
        assert renamed != src
        assert transpile.python_to_ptx(renamed) == text


@pytest.mark.parametrize("name", SCANS + REDUCTIONS + ["matmul_tma_fp16_sm90"])
def test_branch_targets_are_never_prefixed(name):
    text, src = _sugar(name)
    targets = _branch_targets(text)
    for atom in PREFIXED.findall(src):
        spelled = "$L__" + atom[2:]
        assert spelled not in targets, atom
        assert re.search(rf"^{re.escape(spelled)}:$", text, re.M)  # a label of the input, kept


LOOPED = """.version 8.0
.target sm_80
.address_size 64

.visible .entry k()
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<20>;

	.loc	1 5 3
	mov.u32 	%r1, 0;
$L__BB0_1:
	.loc	1 6 3
	add.s32 	%r1, %r1, 1;
$L__tmp0:
	.loc	1 7 12, function_name $L__info_string0, inlined_at 1 6 3
	add.s32 	%r2, %r1, 1;
$L__tmp1:
	.loc	1 9 12, function_name $L__info_string0, inlined_at 1 6 3
	add.s32 	%r3, %r2, 1;
$L__tmp2:
	.loc	1 7 12, function_name $L__info_string0, inlined_at 1 6 3
	add.s32 	%r4, %r3, 1;
	setp.lt.u32 	%p1, %r1, 10;
	@%p1 bra 	$L__BB0_1;
$L__tmp3:
	.loc	1 11 3
	ret;

}
	.file	1 "/src/kernels.py"
"""


def test_a_loop_body_keeps_its_loop_label_and_joins_its_debug_labels():
    src = ptx2py.ptx_to_python(LOOPED, sugar=True)
    assert transpile.python_to_ptx(src) == LOOPED
    assert black_format(src) == src
    assert "kernels_6 = inlined(fn=0, at=(1, 6, 3))" in src
    assert "L.bb0_1" not in PREFIXED.findall(src)
    assert re.search(r"with loop\(L\.bb0_1\b", src)
    assert "    p, r = regs(pred=3, b32=20)\n    scope_labels()\n" in src
    # $L__tmp0 and $L__tmp3 stand where the inlined call starts and ends: left to the rule;
    # $L__tmp1 and $L__tmp2 (inside the call) are not the rule's: they stay, joined
    assert "        at(7, 12, kernels_6).add.s32(r[2], iv, 1)\n" in src
    for n, line, col in ((1, 9, 12), (2, 7, 12)):
        assert f"label(L.tmp{n}).at({line}, {col}, kernels_6).add.s32(" in src
    assert "    at(11, 3).ret()\n" in src
    assert "L.tmp0" not in src and "L.tmp3" not in src


def test_a_label_named_by_a_branch_keeps_its_own_line():
    ptx = LOOPED.replace("\t@%p1 bra \t$L__BB0_1;\n", "\t@%p1 bra \t$L__BB0_1;\n\t@%p1 bra \t$L__tmp3;\n")
    src = ptx2py.ptx_to_python(ptx, sugar=True)
    assert transpile.python_to_ptx(src) == ptx
    assert "    ptx.label(L.tmp3)\n" in src   # a branch target stays in sight, on its own line
    assert "L.tmp3" not in PREFIXED.findall(src) and "L.tmp1" in PREFIXED.findall(src)
    assert "L.tmp0" not in src and "scope_labels()" in src


def test_a_frame_used_twice_is_written_in_place():
    ptx = LOOPED.replace("$L__tmp2:\n\t.loc\t1 7 12, function_name $L__info_string0, inlined_at 1 6 3\n", "$L__tmp2:\n")
    src = ptx2py.ptx_to_python(ptx, sugar=True)
    assert transpile.python_to_ptx(src) == ptx
    assert "inlined(" not in src
    assert "fn=0, inlined_at=(1, 6, 3)" in src


def test_a_frame_name_the_module_binds_already_is_not_reused():
    ptx = LOOPED.replace(".visible .entry k()", ".global .align 4 .b32 kernels_6;\n\n.visible .entry k()")
    ptx = ptx.replace("\tmov.u32 \t%r1, 0;\n", "\tmov.u32 \t%r1, kernels_6;\n")
    src = ptx2py.ptx_to_python(ptx, sugar=True)
    assert transpile.python_to_ptx(src) == ptx
    frames = FRAME_DEF.findall(src)
    assert len(frames) == 1 and frames[0] != "kernels_6"
    assert re.search(r"^kernels_6 = var\.", src, re.M)


TAIL = "    ptx.ret()\n"


def _body(body: str) -> list:
    return body_lines(body, TAIL)


def test_the_prefixes_record_label_then_loc_then_instruction():
    got = _body("    label(L.tmp4).at(7, 12, k_6).add.s32(r[1], r[2], 1)\n")
    assert got == ["$L__tmp4:", ".loc 1 7 12, function_name $L__info_string0, inlined_at 1 6 3",
                   "add.s32 %r1, %r2, 1;", "ret;"]


def test_a_frame_in_another_file_and_the_loc_and_keyword_forms():
    body = ("    f2 = inlined(fn=3, at=(1, 6, 3), file=2)\n    loc(40, 1, f2)\n"
            "    ptx.add.s32(r[1], r[2], 1, at=at(41, 2, f2))\n    label(L.tmp9).asm.mov.u32(r[3], 0)\n")
    got = _body(body)
    assert got == [".loc 2 40 1, function_name $L__info_string3, inlined_at 1 6 3",
                   ".loc 2 41 2, function_name $L__info_string3, inlined_at 1 6 3", "add.s32 %r1, %r2, 1;",
                   "$L__tmp9:", "// begin inline asm", "mov.u32 %r3, 0;", "", "// end inline asm", "ret;"]


@pytest.mark.parametrize("body, message", [
    ("    at(7, 12, k_6, fn=1).add.s32(r[1], r[2], 1)\n", "the frame gives file, fn and inlined_at"),
    ("    label(3).add.s32(r[1], r[2], 1)\n", "label(3): a label name"),
    ("    bad = inlined(fn=0, at=(6, 3))\n", "at is the call site (file, line, column)"),
    ("    bad = inlined(fn='x', at=(1, 6, 3))\n", "fn is the index N of $L__info_stringN"),
])
def test_bad_uses_say_what_is_wrong(body, message):
    with pytest.raises(DSLError, match=re.escape(message)):
        transpile.python_to_ptx(HEAD + body + TAIL + FILE)
