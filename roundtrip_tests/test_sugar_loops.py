"""Control-flow graphs (analysis/), loops raised from them (sugar/loops.py), parameters
named from sources (sugar/sources.py), decoded descriptors (transpile/dsl/descriptors.py)."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT, corpus_files, file_id, sample, small
from test_sugar import roundtrips

import ptx2py
from ptx2py import ptxgrammar, transpile
from ptx2py.analysis import back_edges, dominators, function_cfg, irreducible_edges, natural_loops, post_dominators
from ptx2py.sugar import structure
from ptx2py.sugar.loopcheck import check
from ptx2py.transpile.dsl.descriptors import TCGEN05_IDESC, WGMMA_DESC, decode, encode
from ptx2py.transpile.dsl.errors import DSLError
from ptx2py.transpile.format import black_format

HEAD = [".version 8.0", ".target sm_90a", ".address_size 64", "", ".visible .entry k()", "{",
        "\t.reg .b32 \t%r<50>;", "\t.reg .pred \t%p<9>;"]


def ptx(*body):
    return "\n".join(HEAD + list(body) + ["\tret;", "}", ""])


def cfg(text):
    return function_cfg(ptxgrammar.parse(text).functions[0])


# --- analysis ---------------------------------------------------------------------------------

ROTATED = ptx("\tbra.uni \t$L__BB0_2;", "$L__BB0_1:", "\tadd.s32 \t%r1, %r1, 1;", "$L__BB0_2:",
              "\tsetp.lt.s32 \t%p1, %r1, 9;", "\t@%p1 bra \t$L__BB0_1;")
MULTI_EXIT = ptx("$L__BB0_1:", "\tadd.s32 \t%r1, %r1, 1;", "\t@%p1 bra \t$L__BB0_3;", "$L__tmp0:",
                 "\tadd.s32 \t%r2, %r2, 1;", "\t@%p2 bra \t$L__BB0_3;", "\tbra.uni \t$L__BB0_1;", "$L__BB0_3:")
NESTED = ptx("$L__BB0_1:", "\tadd.s32 \t%r1, %r1, 1;", "$L__BB0_2:", "\tadd.s32 \t%r2, %r2, 1;",
             "\t@%p2 bra \t$L__BB0_2;", "\t@%p1 bra \t$L__BB0_1;")
IRREDUCIBLE = ptx("\t@%p1 bra \t$L__BB0_2;", "$L__BB0_1:", "\tadd.s32 \t%r1, %r1, 1;", "$L__BB0_2:",
                  "\tadd.s32 \t%r2, %r2, 1;", "\t@%p2 bra \t$L__BB0_1;")


def test_cfg_blocks_and_edges_of_a_rotated_loop():
    g = cfg(ROTATED)
    labels = [[n for _, n in b.labels] for b in g.blocks]
    assert labels == [[], ["$L__BB0_1"], ["$L__BB0_2"], []]
    assert [b.succ for b in g.blocks] == [[2], [2], [1, 3], []]
    assert g.blocks[3].stops
    idom = dominators(g)
    assert idom == [0, 2, 0, 2]
    assert back_edges(g, idom) == [(1, 2)]
    (lp,) = natural_loops(g, idom)
    assert lp.header == 2 and lp.blocks == {1, 2} and lp.exits == [(2, 3)]
    assert post_dominators(g)[0] == 2


def test_nested_loops_know_their_parent():
    g = cfg(NESTED)
    inner, outer = natural_loops(g)
    assert inner.blocks < outer.blocks and inner.parent is outer and outer.parent is None


def test_irreducible_graph_is_found():
    g = cfg(IRREDUCIBLE)
    assert irreducible_edges(g) and not natural_loops(g)


def test_labels_are_scoped_by_blocks():
    text = ptx("\t{", "$L__W:", "\tadd.s32 \t%r1, %r1, 1;", "\t@%p1 bra \t$L__W;", "\t}", "\t{", "$L__W:",
               "\t@%p2 bra \t$L__W;", "\t}")
    g = cfg(text)
    loops = natural_loops(g)
    assert len(loops) == 2 and loops[0].header != loops[1].header and not g.unresolved


# --- raising ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,want", [
    (ROTATED, ["with loop(L.bb0_1, while_=(iv_lt_9 := p[1]), enter=L.bb0_2):"]),
    (MULTI_EXIT, ["with loop(L.bb0_1, uni=True):", "break_if(p[1], to=L.bb0_3)", "break_if(p[2], to=L.bb0_3)",
                  "label(L.tmp0)"]),
    (NESTED, ["with loop(L.bb0_1, while_=p[1]):", "    with loop(L.bb0_2, while_=p[2]):"]),
], ids=["rotated", "multi-exit", "nested"])
def test_loops_are_raised(text, want):
    alone = roundtrips(text, [structure])
    assert black_format(alone) == alone and "with loop(" in alone
    src = roundtrips(text)
    assert black_format(src) == src
    for w in want:
        assert w in src
    assert "skip_if" not in src
    rep = check(text, src)
    assert rep.errors == [] and rep.raised == rep.back_edges


def test_a_loop_whose_condition_register_is_declared_in_its_body_stays_flat():
    """`with loop(L, while_=p_2)` reads p_2 at its head: declared in the body, it is not bound yet
    (the long fuzz run, --seed 15). The loop keeps its label and branch."""
    text = ptx("$L__BB0_1:", "\tadd.s32 \t%r1, %r1, 1;", "\t.reg .pred \t%q;", "\tsetp.lt.s32 \t%q, %r1, 9;",
               "\t@%q bra \t$L__BB0_1;")
    src = roundtrips(text)
    assert "with loop(" not in src and "pred=q)" in src


def test_irreducible_region_stays_flat_with_a_comment():
    src = roundtrips(IRREDUCIBLE, [structure])
    assert "# irreducible control flow" in src and "with loop(" not in src


def test_a_loop_exit_is_never_an_if():
    text = ptx("$L__BB0_1:", "\t@%p1 bra \t$L__BB0_3;", "\tadd.s32 \t%r1, %r1, 1;", "\tbra.uni \t$L__BB0_1;",
               "$L__BB0_3:")
    src = roundtrips(text)
    assert "skip_if" not in src and "break_if(p[1], to=L.bb0_3)" in src


LOOPY = [p for p in small(corpus_files(), 300_000) if "bra" in p.read_text(errors="replace")]


@pytest.mark.parametrize("path", sample(LOOPY, 10), ids=file_id)
def test_raised_blocks_agree_with_the_cfg(path):
    text = ptxgrammar.read_ptx(path)
    rep = check(text, roundtrips(text))
    assert rep.errors == []
    assert rep.raised >= 0.9 * rep.back_edges


@pytest.mark.slow
@pytest.mark.parametrize("path", LOOPY, ids=file_id)
def test_raised_blocks_agree_with_the_cfg_everywhere(path):
    text = ptxgrammar.read_ptx(path)
    rep = check(text, roundtrips(text))
    assert rep.errors == []


# --- parameter names -----------------------------------------------------------------------------

TMA = ROOT / "corpus" / "ptx" / "triton" / "matmul_tma_fp16_sm90.ptx"


def test_triton_parameters_are_named_from_the_sidecar_and_a_rename_keeps_the_bytes():
    text = ptxgrammar.read_ptx(TMA)
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(TMA))
    assert 'params="a_desc a_desc_shape0 a_desc_shape1 a_desc_stride0' in src
    assert "sym(matmul_tma_kernel.K)" in src
    renamed = src.replace(" K global_scratch", " k_total global_scratch").replace("matmul_tma_kernel.K)",
                                                                                  "matmul_tma_kernel.k_total)")
    assert renamed != src and transpile.python_to_ptx(renamed) == text


@pytest.mark.parametrize("stem", ["matmul_tma_fp16_sm90", "matmul_persistent_tma_fp16_sm90"])
def test_triton_descriptor_parameters_are_named_from_the_source_alone(tmp_path, stem):
    """Without a sidecar (the file copied elsewhere), the `def`'s host TensorDescriptor
    arguments expand the way Triton packs them (map, shape .u32s, stride .u64s): the same
    names the sidecar gives, and a rename keeps the bytes."""
    copy = tmp_path / f"{stem}.ptx"
    copy.write_bytes((ROOT / "corpus" / "ptx" / "triton" / f"{stem}.ptx").read_bytes())
    text = ptxgrammar.read_ptx(copy)
    source = str(ROOT / "corpus" / "src" / "triton" / "kernels.py")
    alone = ptx2py.ptx_to_python(text, sugar=True, filename=str(copy), source=source)
    with_sidecar = ptx2py.ptx_to_python(text, sugar=True,
                                        filename=str(ROOT / "corpus" / "ptx" / "triton" / f"{stem}.ptx"))
    named = re.search(r'params="([^"]+)"', alone)
    assert named and "a_desc a_desc_shape0 a_desc_shape1 a_desc_stride0 a_desc_stride1 b_desc" in named.group(1)
    assert named.group(1) == re.search(r'params="([^"]+)"', with_sidecar).group(1)
    assert transpile.python_to_ptx(alone) == text
    renamed = alone.replace("a_desc_shape0", "rows_a")
    assert renamed != alone and transpile.python_to_ptx(renamed) == text


def test_descriptor_slots_need_the_declarations_to_match():
    from types import SimpleNamespace as P

    from ptx2py.sugar.sources import with_descriptor_slots

    m = P(type=".b8", dim="128")
    u32, u64 = P(type=".u32", dim=None), P(type=".u64", dim=None)
    assert with_descriptor_slots(["d", "n"], [m, u32, u32, u64, u64, u32]) == [
        "d", "d_shape0", "d_shape1", "d_stride0", "d_stride1", "n"]
    assert with_descriptor_slots(["d", "n"], [m, u32, u32, u64, u32]) is None   # strides short
    assert with_descriptor_slots(["a", "b"], [u64, u32]) is None                 # no descriptor at all


def test_cuda_parameters_are_named_from_the_source(tmp_path):
    text = ptxgrammar.read_ptx(ROOT / "corpus" / "ptx" / "nvcc" / "scan_softmax.sm_80.ptx")
    src = ptx2py.ptx_to_python(text, sugar=True, source=str(ROOT / "corpus" / "src" / "nvcc" / "scan_softmax.cu"))
    assert 'params="in_ out block_sums n"' in src
    assert transpile.python_to_ptx(src) == text


def test_a_parameter_typed_by_unsigned_alone_is_named():
    """`unsigned* __restrict__ hist` (`unsigned` is the whole type) names `hist`; an unnamed
    parameter (`const float*`, `unsigned int`) names nothing, so the kernel keeps `param_N`."""
    from ptx2py.sugar.sources import cuda_names

    src = "__global__ void h(const unsigned char* __restrict__ in, unsigned* __restrict__ hist, unsigned n) {}"
    assert cuda_names(src, "h", 3) == ["in_", "hist", "n"]
    assert cuda_names("__global__ void g(const float*, unsigned int) {}", "g", 2) is None
    text = ptxgrammar.read_ptx(ROOT / "corpus" / "ptx" / "nvcc" / "reduce.sm_80.lineinfo.ptx")
    src = ptx2py.ptx_to_python(text, sugar=True, source=str(ROOT / "corpus" / "src" / "nvcc" / "reduce.cu"))
    assert 'params="data hist n"' in src
    assert transpile.python_to_ptx(src) == text


def test_an_unreadable_launch_file_is_an_error(tmp_path):
    with pytest.raises(OSError):
        ptx2py.ptx_to_python(ptxgrammar.read_ptx(TMA), sugar=True, launch=str(tmp_path / "missing.json"))


# --- descriptors -----------------------------------------------------------------------------

def _corpus_constants():
    """Every 64-bit constant OR-ed into a register in a wgmma file, every `mov.b32` constant
    in a tcgen05.mma file: (layout, value)."""
    out = set()
    for p in corpus_files():
        t = p.read_text(errors="replace")
        if "wgmma.mma_async" in t:
            out |= {("wgmma", int(c)) for c in re.findall(r"or\.b64\s+%rd\d+, %rd\d+, (\d{10,});", t)}
        for kind in re.findall(r"tcgen05\.mma\.cta_group::\d\.kind::(\w+)", t)[:1]:
            if kind in TCGEN05_IDESC:
                out |= {(kind, int(c)) for c in re.findall(r"mov\.b32\s+%r\d+, (\d{6,});", t)}
    return sorted(out)


CONSTANTS = _corpus_constants()


def test_the_corpus_has_descriptors():
    kinds = {k for k, _ in CONSTANTS}
    assert "wgmma" in kinds and "f16" in kinds


@pytest.mark.parametrize("kind,value", CONSTANTS, ids=lambda x: str(x))
def test_every_corpus_descriptor_re_encodes_to_its_bits(kind, value):
    layout = WGMMA_DESC if kind == "wgmma" else TCGEN05_IDESC[kind]
    got = decode(layout, value)
    if got is None:  # a code without a name: not shown decoded
        return
    fields, rest = got
    assert encode(layout, kind, fields, rest) == value


def test_descriptor_spellings():
    from ptx2py.transpile.dsl import tcgen05_idesc, wgmma_desc

    assert wgmma_desc(sbo=1024, swizzle="128B") == 0x4000004000000000
    assert tcgen05_idesc("f16", d="f32", a="f16", b="f16", transpose_b=1, n=128, m=128) == 136380432
    with pytest.raises(DSLError):
        wgmma_desc(sbo=1000)
    with pytest.raises(DSLError):
        wgmma_desc(swizzle="16B")


def test_sugar_shows_decoded_descriptors():
    src = roundtrips(ptxgrammar.read_ptx(TMA))
    assert 'WGMMA_DESC_BITS = wgmma_desc(sbo=1024, swizzle="128B")' in src
    sm100 = ROOT / "corpus" / "ptx" / "triton" / "matmul_fp16_128x128x64_w8s3_sm100.ptx"
    src = roundtrips(ptxgrammar.read_ptx(sm100))
    assert 'IDESC = tcgen05_idesc("f16", d="f32", a="f16", b="f16", transpose_b=1, n=128, m=128)' in src


def test_an_invented_label_is_accepted():
    src = roundtrips(MULTI_EXIT).replace("break_if(p[1], to=L.bb0_3)",
                                         "break_if(p[1], to=L.skip_last)\n        ptx.label(L.skip_last)")
    out = transpile.python_to_ptx(src)
    assert "@%p1 bra \t$L__skip_last;\n$L__skip_last:" in out
    with pytest.raises(DSLError):
        transpile.python_to_ptx(src.replace("L.skip_last", "L.bb_x"))
