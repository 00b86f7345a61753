"""The tree: typed statements, edits that change exactly one token, and no stored source."""

from __future__ import annotations

import dataclasses
import difflib
import re

import pytest
from conftest import corpus_files, file_id, probe_files, sample, small

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar.tree import (
    Address,
    Function,
    Instruction,
    Module,
    PerfDirective,
    Register,
    SpecialRegister,
    Symbol,
    VarDecl,
    Version,
)

KERNEL = """//
// a comment with 12 digits
//
.version 8.7
.target sm_90a
.address_size 64

\t// .globl\tk
.visible .entry k(
\t.param .u64 .ptr .global .align 1 k_param_0
)
.maxntid 128, 1, 1
{
\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<6>;
\t.reg .b64 \t%rd<4>;

\tld.param.u64 \t%rd1, [k_param_0];
\tmov.u32 \t%r1, %tid.x;
\tsetp.lt.u32 \t%p1, %r1, 100;
\t@!%p1 bra \t$L__BB0_2;
\tld.global.nc.u32 \t%r2, [%rd1+-4];
\tadd.s32 \t%r3, %r2, 7;
\tst.global.u32 \t[%rd1], %r3;
$L__BB0_2:
\tret;

}
"""


def test_statements_are_typed():
    module = ptxgrammar.parse(KERNEL)
    assert isinstance(module.items[0], Version) and module.items[0].number == "8.7"
    fn = module.functions[0]
    assert fn.name == "k" and fn.head.directives == (PerfDirective(".maxntid", ("128", "1", "1"),
                                                                   fn.head.directives[0].trivia),)
    insts = [s for s in fn.body.items if isinstance(s, Instruction)]
    ld = insts[4]
    assert (ld.opcode, ld.modifiers) == ("ld", (".global", ".nc", ".u32"))
    assert isinstance(ld.operands[1], Address)
    assert ld.operands[1].base == Register("%rd1", None, ld.operands[1].base.trivia)
    assert ld.operands[1].offset.op == "-" and ld.operands[1].offset.operand.value == 4
    assert isinstance(insts[1].operands[1], SpecialRegister) and insts[1].operands[1].component == ".x"
    bra = insts[3]
    assert bra.guard.negated and bra.guard.predicate == "%p1"
    assert isinstance(bra.operands[0], Symbol)
    decl = fn.body.items[0]
    assert isinstance(decl, VarDecl) and decl.type == ".pred" and decl.declarators[0].count == "2"


