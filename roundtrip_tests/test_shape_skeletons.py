"""Shared builder skeletons (ptxgrammar/shapes.py): a builder made by putting a shape's
strings back into a skeleton compiled for another shape is the very code that compiling
its own source gives, on every shape of a few corpus files."""

from __future__ import annotations

import dis
import types

import pytest

import ptxgrammar
from ptxgrammar import parser, shapes

from conftest import CORPUS

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
