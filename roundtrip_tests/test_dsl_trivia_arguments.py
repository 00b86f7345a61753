"""Defect 6: the DSL's trivia arguments hold whitespace, comments and line markers
only; anything else is a DSLError at the calling line (never PTX outside the tree)."""

from __future__ import annotations

import pytest

from ptx2py.transpile import DSLError, python_to_ptx

HEAD = 'from ptx2py.dsl import *\nptx.version("9.0")\nptx.target("sm_90")\nptx.address_size(64)\n'


def run(body: str) -> str:
    return python_to_ptx(HEAD + 'with ptx.entry("k", params=[], visible=True):\n' + body + "    ptx.ret()\n",
                         "k.py")


@pytest.mark.parametrize("call", [
    'ptx.text("\\tadd.s32 %r1, %r2, 99;")',
    'ptx.tail(" trap;")',
    'ptx.comment("two\\nlines")',
    'ptx.comment("x", indent="\\tret;")',
    'ptx.blank("ret;")',
    'ptx.ret(fmt={1: " trap; "})',
    'ptx.ret(lead="trap; ")',
    'ptx.ret(indent="\\tbar.sync 0; ")',
    'ptx.ret(fmt={1: " // swallows the semicolon"})',
    'ptx.text("# not a line marker")',
    'ptx.text("/* never closed")',
])
def test_non_trivia_in_a_trivia_argument_is_refused_at_its_line(call):
    with pytest.raises(DSLError) as info:
        run(f"    {call}\n")
    assert info.value.line in (6, 7)
    assert "trivia" in info.value.message or "one line" in info.value.message or "spaces" in info.value.message


@pytest.mark.parametrize("call", [
    'ptx.text(\'# 12 "k.cu"\')',
    'ptx.comment(" note")', 'ptx.blank("  ")', 'ptx.tail("  /* t */")',
])
def test_trivia_arguments_are_accepted(call):
    text = run(f"    {call}\n")
    assert text.startswith(".version 9.0")


def test_a_block_comment_across_text_lines_round_trips():
    text = run('    ptx.text("/* a block")\n    ptx.text("   comment */")\n')
    assert "/* a block\n   comment */" in text


_TABLE_MODULE = '''from ptx2py.dsl import *
ptx.version("9.0")
ptx.target("sm_90")
ptx.address_size(64)
with ptx.entry("k", params=[], visible=True):
    ptx.bar.sync(0)
    ptx.comment(" a // b")
    ptx.ret()

# Layout of the PTX text (whitespace, markers), keyed by statement; py2ptx reads it first.
ptx.trivia({KEY: ENTRY})
'''


def _with_entry(entry: str) -> str:
    from ptx2py.ptxgrammar import parse
    from ptx2py.ptxgrammar.tree import Instruction
    from ptx2py.transpile.dsl.trivia_table import fingerprint

    module = parse(".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n\tbar.sync 0;\n\tret;\n}\n")
    bar = next(x for x in module.walk()
               if x.__class__ is Instruction and x.opcode.startswith("bar"))
    return python_to_ptx(_TABLE_MODULE.replace("KEY", repr(fingerprint(bar))).replace("ENTRY", entry), "k.py")


def test_an_inline_entry_puts_the_next_comment_on_the_statements_line():
    out = _with_entry('{"inline": " " * 3}')
    assert "bar.sync 0;   // a // b\n" in out
    assert "bar.sync 0;\n\t// a // b\n" in _with_entry('{"inline": None}')   # None: its own line


@pytest.mark.parametrize("entry", ['{"inline": " ret; "}', '{"inline": "x"}'])
def test_an_inline_entry_that_is_not_whitespace_is_refused(entry):
    with pytest.raises(DSLError) as info:
        _with_entry(entry)
    assert "trivia" in info.value.message
