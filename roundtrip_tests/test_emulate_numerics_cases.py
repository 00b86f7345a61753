"""Data-driven checks: hand-worked PTX ISA examples, and every corpus form's probe status."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from conftest import CASES, CORPUS

from ptx2py.emulate.numerics import ALU
from ptx2py.emulate.numerics.coverage import forms_in, probe, summary, table
from ptx2py.emulate.numerics.dtypes import TYPES

DATA = CASES / "numerics"
EXAMPLES = json.loads((DATA / "isa_examples.json").read_text())["cases"]
RAW = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
FLOATS = {"f16": ("<e", "<H", np.uint16), "f32": ("<f", "<I", np.uint32), "f64": ("<d", "<Q", np.uint64)}


def operand(kind, value):
    if kind == "pred":
        return np.array([bool(value)])
    if kind in RAW:
        return np.array([int(str(value), 0)], RAW[kind])
    fmt, ufmt, dtype = FLOATS[kind]
    return np.array([struct.unpack(ufmt, struct.pack(fmt, value))[0]], dtype)


def split_form(form):
    opcode, *rest = form.split(".")
    mods = tuple("." + m for m in rest)
    return opcode, mods, tuple(m for m in mods if m in TYPES)


@pytest.mark.parametrize("case", EXAMPLES, ids=[f"{i}-{c['form']}" for i, c in enumerate(EXAMPLES)])
def test_isa_example(case):
    opcode, mods, types = split_form(case["form"])
    got = ALU[opcode](frozenset(mods), types, *[operand(k, v) for k, v in case["srcs"]])
    want = operand(*case["want"])
    assert got.dtype == want.dtype and got.tolist() == want.tolist(), (got, want)


FORMS = json.loads((DATA / "corpus_forms.json").read_text())


@pytest.mark.parametrize("form,status", sorted(FORMS.items()))
def test_every_corpus_form_keeps_its_status(form, status):
    opcode, mods, _ = split_form(form)
    assert probe(opcode, mods)[0] == status


def test_forms_are_found_by_the_parser(tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
                   "\t.reg .f32 %f<4>;\n\t.reg .b32 %r<3>;\n\tfma.rn.f32 %f1, %f2, %f3, %f1;\n"
                   "\tfma.rn.f32 %f1, %f2, %f3, %f1;\n\tprmt.b32 %r1, %r2, %r1, 0x5410;\n\tret;\n}\n")
    counts, failed = forms_in([ptx])
    assert not failed
    assert counts == {("fma", (".rn", ".f32")): 2, ("prmt", (".b32",)): 1}
    rows = table(counts)
    assert summary(rows)["forms_done"] == 2 and rows[0]["status"] == "exact"


@pytest.mark.slow
def test_corpus_coverage_has_no_handler_errors():
    counts, _ = forms_in(sorted(CORPUS.rglob("*.ptx")))
    stats = summary(table(counts))
    assert stats["errors"] == [] and stats["forms_done"] >= stats["forms"] - 1
