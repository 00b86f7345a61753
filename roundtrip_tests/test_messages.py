"""Defect 8: messages. Expected tokens by their spelling, binary input shown escaped,
and Python-input errors as `file:line:col: error:` with the line and a caret."""

from __future__ import annotations

import re

import pytest

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import ParseError
from ptx2py.ptxgrammar.errors import TERMINAL_NAMES
from ptx2py.ptxgrammar.parser import _parser
from ptx2py.transpile import DSLError, python_to_ptx

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"


def test_every_grammar_terminal_has_a_readable_name():
    names = {t.name for t in _parser("full").lark.terminals} - {
        "WHITESPACE", "LINE_COMMENT", "BLOCK_COMMENT", "LINE_MARKER"}
    assert names - set(TERMINAL_NAMES) == set()


@pytest.mark.parametrize("text", [
    HEADER + ".global .u32 x = 1 2;\n",
    HEADER + ".visible .entry k()\n{\n\tmov.u32 %r1, 1 2;\n}\n",
    HEADER + ".visible .entry k()\n{\n\tmov.u32 %r1, (1 + ;\n}\n",
    HEADER + ".visible .entry k()\n{\n\t@ ;\n}\n",
])
def test_expected_tokens_are_spelled_not_named_by_the_grammar(text):
    with pytest.raises(ParseError) as info:
        ptxgrammar.parse(text, "k.ptx")
    message = info.value.message
    assert "expected" in message
    assert not re.search(r"\b[a-z]*(addop|andand|oror|mulop|relop|eqop|shiftop|unaryop|__anon)\b", message, re.I)
    assert not re.search(r"\b[A-Z][A-Z_]{2,}\b", message), message


def test_a_binary_file_is_shown_escaped(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x1b[31mred\x07\n")
    with pytest.raises(ParseError) as info:
        ptxgrammar.parse_file(path)
    shown = str(info.value)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\xff]", shown), repr(shown)
    lines = shown.splitlines()
    assert lines[1].startswith("\\x7fELF")
    assert lines[2].index("^") == lines[1].index("\\x7f")


PY = 'from ptx2py.dsl import *\nptx.version("9.0")\nptx.target("sm_90")\nwith ptx.entry("k", params=[]):\n'


@pytest.mark.parametrize("body, line, column", [
    ("    ptx.mov.u32(regn('%r1'), nowhere)\n", 5, 30),
    ("    ptx.ret(fmt={1: 'trap;'})\n", 5, 5),
    ("    ptx.ret(\n", 5, 12),
])
def test_python_input_errors_have_a_column_the_line_and_a_caret(body, line, column):
    with pytest.raises(DSLError) as info:
        python_to_ptx(PY + body, "k.py")
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    lines = str(err).splitlines()
    assert lines[0].startswith(f"k.py:{line}:{column}: error: ")
    assert lines[1] == body.rstrip("\n")
    assert lines[2] == " " * (column - 1) + "^"
