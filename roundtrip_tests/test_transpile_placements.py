"""ptx_to_python's two shortcuts give what the long way gives: `layout.place` reusing
infer_style's records (one Placement shared per shape, trivia and leading trivia) places
every statement as placing each one from scratch does, and the Python laid out statement by
statement as it is generated (`generate_python`, no IR) is the generation IR rendered."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptx2py import ptxgrammar
from ptx2py.transpile import ptx_to_python, python_to_ptx
from ptx2py.transpile.generator import Generator, generate_python, render
from ptx2py.transpile.layout import place
from ptx2py.transpile.style import infer_style

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "ptx"
# inline asm and call blocks, -G debug sections, .loc lines, a clang module with sections
FILES = ["nvcc/atomics.sm_80.ptx", "nvcc/reduce.sm_80.ptx", "nvcc/printf_kernels.sm_80.G.ptx",
         "nvcc/printf_kernels.sm_80.lineinfo.ptx", "clang/device_calls.sm_80.g.ptx"]

# a statement shape repeated at the start, nested blocks, a deep `{ }` and lines past 88 columns
NESTED = """.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 p)
{
\t.reg .b32 \t%r<9>;
\t// begin inline asm
\tmov.u32 %r1, 1;
\t// end inline asm
\t{
\t.reg .b32 \t%r<3>;
\t{ { add.s32 \t%r1, %r2, 3; } }
\t}
\tadd.s32 \t%r3, %r2, 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff;
\tret;
}
"""


def _texts():
    yield "nested", NESTED
    for name in FILES:
        yield name, ptxgrammar.read_ptx(CORPUS / name)


@pytest.mark.parametrize("name,text", list(_texts()), ids=lambda v: v if len(v) < 60 else "")
def test_recorded_placements_are_the_placements_from_scratch(name, text):
    module = ptxgrammar.parse(text)
    memo: list = []
    style = infer_style(module, memo=memo)
    shared = list(place(module, style, memo))
    assert memo[0] is module and len(memo) > 1
    assert shared == list(place(module, style))          # no records: each statement placed anew
    assert shared == list(place(module, style, [None]))  # records of another module are not used


@pytest.mark.parametrize("name,text", list(_texts()), ids=lambda v: v if len(v) < 60 else "")
def test_python_laid_out_as_generated_is_the_rendered_ir(name, text):
    module = ptxgrammar.parse(text)
    direct = generate_python(Generator(module))
    gen = Generator(module)
    assert direct == render(gen.run(), gen.style)
    assert direct == ptx_to_python(text)
    assert python_to_ptx(direct) == text
