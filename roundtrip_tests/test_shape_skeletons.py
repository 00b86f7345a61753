"""Shared builder skeletons (ptxgrammar/shapes.py): a builder made by putting a shape's
strings back into a skeleton compiled for another shape is the very code that compiling
its own source gives, on every shape of a few corpus files."""

from __future__ import annotations

import dis
import re
import types

import pytest
from conftest import CORPUS

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import parser, shapes

FILES = [CORPUS / "nvcc" / "reduce.sm_80.ptx", *sorted(CORPUS.rglob("*.G.ptx"))[:1],
         *sorted(CORPUS.rglob("*lineinfo.ptx"))[:1]]


def own_code(text, tree, patterns):
    """The builder compiled from its own source, no placeholders and no sharing."""
    source = shapes.BuilderWriter(text, patterns, abstract=False).source(tree)
    module = compile(source, "<ptx shape>", "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


def instructions(code) -> list:
    """The instructions with their resolved arguments (constant values, names): the
    compiler shares equal constants, so the same program may index them differently
    (and need EXTENDED_ARG for indices past 255)."""
    return [(i.opname, i.argval.__class__, i.argval) for i in dis.get_instructions(code)
            if i.opname != "EXTENDED_ARG"]


def same_code(a, b) -> bool:
    return instructions(a) == instructions(b) and a.co_varnames == b.co_varnames


@pytest.fixture
def cold(monkeypatch):
    monkeypatch.setenv("PTX2PY_SHAPE_CACHE", "off")
    parser.SHAPES.forget(store=False)
    yield
    parser.SHAPES.forget(store=True)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_filled_skeleton_is_the_shapes_own_code(path, cold, monkeypatch):
    made = []
    real = shapes.builder_code

    def checked(text, tree, patterns):
        code = real(text, tree, patterns)
        if code is not None:
            made.append((code, own_code(text, tree, patterns)))
        return code
    monkeypatch.setattr(parser, "builder_code", checked)
    text = ptxgrammar.read_ptx(path)
    assert ptxgrammar.emit(ptxgrammar.parse(text)) == text
    assert len(made) > len(shapes.SKELETONS) > 0          # some skeletons were shared
    for code, own in made:
        assert same_code(code, own)


def test_shapes_differing_only_in_strings_share_a_skeleton(cold):
    head = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .f32 %f<4>;\n"
    text = head + "\tadd.f32 %f1, %f2, %f3;\n\tsub.f32 %f1, %f2, %f3;\n\tret;\n}\n"
    before = parser.parse_full(text)
    assert ptxgrammar.parse(text) == before
    builders = [k for k in parser.SHAPES.builders if "add.f" in k or "sub.f" in k]
    assert len(builders) == 2
    skeletons = [s for s in shapes.SKELETONS if "add" in s or "sub" in s]
    assert skeletons == []                                # the strings are placeholders
    assert ptxgrammar.emit(ptxgrammar.parse(text.replace("sub", "mul"))) == text.replace("sub", "mul")


# --- name holes: what follows the `_Z` of a mangled name ---------------------------

def two_kernels(first: str, second: str, extra: str = "") -> str:
    def one(name):
        return (f"\t// .globl\t{name}\n.visible .entry {name}(\n\t.param .u64 {name}_param_0\n)\n{{\n"
                f"\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [{name}_param_0];\n{extra}\tret;\n}}\n")
    return ".version 8.0\n.target sm_80\n.address_size 64\n" + one(first) + one(second)


def test_kernels_differing_in_their_mangled_names_share_shapes(cold):
    text = two_kernels("_Z3fooPf", "_ZN6thrust4sortEPi")
    assert ptxgrammar.parse(text) == parser.parse_full(text)
    loads = [k for k in parser.SHAPES.builders if "ld.param" in k]
    assert len(loads) == 1 and "[_Z\0_param_" not in loads[0] and "[_Z\0" in loads[0]
    renamed = two_kernels("_Z3barPf", "_Z$weird_1")
    assert ptxgrammar.parse(renamed) == parser.parse_full(renamed)
    assert ptxgrammar.emit(ptxgrammar.parse(renamed)) == renamed


def test_a_digit_run_and_a_name_never_share_a_shape(cold):
    digits = two_kernels("_Z3fooPf", "_Z3barPf", "\tadd.s64 %rd2, %rd1, 12;\n")
    name = two_kernels("_Z3fooPf", "_Z3barPf", "\tadd.s64 %rd2, %rd1, _Z12;\n")
    for text in (digits, name, digits):
        assert ptxgrammar.parse(text) == parser.parse_full(text)


@pytest.mark.parametrize("inside", ['\t.pragma "_Z3foo";\n', "\tld.global::_Zx.u32 %r1, [%rd1];\n",
                                    "\tmov.u64 %rd2, x_Z3foo;\n", "\tmov.u64 %rd2, %_Z3foo;\n"])
def test_a_name_inside_another_token_is_never_a_hole(cold, inside):
    text = two_kernels("_Z3fooPf", "_Z3barPf", inside)
    try:
        expected = parser.parse_full(text)
    except ptxgrammar.ParseError as e:
        with pytest.raises(ptxgrammar.ParseError) as fast:
            ptxgrammar.parse(text)
        assert str(fast.value) == str(e)
        return
    assert ptxgrammar.parse(text) == expected
    again = text.replace("_Z3foo", "_Z9quux")
    assert ptxgrammar.parse(again) == parser.parse_full(again)


@pytest.mark.parametrize("probe", ["_Z", "_Z0", "_Z3fooPf", "_ZN6thrust$a", "_Z_", "_Z$"])
def test_only_ident_and_sink_match_text_that_starts_a_name(probe):
    """Why a name hole lexes alike whatever it holds: of the grammar's terminals only
    IDENT (the whole run) and SINK (`_`) match at the start of a token-initial `_Z` run."""
    terminals = {name: regex for name, regex, _prio, _lit in parser.grammar_terminals()}
    assert {name for name, regex in terminals.items() if re.match(regex, probe + " ")} == {"IDENT", "SINK"}
    assert re.fullmatch(terminals["IDENT"], probe)
