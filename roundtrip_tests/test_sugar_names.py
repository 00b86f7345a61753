"""The `names` sugar pass: demangled kernel names, parameter and label tables.
It keeps the bytes (alone and in the pipeline), and the names are code."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import ROOT, corpus_files, external_files, file_id, sample, small
from hypothesis import HealthCheck, given, settings
from strategies import modules
from test_sugar import roundtrips

from ptx2py import ptxgrammar, transpile
from ptx2py.sugar import comment_keys, names, pipeline
from ptx2py.sugar.names import signature
from ptx2py.transpile.dsl import DSLError, L, kernel_name, labels, param, reg
from ptx2py.transpile.format import black_format

SM90 = sorted((ROOT / "corpus" / "ptx" / "triton").glob("*sm90*.ptx"))
SAMPLE = sample(small(corpus_files(), 250_000), 22) + sample(external_files(), 8)

SETTINGS = settings(max_examples=60, deadline=timedelta(seconds=30),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_names_runs_first():
    # after comment_keys, which only tags the generator's same-line comments (changes nothing)
    assert pipeline.PASSES[:2] == [comment_keys, names]


@pytest.mark.parametrize("path", SAMPLE + SM90, ids=file_id)
@pytest.mark.parametrize("passes", [[names], None], ids=["alone", "pipeline"])
def test_names_round_trip_and_black(path, passes):
    src = roundtrips(ptxgrammar.read_ptx(path), passes)
    assert black_format(src) == src


@SETTINGS
@given(modules())
def test_names_alone_keeps_the_bytes_of_drawn_trees(module):
    roundtrips(ptxgrammar.emit(module), [names])


def test_mangled_names_are_code_with_their_demangling():
    text = ptxgrammar.read_ptx(ROOT / "corpus" / "ptx" / "nvcc" / "cub_block.sm_90a.ptx")
    src = roundtrips(text, [names])
    assert "# void block_reduce_sum<128, 4>(float const*, float*)\n" in src  # for the reader
    assert 'block_reduce_sum = kernel_name("_Z16block_reduce_sumILi128ELi4EEvPKfPf")' in src
    assert "with block_reduce_sum.entry(param.u64 * 2, visible=True, globl=True):" in src
    assert "sym(block_reduce_sum.a0_float_ptr)" in src  # named from the demangled signature
    assert "_Z16block_reduce_sumILi128ELi4EEvPKfPf_param_0" not in src  # only in the table, derived


def test_signature():
    assert signature("vecAdd(float*, float*, int)") == ("vecAdd", ["float*", "float*", "int"])
    assert signature("void cub::Foo<int, (cub::X)1>(cub::Bar<int, 2> const*, unsigned int)") == (
        "Foo", ["cub::Bar<int, 2> const*", "unsigned int"])
    assert signature("f()") == ("f", [])
    assert signature("not a function") is None


def test_runtime_tables():
    k = kernel_name("_Z6vecAddPfS_i", demangled="vecAdd(float*, float*, int)", params=("a", "b", "n"))
    assert (k.name, k.a, k.n) == ("_Z6vecAddPfS_i", "_Z6vecAddPfS_i_param_0", "_Z6vecAddPfS_i_param_2")
    assert kernel_name("t", params=2).param_1 == "t_param_1"
    with pytest.raises(DSLError):
        kernel_name("_Z6vecAddPfS_i", demangled="vecAdd(int)")
    assert labels(bb3="$L__BB0_3").bb3 == "$L__BB0_3"
    assert (L.bb0_3, L.tmp0, L.func_begin0) == ("$L__BB0_3", "$L__tmp0", "$L__func_begin0")
    with pytest.raises(DSLError):
        L.bb3  # not a rule name: `$L__BB3` has no block number
    d = kernel_name("_Z6vecAddPfS_i", demangled="vecAdd(float*, float*, int)")
    assert (d.a0_float_ptr, d.a2_int) == ("_Z6vecAddPfS_i_param_0", "_Z6vecAddPfS_i_param_2")
    auto = kernel_name("_Z6vecAddPfS_i")  # demangled by the library when not given
    assert (auto.demangled, auto.a1_float_ptr) == ("vecAdd(float*, float*, int)", "_Z6vecAddPfS_i_param_1")
    with pytest.raises(DSLError):
        d.entry(param.u64 * 2)  # three parameters, two types
    with pytest.raises(DSLError):
        reg.b32 * 2  # only parameter types repeat


def _label_module(spell) -> str:
    body = "\n".join(f"{spell(f, b)}:\n\tbra.uni \t{spell(f, b)};" for f in (0, 1) for b in (1, 2))
    return "\n".join([".version 8.0", ".target sm_90a", ".address_size 64", "", ".visible .entry k()", "{",
                      body, "\tret;", "}", ""])


def test_local_labels_are_named_by_rule_without_a_table():
    text = _label_module(lambda f, b: f"$L__BB{f}_{b}")
    src = roundtrips(text, [names])
    for py in ("bb0_1", "bb0_2", "bb1_1", "bb1_2"):
        assert f"ptx.label(L.{py})" in src
    assert "labels(" not in src
    assert transpile.python_to_ptx(src) == text


def test_label_names_outside_the_rule_come_from_one_table():
    text = _label_module(lambda f, b: f"LBB{f}_{b}")  # older LLVM spells them without `$L__`
    src = roundtrips(text, [names])
    for py in ("bb0_1", "bb0_2", "bb1_1", "bb1_2"):  # the short `bb1` would be ambiguous
        assert f"ptx.label(L.{py})" in src
    assert 'L = labels("LBB0_1 LBB0_2 LBB1_1 LBB1_2")' in src
    assert transpile.python_to_ptx(src) == text


def test_label_table_names_follow_one_rule():
    """The DSL derives the same Python names from the spellings as the names pass."""
    from ptx2py.transpile.dsl import labels
    from ptx2py.transpile.names import label_names

    spellings = ["$L__BB0_3", "$L__BB1_3", "$L__tmp0", "$L__func_begin0", "$L__BB0_7"]
    table = labels(" ".join(spellings))
    assert label_names(spellings) == ["bb0_3", "bb1_3", "tmp0", "func_begin0", "bb7"]
    assert [getattr(table, n) for n in label_names(spellings)] == spellings


def _scale_module(last: str) -> str:
    return "\n".join([".version 8.0", ".target sm_90a", ".address_size 64", "",
                      ".visible .entry scale(", *[f"\t.param .u32 scale_param_{i}," for i in range(4)],
                      f"\t{last}", ")", "{", "\tret;", "}", ""])


def test_plain_conventional_params_are_a_list_of_types():
    text = _scale_module(".param .u64 scale_param_4")
    src = roundtrips(text, [names])
    assert "with scale.entry(param.u32 * 4, param.u64, visible=True):" in src
    assert transpile.python_to_ptx(src) == text


def test_same_typed_conventional_params_are_declared_as_a_run():
    text = _scale_module(".param .align 8 .b8 scale_param_4[]")  # not a plain type: the full list
    src = roundtrips(text, [names])
    assert "*param.u32.of(scale, 0, 4)" in src
    assert "param.align(8).b8(scale.param_4, unsized=True)" in src
    assert transpile.python_to_ptx(src) == text


def test_array_params_are_types_with_a_dimension():
    text = _scale_module(".param .align 8 .b8 scale_param_4[16]")
    src = roundtrips(text, [names])
    assert "with scale.entry(param.u32 * 4, param.align(8).b8[16], visible=True):" in src
    assert transpile.python_to_ptx(src) == text


def test_used_variables_get_their_demangled_names():
    text = "\n".join([".version 8.0", ".target sm_90a", ".address_size 64", "",
                      ".visible .entry k()", "{", "\t.reg .b32 \t%r<3>;",
                      "\t.shared .align 4 .b8 _ZZ6kernelvE3red[128];",
                      "\tmov.u32 \t%r1, _ZZ6kernelvE3red;",
                      "\tld.shared.u32 \t%r2, [_ZZ6kernelvE3red+16];", "\tret;", "}", ""])
    src = roundtrips(text, [names])
    assert 'red = var.shared.align(4).b8("_ZZ6kernelvE3red", dims=(128,))' in src
    assert "ptx.ld.shared.u32(r[2], [red + 16])" in src
    assert transpile.python_to_ptx(src) == text


# A module variable `a` is bound to the Python name `a`; a declaration spelled `a` elsewhere
# keeps its string, and inside a function whose parameter is `a` the uses name the parameter
# (ptxas resolves `[a]` there to the parameter; a label does not shadow). Seed 14 of the long
# fuzz run found the parameter written as the variable object (AttributeError _parts). The
# registers are named after what they hold (sugar/valuenames.py): `a_` (the parameter's value,
# `a` being the variable's name), `a_addr` (the variable's address).
_GLOBAL_A = ".version 9.0\n.target sm_90a\n.address_size 64\n.global .u32 a;\n.global .u64 p = a;\n"


@pytest.mark.parametrize("ptx, wanted", [
    (_GLOBAL_A + ".entry k (.param .u64 a)\n{\n.reg .b64 %rd<3>;\nld.param.u64 %rd1, [a];\nret;\n}\n"
     ".entry k2 ()\n{\n.reg .b64 %rd<3>;\nmov.u64 %rd1, a;\nret;\n}\n",
     ['params=[param.u64("a")]', 'ptx.ld.param.u64(a_ := rd[1], [sym("a")])', "ptx.mov.u64(a_addr := rd[1], a)"]),
    (_GLOBAL_A + ".func (.param .b32 a) f ()\n{\nret;\n}\n", ['returns=[param.b32("a")]']),
    (_GLOBAL_A + ".entry k ()\n{\n.reg .b64 %rd<3>;\nmov.u64 %rd1, a;\na:\nret;\n}\n",
     ['ptx.label("a")', "ptx.mov.u64(a_addr := rd[1], a)"]),
    (_GLOBAL_A + ".entry k ()\n{\np: .callprototype ()_ (.param .b32 a);\nret;\n}\n", ['params=[param.b32("a")]']),
], ids=["param", "return-param", "label", "callprototype"])
def test_a_declaration_spelled_like_a_module_variable_keeps_its_name(ptx, wanted):
    source = transpile.ptx_to_python(ptx, passes=pipeline.passes())
    assert transpile.python_to_ptx(source) == ptx
    for w in wanted:
        assert w in source, source


def test_a_long_kernel_name_gets_a_short_alias():
    """A CuTe DSL-style 90-character kernel name: the Python calls it `kernel` (the spelling stays
    in `kernel_name(...)`), so each `ld.param` is one short line; the bytes are kept."""
    name = "kernel_cutlass_gemm_tn_" + "f16" * 20 + "_0"
    text = "\n".join([
        ".version 8.0", ".target sm_90a", ".address_size 64", "", f".visible .entry {name}(",
        f"\t.param .u64 {name}_param_0,", f"\t.param .u32 {name}_param_1", ")", "{", "\t.reg .b32 \t%r<3>;",
        "\t.reg .b64 \t%rd<3>;", "", f"\tld.param.u64 \t%rd1, [{name}_param_0];",
        f"\tld.param.u32 \t%r1, [{name}_param_1];", "\tret;", "}", ""])
    src = roundtrips(text)
    assert "kernel = kernel_name(" in src and f'"{name}"' in src, src
    loads = [line for line in src.split("\n") if "ld.param" in line]
    assert len(loads) == 2 and all(line.endswith(")])") and len(line) <= 88 for line in loads), loads
