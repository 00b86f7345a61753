"""Equal strings made during one parse are one object (shapes.sharing): the memory of a
large tree is mostly its spellings (`%r12`, `.s32`, `.loc` numbers, section bytes), each
written tens of thousands of times. Nodes are never shared: editing one operand changes
exactly that token."""

from __future__ import annotations

import pytest

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import parser, shapes
from ptx2py.ptxgrammar.tree import Instruction, IntLiteral, Register, SectionData

TEXT = """.version 8.0
.target sm_80
.address_size 64

.visible .entry k()
{
\t.reg .b32 \t%r<100>;
\tadd.s32 \t%r12, %r13, 1000;
\tadd.s32 \t%r12, %r13, 1000;
\tadd.s32 \t%r12, %r12, 1000;
\tret;
}
.section .debug_str
{
.b8 105,110,105,110
.b8 105,110,105,110
}
"""

PATHS = {"fast": ptxgrammar.parse, "grammar": parser.parse_full}


def registers(module) -> list[Register]:
    return [n for n in module.walk() if n.__class__ is Register]


@pytest.mark.parametrize("path", PATHS)
def test_equal_spellings_are_one_object(path):
    module = PATHS[path](TEXT)
    r12 = [r.name for r in registers(module) if r.name == "%r12"]
    assert len(r12) == 4 and all(name is r12[0] for name in r12)
    adds = [n for n in module.walk() if n.__class__ is Instruction and n.opcode == "add"]
    assert len(adds) == 3 and all(a.modifiers[0] is adds[0].modifiers[0] for a in adds)
    if path == "fast":          # builders share a tuple of strings too: ('.s32',)
        assert all(a.modifiers is adds[0].modifiers for a in adds)
    numbers = [n.text for n in module.walk() if n.__class__ is IntLiteral and n.text == "105"]
    assert len(numbers) == 4 and all(t is numbers[0] for t in numbers)


@pytest.mark.parametrize("path", PATHS)
def test_nodes_are_not_shared(path):
    module = PATHS[path](TEXT)
    regs = [r for r in registers(module) if r.name == "%r12"]
    assert len({id(r) for r in regs}) == len(regs)
    rows = [n for n in module.walk() if n.__class__ is SectionData]
    assert rows[0] == rows[1] and rows[0] is not rows[1]
    assert all(a is not b for a, b in zip(rows[0].values, rows[1].values))
    regs[1].name = "%r7"                          # an edit changes that one token
    rows[1].values[0].text = "99"
    lines = TEXT.split("\n")
    lines[8] = "\tadd.s32 \t%r7, %r13, 1000;"
    lines[15] = ".b8 99,110,105,110"
    assert ptxgrammar.emit(module) == "\n".join(lines)


def test_sharing_ends_with_the_parse():
    ptxgrammar.parse(TEXT)
    value = "".join(["%r", "12"])
    assert shapes.shared(value) is value          # no table outlives a parse (none keeps strings alive)
    with shapes.sharing():
        first = shapes.shared("".join(["%r", "12"]))
        assert shapes.shared(value) is first
    assert shapes.shared(value) is value
