"""python_to_ptx writes each finished top-level statement as soon as it is done and drops
its tree (`Recorder.take_finished`); ptx_to_python lays out each top-level statement as
soon as it is generated (`generator.generate_python`). Both must give exactly what the
one-piece paths give."""

from __future__ import annotations

from test_transpile_stepwise import PRELUDE
from test_transpile_stepwise import stepwise as run_stepwise
from test_transpile_stepwise import whole as run_whole

from ptx2py import ptxgrammar
from ptx2py.transpile import ptx_to_python, python_to_ptx
from ptx2py.transpile.dsl import recorder
from ptx2py.transpile.generator import Generator, render

TWO_KERNELS = PRELUDE + '''
with ptx.entry("a", visible=True):
    r = reg.b32("%r", 4)
    ptx.add.s32(r[1], r[2], 4)
    ptx.ret()
ptx.blank()
with ptx.entry("b", visible=True):
    r = reg.b32("%r", 4)
    ptx.mov.u32(r[1], sreg.tid.x)
    ptx.ret()
'''

PTX = """.version 8.0
.target sm_90a
.address_size 64

// first
.visible .entry a()
{
\t.reg .b32 \t%r<4>;
\tadd.s32 \t%r1, %r2, 4;
\tret;
}

.visible .entry b()
{
\t.loc 1 2 3
\tret;
}
"""


def test_statements_written_as_they_finish_give_the_whole_runs_ptx():
    out = run_stepwise(TWO_KERNELS)
    assert out is not None
    assert out == run_whole(TWO_KERNELS)
    assert out.count(".entry") == 2


def test_only_finished_top_level_statements_are_taken():
    rec = recorder.begin()
    try:
        ns: dict = {}
        exec(compile(PRELUDE, "k.py", "exec"), ns)
        taken = rec.take_finished()
        assert [type(s).__name__ for s in taken] == ["Version", "Target", "AddressSize"]
        assert rec.take_finished() == []                   # nothing new since
        exec('e = ptx.entry("k", visible=True)\ne.__enter__()\nptx.ret()\n', ns)
        assert rec.take_finished() == []                   # the function is still open
        exec("e.__exit__(None, None, None)\n", ns)
        assert [type(s).__name__ for s in rec.take_finished()] == ["Function"]
        rec.mark()                                         # positions now count from the start
        exec("ptx.blank()\nptx.exit()\n", ns)
        assert rec.take_finished() == []
    finally:
        recorder.end()


def test_the_trivia_table_is_still_refused_after_the_body_was_taken_out():
    source = TWO_KERNELS + "ptx.trivia({})\n"
    assert run_stepwise(source) is None                   # refused, as the whole run refuses it
    try:
        python_to_ptx(source, "k.py")
    except Exception as e:  # noqa: BLE001 - the message is compared below
        assert "ptx.trivia(...) runs before the body" in str(e)
    else:
        raise AssertionError("ptx.trivia after the body was accepted")


def test_python_laid_out_per_statement_is_the_rendered_module():
    module = ptxgrammar.parse(PTX)
    gen = Generator(module)
    reference = render(gen.run(), gen.style)
    assert ptx_to_python(PTX) == reference
    assert python_to_ptx(reference) == PTX
