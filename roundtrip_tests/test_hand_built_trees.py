"""Defect 5: a tree built by hand (trivia=None everywhere) emits PTX that parses
back to the same tree: spacing is decided for the whole statement."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from strategies import bare_modules, without_trivia

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar.tree import (
    Address,
    AddressSize,
    BinaryExpr,
    Block,
    Declarator,
    Function,
    FunctionHead,
    Guard,
    Instruction,
    IntLiteral,
    Label,
    Loc,
    Module,
    ParamList,
    Register,
    SpecialRegister,
    Symbol,
    Target,
    UnaryExpr,
    VarDecl,
    Vector,
    Version,
)


def header():
    return [Version("9.0"), Target(("sm_90",)), AddressSize("64")]


def kernel(*body):
    head = FunctionHead((".visible",), ".entry", None, "k", ParamList(()), ())
    return Module((*header(), Function(head, Block(tuple(body)), None)), "\n", ())


def reparsed(module):
    return without_trivia(ptxgrammar.parse(ptxgrammar.emit(module)))


@pytest.mark.parametrize("statement, text", [
    (Instruction(Guard("%p1", True), "bra", (".uni",), (Symbol("L1"),)), "@!%p1 bra.uni L1;"),
    (Instruction(None, "ld", (".global", ".u32"),
                 (Register("%r1"), Address((BinaryExpr(Register("%rd1"), "+", IntLiteral("4")),)))),
     "ld.global.u32 %r1, [%rd1 + 4];"),
    (Instruction(None, "mov", (".u32",), (Register("%r1"), SpecialRegister("%tid", ".x"))), "mov.u32 %r1, %tid.x;"),
    (Instruction(None, "add", (".s32",), (Register("%r1"), Register("%r2"), UnaryExpr("-", IntLiteral("1")))),
     "add.s32 %r1, %r2, -1;"),
    (VarDecl((), ".reg", (".b32",), (Declarator("%r", "4"),)), ".reg .b32 %r<4>;"),
])
def test_a_hand_built_statement_prints_as_ptx_spells_it(statement, text):
    assert ptxgrammar.emit(statement) == text
    assert reparsed(kernel(statement, Instruction(None, "ret", (), ()))) == kernel(
        statement, Instruction(None, "ret", (), ()))


def test_statements_without_terminators_stay_apart():
    module = kernel(Loc("1", "2", "3"), Label("L1"), Instruction(None, "ret", (), ()))
    assert reparsed(module) == module


def test_a_hand_built_operand_in_a_parsed_instruction_is_spaced():
    parsed = ptxgrammar.parse(".version 9.0\n.target sm_90\n.visible .entry k()\n{\n\tmov.u32 %r1, %r2;\n}\n")
    insn = parsed.items[2].body.items[0]
    edited = insn.with_changes(operands=(insn.operands[0], Vector((Register("%r3"), Register("%r4")))))
    assert ptxgrammar.emit(edited) == "\n\tmov.u32 %r1, {%r3, %r4};"


@settings(max_examples=150, deadline=timedelta(seconds=30),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(bare_modules())
def test_drawn_trees_without_trivia_parse_back_to_the_same_tree(module):
    assert reparsed(module) == module