def changed_lines(before: str, after: str):
    a, b = before.splitlines(), after.splitlines()
    return [(a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes()
            if tag != "equal"]


def test_changing_one_operand_modifier_and_directive_changes_exactly_those_tokens():
    module = ptxgrammar.parse(KERNEL)
    fn = module.functions[0]
    items = list(fn.body.items)
    add_index = next(i for i, s in enumerate(items) if isinstance(s, Instruction) and s.opcode == "add")
    add = items[add_index]
    ops = list(add.operands)
    ops[2] = ops[2].with_changes(text="9")                       # one operand
    items[add_index] = add.with_changes(operands=tuple(ops), modifiers=(".u32",))   # one modifier
    head = fn.head.with_changes(directives=(fn.head.directives[0].with_changes(values=("256", "1", "1")),))
    new_fn = Function(head, fn.body.with_changes(items=tuple(items)), fn.trivia)
    new_items = [new_fn if x is fn else x for x in module.items]
    new_items[0] = module.items[0].with_changes(number="9.0")      # one directive value
    edited = ptxgrammar.emit(module.with_changes(items=tuple(new_items)))
    assert changed_lines(KERNEL, edited) == [
        ([".version 8.7"], [".version 9.0"]),
        ([".maxntid 128, 1, 1"], [".maxntid 256, 1, 1"]),
        (["\tadd.s32 \t%r3, %r2, 7;"], ["\tadd.u32 \t%r3, %r2, 9;"]),
    ]


TOKEN_FIELD = re.compile(r'[A-Za-z0-9_$%.:+\-!~|&^*/<>=?]*|"[^"]*"')


def string_fields(node):
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if isinstance(v, str):
                yield f.name, v


@pytest.mark.parametrize("path", sample(small(corpus_files(), 300_000), 25) + sample(probe_files(), 25), ids=file_id)
def test_no_node_keeps_source_text(path):
    """Every string in the tree is one token or the trivia before one token."""
    text = ptxgrammar.read_ptx(path)
    module = ptxgrammar.parse(text)
    trivia_re = re.compile(r"(\s|//[^\n\r]*|/\*.*?\*/|#[^\n\r]*)*", re.S)
    token_count = 0
    for node in module.walk():
        assert not isinstance(node, Module) or set(f.name for f in dataclasses.fields(node)) == {"items", "trailing",
                                                                                                 "trivia"}
        for name, value in string_fields(node):
            if name in ("trivia", "trailing"):
                assert trivia_re.fullmatch(value), (name, value[:80])
            else:
                token_count += 1
                assert TOKEN_FIELD.fullmatch(value), (type(node).__name__, name, value[:80])
    assert token_count > 0


def test_literals_keep_their_spelling_and_values():
    module = ptxgrammar.parse(".version 9.0\n.target sm_90\n"
                              ".entry k() { mov.u32 %r1, 0x1F; mov.u32 %r1, 017; mov.f32 %f1, 0f3F800000; }")
    ops = [s.operands[1] for s in module.functions[0].body.items]
    assert [o.text for o in ops] == ["0x1F", "017", "0f3F800000"]
    assert [o.value for o in ops] == [31, 15, 1.0]


def test_unknown_instructions_parse_through_the_generic_shape():
    src = (".version 9.9\n.target sm_200a\n"
           ".entry k() { @%p1 frobnicate.async.shared::cluster.x17.b4096 {%r1, _}, [%rd1+16], %r2|%p3; }")
    inst = ptxgrammar.parse(src).functions[0].body.items[0]
    assert inst.opcode == "frobnicate" and inst.modifiers == (".async", ".shared::cluster", ".x17", ".b4096")
    assert ptxgrammar.emit(ptxgrammar.parse(src)) == src


@pytest.mark.parametrize("path", sample(small(corpus_files(), 300_000), 10) + sample(probe_files(), 10), ids=file_id)
def test_trivia_splits_into_typed_parts_that_join_back(path):
    from ptx2py.ptxgrammar import Comment, LineMarker, Whitespace, split_trivia

    module = ptxgrammar.parse(ptxgrammar.read_ptx(path))
    for node in module.walk():
        for text in (node.trivia or ()) + ((module.trailing,) if node is module else ()):
            parts = split_trivia(text)
            assert "".join(p.text for p in parts) == text
            assert all(isinstance(p, (Whitespace, Comment, LineMarker)) for p in parts)


def test_comments_before_a_statement_are_typed():
    fn = ptxgrammar.parse(KERNEL).functions[0]
    assert [c.body for c in fn.head.comments] == [" .globl\tk"]
    assert ptxgrammar.parse(KERNEL).items[0].comments[1].body == " a comment with 12 digits"


def test_every_node_class_can_be_built_by_filling_its_fields():
    """Shape builders make a node with object.__new__ and set its dataclass fields one by one
    (ptxgrammar/shapes.py: compose), skipping __init__: a node class with a __post_init__ or a
    field outside __init__ would come out different from the grammar's, silently."""
    import dataclasses

    from ptx2py.ptxgrammar.shapes import BUILDER_GLOBALS

    nodes = [c for c in BUILDER_GLOBALS.values() if isinstance(c, type) and dataclasses.is_dataclass(c)]
    assert len(nodes) > 10
    for cls in nodes:
        assert not hasattr(cls, "__post_init__"), cls
        assert all(f.init for f in dataclasses.fields(cls)), cls
