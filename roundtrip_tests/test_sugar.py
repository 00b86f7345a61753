"""`--sugar`: every pass keeps the bytes (corpus sample, drawn trees, case files),
the Python is black-formatted, and no pass moves an instruction across a barrier."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from conftest import CASES, corpus_files, external_files, file_id, probe_files, sample, small
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import modules

import ptx2py
from ptx2py import ptxgrammar, transpile
from ptx2py.sugar import pipeline
from ptx2py.transpile.format import black_format
from ptx2py.transpile.generator import Generator, render

SUGAR_CASES = CASES / "sugar"
PASS_NAMES = [p.__name__.rsplit(".", 1)[1] for p in pipeline.PASSES]


def sugar_with(text: str, passes) -> str:
    module = ptxgrammar.parse(text)
    gen = Generator(module)
    stmts = pipeline.apply(gen.run(), module=module, generator=gen, passes=passes)
    return render(stmts, gen.style)


def roundtrips(text: str, passes=None) -> str:
    src = ptx2py.ptx_to_python(text, sugar=True) if passes is None else sugar_with(text, passes)
    assert transpile.python_to_ptx(src) == text
    return src


# --- corpus -----------------------------------------------------------------------------

SAMPLE = sample(small(corpus_files(), 250_000), 24) + sample(external_files(), 8)   # big files: -m slow


@pytest.mark.parametrize("path", SAMPLE, ids=file_id)
def test_sugar_round_trips_and_is_black_formatted(path):
    text = ptxgrammar.read_ptx(path)
    src = roundtrips(text)
    assert black_format(src) == src


@pytest.mark.parametrize("path", probe_files(), ids=file_id)
def test_sugar_round_trips_on_every_syntax_probe(path):
    """The probes hold the odd spellings (`.loc` forms, attributes) no compiler writes often."""
    text = ptxgrammar.read_ptx(path)
    src = roundtrips(text)
    assert black_format(src) == src


@pytest.mark.slow
@pytest.mark.parametrize("path", corpus_files() + external_files(), ids=file_id)
def test_sugar_round_trips_on_every_file(path):
    text = ptxgrammar.read_ptx(path)
    src = roundtrips(text)
    if len(src) < 2_000_000:
        assert black_format(src) == src


# --- drawn trees: each pass alone and all together ------------------------------------

SETTINGS = settings(max_examples=60, deadline=timedelta(seconds=30),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def sugar_shaped(draw):
    """PTX text with what the passes look for: affine runs, .loc + comments, inline asm, DWARF rows."""
    n = draw(st.integers(2, 9))
    a, b = draw(st.integers(0, 20)), draw(st.integers(-2, 3))
    c = draw(st.integers(0, 5))
    lines = [".version 8.0", ".target sm_90a", ".address_size 64", "", ".visible .entry k()", "{",
             "\t.reg .b32 \t%r<200>;", "\t.reg .pred \t%p<4>;"]
    for r in range(n):
        if draw(st.booleans()):
            lines.append(f"\t.loc\t1 {10 + r} {c}" + ("                          // k.py:%d:%d" % (10 + r, c)
                                                     if draw(st.booleans()) else ""))
        op = draw(st.sampled_from(["add.s32 \t%r{x}, %r{y}, {z};", "bar.sync \t{z};", "fence.proxy.async;",
                                   "mbarrier.init.shared::cta.b64 [%r{x}], 1;", "mov.b32 \t%r{x}, {z};"]))
        text = op.format(x=a + 40 + max(b, 0) * r, y=a + 100 + r, z=c + r * max(b, 0))
        if draw(st.booleans()):
            lines += ["\t// begin inline asm", "\t" + text] + [""] * draw(st.integers(0, 1)) + ["\t// end inline asm"]
        else:
            lines.append("\t" + text)
        if draw(st.booleans()):
            lines.append("\tbar.sync \t0;")
    lines += ["\tret;", "}", "\t.section\t.debug_abbrev", "\t{"]
    for r in range(draw(st.integers(0, 6))):
        lines.append(f".b8 {draw(st.integers(0, 255))}" + (" " * 30 + "// note" if draw(st.booleans()) else ""))
    lines += ["\t}", '\t.file\t1 "/x/k.py"', ""]
    return "\n".join(lines)


@SETTINGS
@given(modules(), st.sampled_from([None, *[[p] for p in pipeline.PASSES]]))
def test_each_pass_keeps_the_bytes_of_drawn_trees(module, passes):
    roundtrips(ptxgrammar.emit(module), passes)


@SETTINGS
@given(sugar_shaped(), st.sampled_from([None, *[[p] for p in pipeline.PASSES]]))
def test_each_pass_keeps_the_bytes_of_sugar_shaped_text(text, passes):
    src = roundtrips(text, passes)
    assert black_format(src) == src


# --- barriers ---------------------------------------------------------------------------

FENCES = ("bar", "barrier", "fence", "membar", "mbarrier", "wgmma", "tcgen05", "cp")


def _opcode_order(text):
    return [(n.opcode, n.modifiers) for n in ptxgrammar.parse(text).walk()
            if n.__class__.__name__ == "Instruction"]


@pytest.mark.parametrize("path", sample(small(corpus_files(), 250_000), 10), ids=file_id)
def test_no_pass_moves_an_instruction_across_a_barrier(path):
    text = ptxgrammar.read_ptx(path)
    for p in pipeline.PASSES:
        back = transpile.python_to_ptx(sugar_with(text, [p]))
        order = _opcode_order(back)
        assert order == _opcode_order(text)
        fences = [k for k, (op, _) in enumerate(order) if op in FENCES]
        assert fences == [k for k, (op, _) in enumerate(_opcode_order(text)) if op in FENCES]


def test_a_loop_never_spans_a_barrier_it_does_not_repeat():
    text = "\n".join([".version 8.0", ".target sm_90a", ".address_size 64", "", ".visible .entry k()", "{",
                      "\t.reg .b32 \t%r<20>;", "\tmov.b32 \t%r1, 1;", "\tmov.b32 \t%r2, 2;", "\tbar.sync \t0;",
                      "\tmov.b32 \t%r3, 3;", "\tmov.b32 \t%r4, 4;", "\tret;", "}", ""])
    src = roundtrips(text)
    assert "for i in range(" not in src or src.index("bar.sync") > src.rindex("for i")
    assert src.count("ptx.bar.sync(0)") == 1


# --- case files ---------------------------------------------------------------------------


def _cases():
    for folder in sorted(SUGAR_CASES.glob("*")):
        for f in sorted(folder.glob("*.case")):
            yield pytest.param(folder.name, f, id=f"{folder.name}/{f.stem}")


def _read_case(path: Path):
    text = path.read_text()
    inp, out = text.split("# output\n", 1)
    return inp.split("# input\n", 1)[1], out


@pytest.mark.parametrize("pass_name,path", list(_cases()))
def test_sugar_case(pass_name, path):
    ptx_text, expected = _read_case(path)
    assert pass_name in PASS_NAMES
    src = roundtrips(ptx_text)
    assert black_format(src) == src
    lines, k = src.split("\n"), 0
    for want in expected.strip("\n").split("\n"):  # the expected lines, in this order
        while k < len(lines) and lines[k] != want:
            k += 1
        assert k < len(lines), f"missing {want!r} in:\n{src}"
        k += 1


# --- .loc spellings -----------------------------------------------------------------------------

_LOC_MODULE = '''from ptx2py.dsl import *  # noqa: F401,F403

ptx.version("8.0")
ptx.target("sm_90a")
ptx.address_size(64)
with ptx.entry("k", params=[], visible=True):
    r = reg.b32("%r", 8)
    {}.add.s32(r[1], r[2], 1)
    ptx.ret()
ptx.file(1, "/x/k.cu")
ptx.file(2, "/x/a.h")
'''


@pytest.mark.parametrize("short,long_", [
    ("at(439, 5)", "at(line=439, col=5)"),
    ("at(439, 5)", "at(1, 439, 5)"),
    ("at(91, 5, file=2, fn=0, inlined_at=(1, 18, 7))", "at(line=91, col=5, file=2, fn=0, inlined_at=(1, 18, 7))"),
    ("at(18, 7).at(91, 5, file=2, fn=0)", "at(line=18, col=7).at(line=91, col=5, file=2, fn=0)"),
])
def test_at_line_col_positional_is_the_keyword_form(short, long_):
    got = transpile.python_to_ptx(_LOC_MODULE.format(short))
    assert got == transpile.python_to_ptx(_LOC_MODULE.format(long_))
    assert ".loc 1 439 5\n" in got or ".loc 2 91 5, function_name $L__info_string0, inlined_at 1 18 7\n" in got


def test_inside_keyword_puts_the_loc_inside_the_markers_as_the_prefix_does():
    alias = "cp = asm.cp.async_.ca.shared.global_\n"
    prefixed = _LOC_MODULE.format("asm.at(241, 13)").replace(".add.s32(r[1], r[2], 1)",
                                                              ".cp.async_.ca.shared.global_([r[1]], [r[2]], 4)")
    keyword = _LOC_MODULE.replace("    {}.add.s32(r[1], r[2], 1)", "    cp([r[1]], [r[2]], 4, inside=at(241, 13))")
    keyword = keyword.replace("\nptx.version", "\n" + alias + "ptx.version", 1)
    got = transpile.python_to_ptx(keyword)
    assert got == transpile.python_to_ptx(prefixed)
    assert "// begin inline asm\n\t.loc 1 241 13\n\tcp.async" in got
    outside = transpile.python_to_ptx(keyword.replace("inside=", "at="))
    assert ".loc 1 241 13\n\t// begin inline asm\n\tcp.async" in outside
    # one `at(...)`'s arguments as a tuple are that `at(...)`
    assert transpile.python_to_ptx(keyword.replace("inside=at(241, 13)", "inside=(241, 13)")) == got
    assert transpile.python_to_ptx(keyword.replace("inside=at(241, 13)", "at=(241, 13)")) == outside
    assert transpile.python_to_ptx(keyword.replace("inside=at(241, 13)", "inside=(1, 241, 13)")) == got
