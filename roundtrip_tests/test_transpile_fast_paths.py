"""ptx_to_python's fast paths give what its general paths give.

- `style.QUICK`: infer_style finds most statements' records by a quick key (token classes and
  unflattened trivia tuples) instead of building each one's shape and trivia; off, every
  statement is counted the long way. The records, their counts and the Style must not move.
- `generator.FAST`: the usual statements' lines are written directly from their items' flat
  texts; off, every statement goes through its expression IR and `format.layout`. The Python
  must be byte for byte the same.

The default run takes files of every producer and shape of layout (inline asm, `-G` debug
sections, `.loc` lines, long lines, calls); `-m slow` runs every corpus file."""

from __future__ import annotations

from pathlib import Path

import pytest

import ptxgrammar
from transpile import generator, ptx_to_python, style
from transpile.style import infer_style

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "ptx"
FILES = ["nvcc/atomics.sm_80.ptx", "nvcc/reduce.sm_80.ptx", "nvcc/printf_kernels.sm_80.G.ptx",
         "nvcc/printf_kernels.sm_80.lineinfo.ptx", "clang/device_calls.sm_80.g.ptx",
         "nvcc/mma_sync.sm_80.G.ptx", "nvcc/cub_device.sm_75.ptx"]
ALL = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.ptx"))

# long lines of every kind, a guard, an undeclared register, a call, a block that declares
NASTY = """.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 k_param_0_with_a_long_name_so_that_lines_wrap_somewhere_xxxxx)
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<9>;
\t.reg .b64 \t%rd<4>;
\tld.param.u64 \t%rd1, [k_param_0_with_a_long_name_so_that_lines_wrap_somewhere_xxxxx];
\tld.param.u64 \t%rd1, [k_param_0_with_a_long_name_so_that_lines_wrap_somewhere_xxxxx+8];
\t@!%p1 add.s32 \t%r1, %r2, %r77;
\t{
\t.reg .b32 \t%r<3>;
\tadd.s32 \t%r1, %r2, 3;
\t}
\tadd.s32 \t%r3, %r2, %undeclared_register_with_a_long_name_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;
\tmov.b32 \t%r3, %undeclared_register_with_a_name_so_long_it_does_not_fit_on_any_line_at_allzzzzzzzz;
\tst.global.v4.u32 \t[%rd1+16], {%r1, %r2, %r3, %r4};
\tret;
}
.global .align 1 .b8 data_with_a_long_name[40] = {95, 90, 78, 49, 50, 95, 71, 76, 79, 66, 65, 76, 95, 95, 78, 95, 52, 55, 100, 101, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95};
"""


def _text(name: str) -> str:
    return NASTY if name == "nasty" else ptxgrammar.read_ptx(CORPUS / name)


def _both(name: str, monkeypatch) -> None:
    text = _text(name)
    fast = ptx_to_python(text)
    monkeypatch.setattr(generator, "FAST", False)
    assert ptx_to_python(text) == fast
    monkeypatch.setattr(style, "QUICK", False)
    module = ptxgrammar.parse(text)
    long_memo: list = []
    long_style = infer_style(module, memo=long_memo)
    monkeypatch.setattr(style, "QUICK", True)
    quick_memo: list = []
    quick_style = infer_style(module, memo=quick_memo)
    assert quick_style.table == long_style.table and quick_style.preset == long_style.preset
    # the same record (trivia with the L value, count, shape) for every statement, in order
    assert [r if r.__class__ is str else (r[0], r[1], r[3]) for r in quick_memo[1:]] == \
           [r if r.__class__ is str else (r[0], r[1], r[3]) for r in long_memo[1:]]


@pytest.mark.parametrize("name", ["nasty", *FILES])
def test_fast_paths_give_the_general_paths_output(name, monkeypatch):
    _both(name, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
def test_fast_paths_give_the_general_paths_output_on_every_corpus_file(name, monkeypatch):
    _both(name, monkeypatch)


def test_the_fast_paths_are_taken(monkeypatch):
    """Not a vacuous comparison: with FAST the usual instruction goes the direct way."""
    calls = []
    monkeypatch.setattr(generator.Generator, "emit", lambda self, *a, **k: calls.append(a))
    ptx_to_python(_text("nvcc/reduce.sm_80.ptx"))
    direct = len(calls)
    calls.clear()
    monkeypatch.setattr(generator, "FAST", False)
    ptx_to_python(_text("nvcc/reduce.sm_80.ptx"))
    assert direct * 4 < len(calls)
