"""ptx_to_python's fast paths give what its general paths give.

- `style.QUICK`: infer_style finds most statements' records by a quick key (token classes and
  unflattened trivia tuples) instead of building each one's shape and trivia; off, every
  statement is counted the long way. The records, their counts and the Style must not move.
- `generator.FAST`: the usual statements' lines are written directly from their items' flat
  texts; off, every statement goes through its expression IR and `format.layout`. The Python
  must be byte for byte the same. A register family's names are put into the name cache at
  once the first time one of them is looked up (`Generator._fill`), and functions that
  declare the same registers share one cache.

The default run takes files of every producer and shape of layout (inline asm, `-G` debug
sections, `.loc` lines, long lines, calls); `-m slow` runs every corpus file."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptx2py import ptxgrammar
from ptx2py.transpile import generator, ptx_to_python, style
from ptx2py.transpile.style import infer_style

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
"""  # noqa: E501 (a data line longer than any layout)


# register families: a plain declaration among a family's names, names past the count, a
# leading zero, a block that declares the family again; functions with the same, fewer and
# more declarations than the one before (one name cache or another)
FAMILIES = """.version 8.0
.target sm_80
.address_size 64

.visible .entry a()
{
\t.reg .b32 \t%r<9>;
\t.reg .b32 \t%r5;
\t.reg .b32 \t%x<4>;
\tadd.s32 \t%r1, %r5, %r8;
\tadd.s32 \t%r1, %r9, %r012;
\tadd.s32 \t%x3, %x0, %x4;
\t{
\t.reg .b32 \t%r<3>;
\tadd.s32 \t%r1, %r2, %r5;
\tadd.s32 \t%r4, %r7, %x1;
\t}
\tadd.s32 \t%r2, %r7, %r5;
\tret;
}
.visible .entry b()
{
\t.reg .b32 \t%r<9>;
\tadd.s32 \t%r1, %r5, %r8;
\tret;
}
.visible .entry c()
{
\t.reg .b32 \t%r<5>;
\tadd.s32 \t%r1, %r5, %r4;
\tret;
}
.visible .entry d()
{
\t.reg .b32 \t%r<9>;
\t.reg .b32 \t%r5;
\tadd.s32 \t%r1, %r5, %r8;
\tret;
}
"""


def _text(name: str) -> str:
    if name in ("nasty", "families"):
        return NASTY if name == "nasty" else FAMILIES
    return ptxgrammar.read_ptx(CORPUS / name)


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


@pytest.mark.parametrize("name", ["nasty", "families", *FILES])
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


def test_register_families_resolve_as_declared():
    """Each name as its function's (and block's) declarations give it, whichever function's
    lookups filled the cache first."""
    lines = [x.strip() for x in ptx_to_python(FAMILIES).splitlines() if x.strip().startswith("ptx.add.")]
    assert lines == [
        "ptx.add.s32(r[1], r5, r[8])",                   # a: %r5 declared plainly wins
        'ptx.add.s32(r[1], regn("%r9"), regn("%r012"))',  # past the count, a leading zero
        'ptx.add.s32(x[3], x[0], regn("%x4"))',
        "ptx.add.s32(r_2[1], r_2[2], r5)",               # the block's family; %r5 from a
        "ptx.add.s32(r[4], r[7], x[1])",                 # past the block's count: a's
        "ptx.add.s32(r[2], r[7], r5)",                   # after the block: a's again
        "ptx.add.s32(r[1], r[5], r[8])",                 # b: no plain %r5
        'ptx.add.s32(r[1], regn("%r5"), r[4])',          # c: %r<5>
        "ptx.add.s32(r[1], r5, r[8])",                   # d: a's declarations, one cache
    ]
