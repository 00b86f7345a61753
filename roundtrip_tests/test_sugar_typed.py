"""Typed calls (transpile/dsl/typed.py): each records the instruction node the
plain DSL call would; defaults fill in the operands the form has; a wrong
keyword is a DSLError at the user's line."""

from __future__ import annotations

import pytest

from ptx2py.transpile import DSLError, python_to_ptx
from ptx2py.transpile import dsl as dsl
from ptx2py.transpile.dsl import recorder
from ptx2py.transpile.dsl.typed import FAMILIES

NS = dict(vars(dsl))
NS.update(r=dsl.reg.b32("%r", 300), rd=dsl.reg.b64("%rd", 20), p=dsl.reg.pred("%p", 4),
          rs=dsl.reg.b16("%rs", 4))


def node(call: str):
    """The node one DSL call records (in a fresh recorder, so trivia compare too)."""
    recorder.begin()
    try:
        return eval(call, NS)
    finally:
        recorder.end()


SAME = [  # (typed call, plain call)
    ("mma_sync.m16n8k16.row.col.f32.f16.f16.f32(d=r[0:4], a=r[4:8], b=(r[8], r[9]))",
     "ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(r[0:4], r[4:8], (r[8], r[9]), r[0:4])"),
    ("mma_sync.m16n8k16.row.col.f32.f16.f16.f32(d=r[0:4], a=r[4:8], b=(r[8], r[9]), c=r[10:14])",
     "ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(r[0:4], r[4:8], (r[8], r[9]), r[10:14])"),
    ("wgmma_mma.m64n128k16.f32.f16.f16(d=r[0:64], a=rd[4], b=rd[5], scale_d=p[1])",
     "ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16(r[0:64], rd[4], rd[5], p[1], 1, 1, 0, 0)"),
    ("wgmma_mma.m64n128k16.f32.bf16.bf16(b=rd[5], a=r[64:68], d=r[0:64], scale_d=0, trans_b=1)",
     "ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16(r[0:64], r[64:68], rd[5], 0, 1, 1, 1)"),
    ("wgmma_mma.m64n64k32.f32.e4m3.e4m3(d=r[0:32], a=rd[4], b=rd[5], scale_d=p[1], scale_a=-1)",
     "ptx.wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3(r[0:32], rd[4], rd[5], p[1], -1, 1)"),
    ("wgmma_mma.m64n64k32.s32.s8.s8(d=r[0:32], a=rd[4], b=rd[5], scale_d=1)",
     "ptx.wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8(r[0:32], rd[4], rd[5], 1)"),
    ('wgmma_mma(shape="m64n64k16", dtype="f32", atype="f16", btype="f16", d=r[0:32], a=rd[4], b=rd[5],'
     " scale_d=p[1], scale_a=1, scale_b=1, trans_a=0, trans_b=1)",  # the old spelling
     "ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16(r[0:32], rd[4], rd[5], p[1], 1, 1, 0, 1)"),
    ("ldmatrix.m8n8.x4.trans.shared.b16(d=r[0:4], addr=[r[4] + 32])",
     "ptx.ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16(r[0:4], [r[4] + 32])"),
    ("stmatrix.m8n8.x4.shared.b16(addr=[r[4]], src=r[0:4])",
     "ptx.stmatrix.sync.aligned.m8n8.x4.shared.b16([r[4]], r[0:4])"),
    ("cp_async_bulk_tensor._2d.shared__cluster.global_.mbarrier__complete_tx__bytes"
     "(dst=[r[1]], src=[rd[1], (r[2], r[3])], mbar=[r[4]], pred=p[1])",
     "ptx.cp.async_.bulk.tensor._2d.shared__cluster.global_.mbarrier__complete_tx__bytes"
     "([r[1]], [rd[1], (r[2], r[3])], [r[4]], pred=p[1])"),
    ("cp_async_bulk_tensor._4d.shared__cluster.global_.im2col.mbarrier__complete_tx__bytes.multicast__cluster"
     ".L2__cache_hint(dst=[r[1]], src=[rd[1], r[2:6]], mbar=[r[6]], offsets=(rs[1], rs[2]), cta_mask=rs[3],"
     " cache_policy=rd[2])",
     "ptx.cp.async_.bulk.tensor._4d.shared__cluster.global_.im2col.mbarrier__complete_tx__bytes.multicast__cluster"
     ".L2__cache_hint([r[1]], [rd[1], r[2:6]], [r[6]], (rs[1], rs[2]), rs[3], rd[2])"),
    ("cp_async_bulk_tensor._2d.global_.shared__cta.bulk_group(dst=[rd[1], (r[2], r[3])], src=[r[1]])",
     "ptx.cp.async_.bulk.tensor._2d.global_.shared__cta.bulk_group([rd[1], (r[2], r[3])], [r[1]])"),
    ("cp_async_bulk.global_.shared__cta.bulk_group.L2__cache_hint(dst=[rd[1]], src=[r[1]], size=r[2],"
     " cache_policy=rd[2])",
     "ptx.cp.async_.bulk.global_.shared__cta.bulk_group.L2__cache_hint([rd[1]], [r[1]], r[2], rd[2])"),
    ("cp_async_bulk_prefetch.L2.global_(src=[rd[1]], size=r[1])",
     "ptx.cp.async_.bulk.prefetch.L2.global_([rd[1]], r[1])"),
    ("mbarrier_init.shared__cta.b64(addr=[r[1]], count=1)", "ptx.mbarrier.init.shared__cta.b64([r[1]], 1)"),
    ("mbarrier_arrive.expect_tx.shared__cta.b64(addr=[r[1]], bytes=r[2])",
     "ptx.mbarrier.arrive.expect_tx.shared__cta.b64(sink, [r[1]], r[2])"),
    ("mbarrier_arrive.expect_tx.shared__cta.b64(addr=[r[1]], tx_count=r[2])",  # the earlier name
     "ptx.mbarrier.arrive.expect_tx.shared__cta.b64(sink, [r[1]], r[2])"),
    ("mbarrier_arrive.shared__cta.b64(state=rd[1], addr=[r[1]])", "ptx.mbarrier.arrive.shared__cta.b64(rd[1], [r[1]])"),
    ("mbarrier_arrive.noComplete.b64(state=rd[1], addr=[r[1]], count=r[2])",
     "ptx.mbarrier.arrive.noComplete.b64(rd[1], [r[1]], r[2])"),
    ("mbarrier_try_wait.parity.shared__cta.b64(complete=p[1], addr=[r[1]], parity=r[2])",
     "ptx.mbarrier.try_wait.parity.shared__cta.b64(p[1], [r[1]], r[2])"),
    ("tcgen05_mma.cta_group__1.kind__f16(d=[r[1]], a=rd[1], b=rd[2], idesc=r[2], enable_input_d=p[1])",
     "ptx.tcgen05.mma.cta_group__1.kind__f16([r[1]], rd[1], rd[2], r[2], p[1])"),
    ("tcgen05_mma.cta_group__1.kind__f16(d=[r[1]], a=rd[1], b=rd[2], idesc=r[2], disable_output_lane=r[4:8],"
     " enable_input_d=p[1])",
     "ptx.tcgen05.mma.cta_group__1.kind__f16([r[1]], rd[1], rd[2], r[2], r[4:8], p[1])"),
    ("tcgen05_mma.sp.cta_group__1.kind__f16(d=[r[1]], a=[r[4]], b=rd[2], sp_meta=[r[3]], idesc=r[2],"
     " enable_input_d=p[1])",
     "ptx.tcgen05.mma.sp.cta_group__1.kind__f16([r[1]], [r[4]], rd[2], [r[3]], r[2], p[1])"),
    ("tcgen05_ld.sync.aligned._16x32bx2.x1.b32(d=(r[2],), taddr=[r[1]], split_off=2)",
     "ptx.tcgen05.ld.sync.aligned._16x32bx2.x1.b32((r[2],), [r[1]], 2)"),
    ("tcgen05_st.sync.aligned._32x32b.x4.b32(taddr=[r[1]], src=r[2:6])",
     "ptx.tcgen05.st.sync.aligned._32x32b.x4.b32([r[1]], r[2:6])"),
    ("tcgen05_commit.cta_group__1.mbarrier__arrive__one.shared__cluster.multicast__cluster.b64(mbar=[r[1]],"
     " cta_mask=rs[1])",
     "ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.multicast__cluster.b64([r[1]], rs[1])"),
    ("tcgen05_alloc.cta_group__1.sync.aligned.shared__cta.b32(dst=[r[1]], ncols=64, pred=~p[1])",
     "ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32([r[1]], 64, pred=~p[1])"),
]


