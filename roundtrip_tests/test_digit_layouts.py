"""The fast path's shortcuts build the full grammar's tree: chunks looked up by their digit
layout (parser.ShapeCache.exact), runs of one-number data lines (scanner.DATA_RUN); and a
layout met again with a number the grammar refuses (`08`) is still refused, located."""

from __future__ import annotations

import pytest

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import ParseError
from ptx2py.ptxgrammar.parser import parse_fast, parse_full
from ptx2py.transpile import fastrun

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
BODY = """
.visible .entry k()
{
\t.reg .b32 \t%r<100>;
\tadd.s32 \t%r12, %r13, 10;
\tadd.s32 \t%r2, %r3, 99;
\tadd.s32 \t%r12, %r13, 0;
\tadd.s32 \t%r12, %r13, 00;
\tret;
}
"""
SECTION = """\t.section\t.debug_info
\t{
.b8 10
.b8 20
.b8 0
.b8 00
.b32 7
.b32 70000
.b8 1,2,3
.b8 255
\t}
"""


@pytest.mark.parametrize("text", [HEAD + BODY, HEAD + SECTION, HEAD + BODY + SECTION])
def test_layout_hits_and_data_runs_build_the_grammar_tree(text):
    for _ in range(2):                  # the second time every layout is known
        fast = parse_fast(text)
        assert fast == parse_full(text)
        assert ptxgrammar.emit(fast) == text


@pytest.mark.parametrize("good, bad", [
    ("%r13, 00;", "%r13, 08;"),         # a known instruction layout
    (".b8 00\n", ".b8 08\n"),           # inside a run of data lines
])
def test_a_known_layout_with_a_bad_number_is_refused_where_it_is(good, bad):
    text = HEAD + BODY + SECTION
    ptxgrammar.parse(text)              # every layout learned, `00` among them
    wrong = text.replace(good, bad)
    with pytest.raises(ParseError) as fast:
        ptxgrammar.parse(wrong)
    with pytest.raises(ParseError) as full:
        parse_full(wrong)
    assert str(fast.value) == str(full.value)
    line = wrong[: wrong.index(bad)].count("\n") + 1
    assert f":{line}:" in str(fast.value)


@pytest.mark.parametrize("block", [7, 100, 1 << 16])
def test_fastrun_split_by_chunks_is_the_whole_text_split(block, monkeypatch):
    """The plan splits literals out a chunk of lines at a time (few code pieces alive at
    once): the literals and the holed text are those of one split of the whole text."""
    source = fastrun.HEADER + '\nx = 12\ny = b"a\\x00"  # 3\n\nz = r\'q\' + "0" + 070\n' * 40
    monkeypatch.setattr(fastrun, "_CHUNK", block)
    literals, holed = fastrun._split_literals(source)
    pieces = fastrun._MODULE_LITERAL.split(source)
    assert literals == pieces[1::2] and "12" in literals
    assert holed == fastrun._HOLE.join(pieces[0::2])
