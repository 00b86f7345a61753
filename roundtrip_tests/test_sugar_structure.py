"""The `structure` sugar pass: loops, skipped regions and Triton's mbarrier spin wait
as Python blocks. It keeps the bytes and never moves an instruction across a barrier."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import ROOT, corpus_files, external_files, file_id, sample, small
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import modules
from test_sugar import FENCES, _opcode_order, roundtrips, sugar_with

import ptx2py
from ptx2py import ptxgrammar, transpile
from ptx2py.sugar import comment_keys, names, pipeline, structure
from ptx2py.transpile.format import black_format

SM90 = sorted((ROOT / "corpus" / "ptx" / "triton").glob("*sm90*.ptx"))
SAMPLE = sample(small(corpus_files(), 250_000), 22) + sample(external_files(), 8)

SETTINGS = settings(max_examples=60, deadline=timedelta(seconds=30),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_structure_runs_second():
    # after comment_keys, which only tags the generator's same-line comments (changes nothing)
    assert pipeline.PASSES[:3] == [comment_keys, names, structure]


@pytest.mark.parametrize("path", SAMPLE + SM90, ids=file_id)
@pytest.mark.parametrize("passes", [[structure], [names, structure]], ids=["alone", "with-names"])
def test_structure_round_trips_and_black(path, passes):
    src = roundtrips(ptxgrammar.read_ptx(path), passes)
    assert black_format(src) == src


@SETTINGS
@given(modules())
def test_structure_alone_keeps_the_bytes_of_drawn_trees(module):
    roundtrips(ptxgrammar.emit(module), [structure])


@st.composite
def branchy(draw):
    """A function of labels, guarded forward/backward branches, barriers and straight code."""
    lines = [".version 8.0", ".target sm_90a", ".address_size 64", "", ".visible .entry k()", "{",
             "\t.reg .b32 \t%r<50>;", "\t.reg .pred \t%p<9>;"]
    nl = draw(st.integers(1, 5))
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["label", "bra", "ubra", "add", "bar", "fence", "mbar"]))
        b = draw(st.integers(1, nl))
        if kind == "label":
            lines.append(f"$L__BB0_{b}:")
        elif kind == "bra":
            neg = "!" if draw(st.booleans()) else ""
            uni = ".uni" if draw(st.booleans()) else ""
            lines.append(f"\t@{neg}%p{draw(st.integers(1, 8))} bra{uni} \t$L__BB0_{b};")
        elif kind == "ubra":
            lines.append(f"\tbra.uni \t$L__BB0_{b};")
        elif kind == "add":
            lines.append(f"\tadd.s32 \t%r{b}, %r{b}, 1;")
        elif kind == "bar":
            lines.append("\tbar.sync \t0;")
        elif kind == "fence":
            lines.append("\tfence.proxy.async;")
        else:
            lines.append("\tmbarrier.arrive.shared::cta.b64 \t_, [%r1];")
    for b in range(1, nl + 1):
        lines.append(f"$L__BB0_{b}:")
    lines += ["\tret;", "}", ""]
    return "\n".join(lines)


@SETTINGS
@given(branchy(), st.sampled_from([[structure], [names, structure], None]))
def test_structure_keeps_the_bytes_and_order_of_branchy_code(text, passes):
    src = roundtrips(text, passes)
    assert black_format(src) == src


def _fenced_files():
    out = []
    for p in sorted(corpus_files()):
        if p.stat().st_size > 400_000:
            continue
        t = p.read_bytes().decode("latin-1")
        if ("bar.sync" in t or "mbarrier" in t or "wgmma" in t or "fence" in t) and ("bra" in t):
            out.append(p)
    return sample(out, 12) + SM90[:6]


@pytest.mark.parametrize("path", _fenced_files(), ids=file_id)
def test_no_instruction_crosses_a_barrier(path):
    text = ptxgrammar.read_ptx(path)
    want = _opcode_order(text)
    for passes in ([names], [structure], [names, structure], None):
        back = transpile.python_to_ptx(sugar_with(text, passes) if passes else ptx2py.ptx_to_python(text, sugar=True))
        order = _opcode_order(back)
        assert order == want
        assert [k for k, (op, _) in enumerate(order) if op in FENCES] == [
            k for k, (op, _) in enumerate(want) if op in FENCES]


def test_triton_spin_waits_collapse():
    path = ROOT / "corpus" / "ptx" / "triton" / "matmul_tma_fp16_sm90.ptx"
    src = roundtrips(ptxgrammar.read_ptx(path))
    assert "ptx.add.s32(bar_3 := r[27], k_25, bar_base)\n" in src   # the wait's mbarrier, named by its role
    assert "mbarrier_wait([bar_3], phase, loc=(1, 264, 5), at=(1, 265, 5))" in src
    assert "waitLoop" not in src
    assert "ptx.setp.lt.s32(k_12 := p[14], K, 1)" in src and "with skip_if(k_12, to=L.bb0_3):" in src
    assert "with loop(L.bb0_2, while_=(k_32 := p[38])):" in src


def test_a_region_with_a_label_inside_is_not_raised():
    text = "\n".join([".version 8.0", ".target sm_90a", ".address_size 64", "", ".visible .entry k()", "{",
                      "\t.reg .pred \t%p<3>;", "\t@%p1 bra \t$L__BB0_3;", "$L__BB0_2:", "\tbar.sync \t0;",
                      "\tbra.uni \t$L__BB0_9;", "$L__BB0_3:", "\tret;", "$L__BB0_9:", "\t@%p2 bra \t$L__BB0_2;",
                      "\tret;", "}", ""])
    src = roundtrips(text, [structure])
    assert "skip_if" not in src
    # a label nothing branches to is no entry: the region is raised
    src = roundtrips(text.replace("\t@%p2 bra \t$L__BB0_2;\n", ""), [structure])
    assert "skip_if" in src


# --- if_ / else_: a guard without a double negative, the other branch as a block ------------------

IF_ELSE = "\n".join([
    ".version 8.0", ".target sm_80", ".address_size 64", "", ".visible .entry k(", "\t.param .u32 k_param_0", ")", "{",
    "\t.reg .pred \t%p<3>;", "\t.reg .b32 \t%r<6>;", "", "\tld.param.u32 \t%r1, [k_param_0];",
    "\tsetp.ge.s32 \t%p1, %r1, 4;", "\t@!%p1 bra \t$L__BB0_2;", "\tadd.s32 \t%r3, %r1, 1;", "\tbra.uni \t$L__BB0_3;",
    "$L__BB0_2:", "\tadd.s32 \t%r3, %r1, 2;", "$L__BB0_3:", "\tsetp.eq.s32 \t%p2, %r3, 0;", "\t@%p2 bra \t$L__BB0_4;",
    "\tadd.s32 \t%r4, %r3, 1;", "$L__BB0_4:", "\tret;", "", "}", ""])


def test_a_negated_guard_reads_as_if_and_the_other_branch_as_else():
    from ptx2py.sugar.loopcheck import check

    src = roundtrips(IF_ELSE)
    assert "~" not in src.split("# Layout")[0], src          # no `skip_if(~p, ...)`
    assert "with if_(p[1], to=L.bb0_2):" in src or "with if_(param_0_ge_4, to=L.bb0_2):" in src, src
    assert "with else_(to=L.bb0_3):" in src, src
    assert "with skip_if(" in src   # a plain guard skips: `@%p2 bra` around a region with no join
    assert check(IF_ELSE, src).errors == []


def test_an_else_the_graph_does_not_have_is_reported():
    """loopcheck reads the graph: Python that claims an if/else where the PTX's `if_` body falls
    into the other branch (no jump to the join) is an error, not a silent wrong structure."""
    from ptx2py.sugar.loopcheck import check

    text = IF_ELSE.replace("\tbra.uni \t$L__BB0_3;\n", "")
    src = roundtrips(text)
    body = "        ptx.add.s32(r[3], param_0, 1)\n    ptx.add.s32(r[3], param_0, 2)\n    label(L.bb0_3)."
    assert body in src, src
    wrong = src.replace(body, "        ptx.add.s32(r[3], param_0, 1)\n        ptx.bra.uni(sym(L.bb0_3))\n"
                              "    with else_(to=L.bb0_3):\n        ptx.add.s32(r[3], param_0, 2)\n    ptx.")
    assert check(text, wrong).errors == ["else_ to $L__BB0_3: the block before it falls into the other branch",
                                         "else_ to $L__BB0_3: no branch reaches the join"]
    assert check(text, src).errors == []


def test_no_else_where_the_branch_falls_into_the_other_side():
    """`@p bra A; x; A: y; J:` without a jump to J is a skipped region, not an if/else."""
    text = IF_ELSE.replace("\tbra.uni \t$L__BB0_3;\n", "")
    src = roundtrips(text)
    assert "else_" not in src.split("# Layout")[0], src