@pytest.mark.parametrize("typed, plain", SAME, ids=[s[0].split(".")[0].split("(")[0] + str(k) for k,
                                                    s in enumerate(SAME)])
def test_typed_call_records_the_plain_node(typed, plain):
    got = node(typed)
    assert got.__class__.__name__ == "Instruction" and got == node(plain)


def test_every_family_leads_with_a_known_spelling():
    for name, fam in FAMILIES.items():
        assert repr(getattr(dsl, name)) == name
        assert fam.operands


MODULE = '''from ptx2py.dsl import *
ptx.version("8.0")
ptx.target("sm_90a")
ptx.address_size(64)
with ptx.entry("k", visible=True):
    r = reg.b32("%r", 80)
    rd = reg.b64("%rd", 8)
    p = reg.pred("%p", 2)
    {}
'''


def test_prefixes_compose_and_keywords_pass_through():
    typed = "asm.at(1, 2, 3).mma_sync.m16n8k16.row.col.f32.f16.f16.f32(d=r[0:4], a=r[4:8], b=(r[8], r[9]), pred=p[1])"
    plain = ("asm.at(1, 2, 3).mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(r[0:4], r[4:8], (r[8], r[9]), r[0:4],"
             " pred=p[1])")
    out = python_to_ptx(MODULE.format(typed))
    assert out == python_to_ptx(MODULE.format(plain))
    assert "// begin inline asm" in out and "@%p1 mma.sync.aligned" in out


