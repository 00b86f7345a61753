"""Defect 1: long flat constant expressions (ptxas accepts them) parse, emit and
round-trip through Python; only genuinely deep nesting is refused, located."""

from __future__ import annotations

import pytest

from ptx2py import ptx_to_python, ptxgrammar, python_to_ptx
from ptx2py.ptxgrammar import ParseError
from ptx2py.ptxgrammar.parser import parse_full

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"


def flat_sum(terms: int) -> str:
    return HEADER + ".global .u32 x = " + "+".join(["1"] * terms) + ";\n"


@pytest.mark.parametrize("terms", [199, 200, 450, 5000])
@pytest.mark.parametrize("parse", [ptxgrammar.parse, parse_full], ids=["fast", "full"])
def test_a_long_flat_sum_parses_and_emits_the_same_bytes(parse, terms):
    text = flat_sum(terms)
    assert ptxgrammar.emit(parse(text, "long.ptx")) == text


def test_a_long_sum_in_an_instruction_parses_twice_through_the_shape_cache():
    body = ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n" + "\tmov.u32 %r1, " + "+".join(["2"] * 300) + ";\n"
    text = HEADER + body * 1 + "\tmov.u32 %r1, " + "+".join(["3"] * 300) + ";\n\tret;\n}\n"
    assert ptxgrammar.emit(ptxgrammar.parse(text)) == text


@pytest.mark.parametrize("terms", [200, 1000])
@pytest.mark.parametrize("sugar", [False, True])
def test_a_long_flat_sum_round_trips_through_python(terms, sugar):
    text = flat_sum(terms)
    assert python_to_ptx(ptx_to_python(text, sugar=sugar)) == text


def test_deep_parentheses_get_an_error_where_the_nesting_starts():
    text = HEADER + ".global .u32 x = " + "(" * 1000 + "1" + ")" * 1000 + ";\n"
    with pytest.raises(ParseError) as info:
        ptxgrammar.parse(text, "deep.ptx")
    err = info.value
    assert (err.line, err.column) == (4, 18)
    assert "nest" in err.message
