"""The Pygments lexer built from the grammar's terminals (highlight/lexer.py): no error token on
real PTX, and the tokens Pygments' own PtxLexer gets wrong come out whole."""

from __future__ import annotations

from pathlib import Path

import pytest

pygments = pytest.importorskip("pygments")
from conftest import CORPUS, EXTERNAL, ptx_files  # noqa: E402
from pygments.token import Error, Keyword, Name, Operator  # noqa: E402

from ptx2py.highlight.lexer import PtxLexer  # noqa: E402

EXTERNAL_DIR = EXTERNAL

SNIPPET = """\
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 .ptr .global .align 1 k_param_0)
.reqntid 128
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<9>;
\t.shared .align 16 .b8 smem[1024];
$L__BB0_1:
\t@%p1 bra \t$L__BB0_1;
\t@!%p2 mov.u32 %r1, 0f3F800000;
\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;
\ttcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r3, %p1;
\tsetp.ne.b32 %r1|%p1, %r2, 0;
\tret;
}
"""


def _errors(text: str) -> list:
    return [(pos, v) for pos, tt, v in PtxLexer().get_tokens_unprocessed(text) if tt is Error]


def test_tricky_constructs_lex_without_errors():
    assert _errors(SNIPPET) == []


def test_token_types_of_guards_spaces_and_pairs():
    toks = [(tt, v) for _, tt, v in PtxLexer().get_tokens_unprocessed(SNIPPET) if v.strip()]
    assert (Operator, "@") in toks and (Name.Variable, "%p1") in toks
    assert (Keyword.Type, ".shared::cta") in toks
    assert (Operator, "|") in toks
    assert (Name.Label, "$L__BB0_1") in toks
    assert (Keyword, "bra") in toks and (Keyword, "tcgen05") in toks
    assert any(v == ".kind::f16" for _, v in toks)


def _sample() -> list[Path]:
    """Every external file and the smallest corpus file of each producer (the whole corpus is -m slow)."""
    smallest = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        files = ptx_files(folder)
        if files:
            smallest.append(min(files, key=lambda p: p.stat().st_size))
    return ptx_files(EXTERNAL_DIR) + smallest


def _error_files(files) -> list:
    bad = []
    for f in files:
        e = _errors(f.read_text(errors="replace"))
        if e:
            bad.append((str(f), len(e), e[0]))
    return bad


def test_no_error_tokens_on_external_and_a_corpus_sample():
    files = _sample()
    assert len(files) > 5
    assert _error_files(files) == []


@pytest.mark.slow
def test_no_error_tokens_on_the_whole_corpus():
    files = ptx_files(CORPUS) + ptx_files(EXTERNAL_DIR)
    assert len(files) > 400
    assert _error_files(files) == []


def test_registered_as_a_pygments_plugin():
    from pygments.lexers import get_lexer_by_name

    assert isinstance(get_lexer_by_name("ptx2py"), PtxLexer)