def test_a_family_named_as_its_opcode_still_spells_the_plain_chain():
    plain = "asm.ldmatrix.sync.aligned.m8n8.x4.shared.b16(r[0:4], [r[4]])"
    typed = "asm.ldmatrix.m8n8.x4.shared.b16(d=r[0:4], addr=[r[4]])"
    assert python_to_ptx(MODULE.format(plain)) == python_to_ptx(MODULE.format(typed))


@pytest.mark.parametrize("call, words", [
    ("mma_sync.m16n8k16.row.col.f32.f16.f16.f32(d=r[0:4], a=r[4:8], b=r[8:10], acc=r[0:4])", "no operand acc"),
    ("mma_sync.m16n8k16.row.col.f32.f16.f16.f32(d=r[0:4], a=r[4:8])", "missing operand b"),
    ("wgmma_mma.m64n64k32.s32.s8.s8(d=r[0:32], a=rd[4], b=rd[5], scale_d=1, scale_a=1)", "no operand scale_a"),
    ("wgmma_mma.m64n64k16.f32.f16.f16(d=r[0:32], a=r[40:44], b=rd[5], scale_d=1, trans_a=1)", "no operand trans_a"),
    ("cp_async_bulk_tensor._2d.global_.shared__cta.bulk_group(dst=[rd[1]], src=[r[1]], cta_mask=r[2])",
     "no operand cta_mask"),
    ("cp_async_bulk.tensor._2d.global_.shared__cta.bulk_group(dst=[rd[1]], src=[r[1]])",
     "spell it cp_async_bulk_tensor"),
    ("tcgen05_mma.cta_group__1.kind__f16(d=[r[1]], a=rd[1], b=rd[2], idesc=r[2], disable_output_lane=r[4],"
     " enable_input_d=p[1])", "operand disable_output_lane is a vector"),
    ("ldmatrix.m8n8.x4.shared.b16(r[0:4], [r[4]])", "operands are keywords"),
])
def test_a_wrong_keyword_is_reported_at_its_line(call, words):
    with pytest.raises(DSLError) as info:
        python_to_ptx(MODULE.format(call), "k.py")
    assert info.value.line == 9, str(info.value)
    assert words in info.value.message
