"""One spelling per instruction family in `--sugar` output (sugar/spelling.py): every TMA,
mbarrier, wgmma, tcgen05, mma, ldmatrix, stmatrix instruction is its typed call with keyword
operands, coordinates are separate values, accumulators, pipeline stage and phase registers
and descriptor bits are named (sugar/tensorcore.py, sugar/roles.py)."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT, corpus_files, external_files, file_id, sample, small
from test_sugar import roundtrips

import ptx2py
from ptx2py import ptxgrammar
from ptx2py.sugar.spelling import check

# (`cp.async.ca`/`.cg`: Ampere's copies, one spelling through their `cp_async` alias)
FAMILY = re.compile(r"\b(wgmma\.mma_async|cp\.async\.bulk|cp\.async\.c[ag]\.|mbarrier\.|tcgen05\.|mma\.sync|ldmatrix"
                    r"|stmatrix)")


def _with_families(files):
    return [p for p in files if FAMILY.search(p.read_text(errors="replace"))]


TENSOR = _with_families(small(corpus_files(), 400_000))


def _sugar(path):
    text = ptxgrammar.read_ptx(path)
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(path))
    assert roundtrips(text) is not None
    return src


def test_the_checker_finds_plain_and_positional_spellings():
    src = "\n".join([
        "asm.mbarrier.arrive.expect_tx.shared__cta.b64(sink, [r[6]], 32768)",
        "mbarrier_arrive.expect_tx.shared__cta.b64([r[6]], bytes=32768)",
        "cp_async = asm.cp.async_.bulk.tensor._2d.shared__cta.global_.mbarrier__complete_tx__bytes",
        "cp_async([r[1]], [rd[1], (r[2], r[3])], [r[4]])",
        "asm.cp_async_bulk_tensor._2d.global_.shared__cta.bulk_group(dst=[rd[1], r[2:4]], src=[r[1]])",
        "ptx.cp.async_.bulk.commit_group()",
        "asm.at(1, 2, 3).wgmma_mma.m64n128k16.f32.f16.f16(d=acc, a=rd[4], b=rd[5], scale_d=p[27])",
    ])
    got = check(src)
    assert [g.split(":")[0] for g in got] == ["1", "2", "4", "5"]
    assert "spelled plain" in got[0] and "positional" in got[1] and "spelled plain" in got[2]
    assert "register range" in got[3]


def test_the_checker_finds_a_call_spelled_without_its_alias():
    src = "\n".join([
        "cp_async = asm.here.cp.async_.ca.shared.global_",
        "cp_async([r[1] + 0], [rd[1] + 0], imm(\"0x4\"), r[2])",
        "asm.at(242, 13).cp.async_.ca.shared.global_([r[1] + 0], [rd[1] + 0], imm(\"0x4\"), r[2])",
        "asm.here.cp.async_.ca.shared.global_([r[1] + 0], [rd[1] + 0], imm(\"0x4\"), r[2])",
        "asm.cp.async_.cg.shared.global_([r[1] + 0], [rd[1] + 0], 16)",
        "ptx.cp.async_.commit_group()",
    ])
    got = check(src)
    assert [g.split(":")[0] for g in got] == ["3", "4"] and all("without its alias cp_async" in g for g in got)


FP32_MATMUL = ROOT / "corpus" / "ptx" / "triton" / "matmul_fp32_64x64x32_w4s3_sm80.ptx"


def test_cp_async_is_spelled_through_its_alias_in_loops_too():
    """Rolled `for` loops keep the alias (`cp_async(...)`), not `asm.at(...).cp.async_...`."""
    src = _sugar(FP32_MATMUL)
    assert "\n    for i in range(8):\n        ptx.add.s32(" in src
    assert src.count(".cp.async_.ca.shared.global_") == 1  # the alias line
    assert src.count("cp_async(") >= 19 and check(src) == []


def test_a_plain_call_no_typed_form_can_hold_is_not_a_spelling_problem():
    """A wgmma without its transpose immediates (ptxas: "Arguments mismatch") has no typed
    form, so sugar leaves it plain; the full operand list is reported when left plain."""
    head = "ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
    assert check(f"{head}(r[0:64], rd[0], rd[1], 1, 1, 1)\n") == []
    got = check(f"{head}(r[0:64], rd[0], rd[1], p[1], 1, 1, 0, 0)\n")
    assert len(got) == 1 and "wgmma_mma spelled plain" in got[0]


def test_tcgen05_ld_inside_an_inlined_call_is_typed():
    """`at(58, 22, fn=9, inlined_at=(1, 124, 5)).` (a nested tuple in the prefix) still leads a
    typed tcgen05.ld (it was left plain under an alias of its own)."""
    src = _sugar(ROOT / "corpus" / "ptx" / "nvcc" / "tcgen05_sm100.sm_100a.lineinfo.ptx")
    assert check(src) == [] and "asm_tcgen05_ld" not in src


def test_inline_asm_has_one_spelling():
    """`asm` for one statement and for a bracket of several; `inline_asm` runs the same but the
    checker reports it (sugar writes `with asm():`)."""
    from ptx2py import transpile

    got = check("with inline_asm(block=True):\n    pass\nwith at(line=1, col=2).inline_asm():\n    pass\n"
                "with asm():\n    pass\nwith nvasm(block=True):\n    pass\nasm.bar.sync(0)\n")
    assert [g.split(":")[0] for g in got] == ["1", "3"] and all("asm(...)" in g for g in got)
    body = "\n".join([".version 8.0", ".target sm_90a", ".address_size 64", "", ".visible .entry k()", "{",
                       "\t.reg .b32 \t%r<4>;", "\t// begin inline asm", "\tmov.u32 %r1, 0;", "\tmov.u32 %r2, 1;", "",
                       "\t// end inline asm", "\tret;", "}", ""])
    src = roundtrips(body)
    assert "    with asm():\n" in src and check(src) == []
    long = src.replace("with asm():", "with inline_asm():")
    assert long != src and transpile.python_to_ptx(long) == body


@pytest.mark.parametrize("path", sample(TENSOR, 6), ids=file_id)
def test_one_spelling_per_family(path):
    assert check(_sugar(path)) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", _with_families(corpus_files() + external_files()), ids=file_id)
def test_one_spelling_per_family_everywhere(path):
    assert check(_sugar(path)) == []


TMA = ROOT / "corpus" / "ptx" / "triton" / "matmul_tma_fp16_sm90.ptx"


def test_roles_are_named_in_a_tma_matmul():
    src = _sugar(TMA)
    assert "    acc = r[125:189]\n" in src and re.search(r"d=acc, a=\w+, b=\w+", src)
    assert "bytes=32768" in src and "tx_count" not in src
    assert "# 0x4000004000000000: the wgmma shared-memory descriptor bits" in src
    # named from their initialisation on (sugar/regnames.py), not only inside the loop; the
    # prologue's TMA loads read the same register as their coordinate 0 (LLVM's one zero)
    assert "ptx.mov.b32(stage := r[123], -1)" in src and "ptx.mov.b32(phase := r[122], 0)" in src
    assert "        stage = r[123]\n" not in src and "(phase, " in src
    assert "        bar_base = 98304\n" in src and re.search(r"ptx\.add\.s32\(\w+ := r\[27\], \w+, bar_base\)", src)
    assert re.search(r"ptx\.selp\.b32\(stage, 0, \w+, \w+\)", src)
    assert re.search(r"mbarrier_wait\(\[bar_?\d*\], phase,", src)
    renamed = re.sub(r"(?<![\w.])acc(?!\w)", "accum", src)
    renamed = re.sub(r"\bstage\b", "k_stage", renamed)
    assert "accum[0]" in renamed and "k_stage :=" in renamed
    from ptx2py import transpile

    assert transpile.python_to_ptx(renamed) == ptxgrammar.read_ptx(TMA)
