"""Bad input: a located ParseError (`file:line:col: error: ...`, the line, a caret)."""

from __future__ import annotations

import codecs
import re

import pytest
from conftest import CASES

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import ParseError

HEADER = ".version 9.0\n.target sm_90a\n.address_size 64\n"
KERNEL_OPEN = ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<4>;\n"


def load_cases(path):
    """(name, text, first line, last line) for every `### name | context` block."""
    cases, current = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            name, context, *flags = [w.strip() for w in line[4:].split("|")]
            current = [name, context, "escapes" in flags, []]
            cases.append(current)
        elif current is not None:
            current[3].append(line)
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"text outside a case: {line!r}")
    out = []
    for name, context, escapes, lines in cases:
        body = "\n".join(lines)
        if escapes:
            body = codecs.decode(body, "unicode_escape")
        prefix = {"raw": "", "module": HEADER, "body": HEADER + KERNEL_OPEN}[context]
        suffix = "\n}\n" if context == "body" else "\n"
        first = prefix.count("\n") + 1
        out.append(pytest.param(prefix + body + suffix, first, first + len(lines) - 1, id=name))
    return out


INVALID = load_cases(CASES / "invalid.ptxcases")


def test_there_are_many_invalid_cases():
    assert len(INVALID) >= 45


@pytest.mark.parametrize("text, first, last", INVALID)
@pytest.mark.parametrize("parse", [ptxgrammar.parse, ptxgrammar.parse_full], ids=["fast", "full"])
def test_invalid_form_is_rejected_where_it_is(parse, text, first, last):
    with pytest.raises(ParseError) as info:
        parse(text, "case.ptx")
    err = info.value
    assert err.filename == "case.ptx"
    assert first <= err.line <= last + 1, str(err)
    assert err.column >= 1


def test_message_has_location_line_and_caret():
    text = HEADER + KERNEL_OPEN + "\tmov.u32 %r1, 10u;\n}\n"
    with pytest.raises(ParseError) as info:
        ptxgrammar.parse(text, "k.ptx")
    lines = str(info.value).splitlines()
    assert re.fullmatch(r"k\.ptx:9:\d+: error: .+", lines[0])
    assert lines[1] == " mov.u32 %r1, 10u;"
    caret = lines[2].index("^")
    assert lines[1][caret:caret + 3] in ("10u", "u;")


def test_expected_tokens_are_named():
    text = HEADER + KERNEL_OPEN + "\tmov.u32 %r1, 1\n}\n"
    with pytest.raises(ParseError) as info:
        ptxgrammar.parse(text, "k.ptx")
    assert "expected" in info.value.message and "';'" in info.value.message


def test_non_ascii_byte_in_file_is_located(tmp_path):
    path = tmp_path / "bad.ptx"
    path.write_bytes(b".version 9.0\n.target sm_90\n// caf\xc3\xa9\n")
    with pytest.raises(ParseError) as info:
        ptxgrammar.parse_file(path)
    assert (info.value.line, info.value.column) == (3, 7)


def test_a_megabyte_line_error_is_shown_as_a_window():
    text = HEADER + KERNEL_OPEN + "\t" + "add.s32 %r1, %r1, 1; " * 50_000 + "add.s32 %r1 %r1;\n}\n"
    with pytest.raises(ParseError) as info:
        ptxgrammar.parse(text, "big.ptx")
    shown = str(info.value).splitlines()[1]
    assert len(shown) < 400


def test_deep_nesting_is_an_error_not_a_crash():
    text = HEADER + KERNEL_OPEN + "{" * 5000 + "}" * 5000 + "\n}\n"
    with pytest.raises(ParseError, match="nesting"):
        ptxgrammar.parse(text, "deep.ptx")
