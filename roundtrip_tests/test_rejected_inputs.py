"""Defects 2 and 3: what ptxas rejects is a located ParseError, and what the
generator cannot write is a located error too, never a traceback or empty output."""

from __future__ import annotations

import pytest

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import ParseError
from ptx2py.ptxgrammar.parser import parse_full
from ptx2py.transpile import generator, ptx_to_python

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"
PARSERS = pytest.mark.parametrize("parse", [ptxgrammar.parse, parse_full], ids=["fast", "full"])


@PARSERS
@pytest.mark.parametrize("text, column", [
    (HEADER + ".visible .visible .entry k(){ret;}\n", 10),
    (HEADER + ".visible .visible .global .u32 x;\n", 10),
    (HEADER + ".extern .weak .weak .func f();\n", 15),
])
def test_a_repeated_linkage_is_a_located_parse_error(parse, text, column):
    with pytest.raises(ParseError) as info:
        parse(text, "k.ptx")
    assert (info.value.line, info.value.column) == (4, column)
    assert "repeated linkage" in info.value.message


@PARSERS
@pytest.mark.parametrize("text, line, column", [
    ("", 1, 1),
    ("\n\n", 3, 1),
    ("// only a comment\n.target sm_90\n", 2, 1),
    (".address_size 64\n.version 9.0\n", 1, 1),
])
def test_a_module_without_a_leading_version_is_refused(parse, text, line, column):
    with pytest.raises(ParseError) as info:
        parse(text, "k.ptx")
    assert ".version" in info.value.message
    assert (info.value.line, info.value.column) == (line, column)


def test_the_cli_check_counts_an_empty_file_as_failed(tmp_path):
    from ptx2py import cli

    (tmp_path / "empty.ptx").write_text("")
    assert cli.ptx2py_main(["check", str(tmp_path)]) == 1


def test_what_the_generator_cannot_write_is_a_located_error(monkeypatch):
    """Any statement the generator refuses is reported at that statement."""
    def refuse(self, s, depth, extra):
        raise generator._Unsupported("label spelling")

    monkeypatch.setattr(generator.Generator, "s_Label", refuse)
    text = HEADER + ".visible .entry k()\n{\n\tbra.uni L1;\n  L1:\n\tret;\n}\n"
    with pytest.raises(ParseError) as info:
        ptx_to_python(text, filename="k.ptx")
    assert (info.value.line, info.value.column) == (7, 3)
    assert "Label" in info.value.message and "label spelling" in info.value.message
