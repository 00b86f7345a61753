"""PTX -> Python -> PTX is byte-identical; the generated Python is DSL calls in black style."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import EXTERNAL as SHARED_EXTERNAL
from conftest import PROBES as SHARED_PROBES

from ptx2py import ptxgrammar
from ptx2py.transpile import DSLError, ptx_to_python, python_to_ptx

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted((ROOT / "corpus" / "ptx").glob("*/*.ptx"))
EXTERNAL = sorted(SHARED_EXTERNAL.glob("**/*.ptx"))   # ../shared beside the repository (conftest)
PROBES = sorted((SHARED_PROBES / "accepted").glob("*.ptx"))


def _sample(files, n=30):
    by = {}
    for f in files:
        by.setdefault(f.parent.name, []).append(f)
    out = []
    while len(out) < n and any(by.values()):
        for k in sorted(by):
            if by[k] and len(out) < n:
                out.append(by[k].pop(len(by[k]) // 2))
    return out


def roundtrip(path: Path):
    text = ptxgrammar.read_ptx(path)
    source = ptx_to_python(text, filename=str(path))
    assert python_to_ptx(source, str(path) + ".py") == text
    return source


@pytest.mark.parametrize("path", _sample(CORPUS), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_sample(path):
    roundtrip(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_all(path):
    roundtrip(path)


@pytest.mark.skipif(not EXTERNAL, reason="../shared/corpus-external is absent")
@pytest.mark.parametrize("path", EXTERNAL, ids=lambda p: p.name)
def test_external(path):
    roundtrip(path)


@pytest.mark.skipif(not PROBES, reason="ptx-syntax-probes are absent")
@pytest.mark.parametrize("path", PROBES, ids=lambda p: p.name)
def test_probes(path):
    roundtrip(path)


ODD = [
    ".version 8.0\r\n.target sm_90\r\n.address_size 64\r\n",
    ".version 8.0\n.target sm_90\n.address_size 64",          # no final newline
    # (empty input and comment-only input are not PTX: test_rejected_inputs.py)
    ".version 8.0 // trailing comment\n\n\n.target sm_90   \n/* block\n comment */\n.address_size 64\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  .reg .b32 %r<4>;\n"
    "\tadd .s32 %r1 ,%r2,  %r3 ;\n\tld.global.u32 %r1, [ %rd3 + 0 ];\tmov.u32 %r2, 1;\n"
    "   // indented comment\n$L1:\n\t{\n\t\t{ ret; }\n\t}\n  }\n",
]


@pytest.mark.parametrize("text", ODD)
def test_odd_layout(text):
    assert python_to_ptx(ptx_to_python(text)) == text


def test_black_stable_on_sample():
    black = pytest.importorskip("black")
    for path in _sample(CORPUS, 8):
        src = ptx_to_python(ptxgrammar.read_ptx(path))
        assert black.format_str(src, mode=black.Mode()) == src, path


OPCODE_LIKE = re.compile(r"^\s*[a-z][a-z0-9]*(\.[A-Za-z0-9_:]+)+\s+[%\[{_a-zA-Z0-9]")


def _code_strings(src):
    """String constants of the module except comment text and trivia (fmt/lead/indent)."""
    tree = ast.parse(src)
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("comment", "text", "tail", "style"):
                skip.update(id(n) for a in node.args for n in ast.walk(a))
                skip.update(id(n) for k in node.keywords for n in ast.walk(k.value))
        if isinstance(node, ast.keyword) and node.arg in ("fmt", "lead", "indent", "close_lead", "close_indent"):
            skip.update(id(n) for n in ast.walk(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.value


def test_no_ptx_in_string_literals():
    for path in _sample(CORPUS, 12):
        src = ptx_to_python(ptxgrammar.read_ptx(path))
        for value in _code_strings(src):
            assert not re.search(r"[\w\]})]\s*;", value), (path, value)
            assert not OPCODE_LIKE.match(value), (path, value)
            assert "\n" not in value, (path, value)


BASE = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_p)
{
\t.reg .b32 %r<10>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [k_p];
\tadd.s32 %r1, %r2, 7;
\tld.global.u32 %r3, [%rd1+8];
\tret;
}
"""


def _tokens(text):
    return [t for t in re.findall(r"[%\w.]+|\S", text)]


def test_edit_changes_only_matching_tokens():
    src = ptx_to_python(BASE)
    edited = src.replace("r[2], 7)", "r[5], 9)").replace("ptx.ld.global_.u32", "ptx.ld.global_.s32")
    assert edited.count("r[5], 9)") == 1
    out = python_to_ptx(edited)
    a, b = _tokens(BASE), _tokens(out)
    assert len(a) == len(b)
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert diff == [("%r2", "%r5"), ("7", "9"), ("ld.global.u32", "ld.global.s32")]


@pytest.mark.parametrize("body, message", [
    ("ptx.add.s33(r[1], r[2], r[3])", "unknown instruction spelling"),
    ("ptx.addd.s32(r[1], r[2], r[3])", "unknown instruction spelling"),
    ('ptx.add.s32(r[1], "r2", r[3])', "not a PTX operand"),
    ("ptx.add.s32(r[1], r, r[3])", "register family"),
    ("ptx.add.s32(r[1], r[20], r[3])", "out of range"),
])
def test_dsl_errors_point_at_line(body, message):
    src = "from ptx2py.dsl import *\n\nr = reg.b32(\"%r\", 10)\n" + body + "\n"
    with pytest.raises(DSLError) as info:
        python_to_ptx(src, "k.py")
    assert str(info.value).startswith("k.py:4:") and ": error:" in str(info.value) and message in str(info.value)


def test_python_exception_is_located():
    with pytest.raises(DSLError, match=r"k.py:2:1: error: NameError"):
        python_to_ptx("from ptx2py.dsl import *\nundefined_name\n", "k.py")


def test_hand_written_dsl():
    src = '''from ptx2py.dsl import *
ptx.version("8.0")
ptx.target("sm_90")
ptx.address_size(64)
with ptx.entry("add", params=[param.u64("a")], visible=True):
    r = reg.b32("%r", 4)
    p = reg.pred("%p", 2)
    ptx.add.s32(r[1], r[2], 1, pred=~p[1])
    ptx.ret()
'''
    out = python_to_ptx(src)
    assert ptxgrammar.emit(ptxgrammar.parse(out)) == out
    assert "@!%p1 add.s32 %r1, %r2, 1;" in out


def test_style_records_first_operand_gaps_by_instruction_family():
    """nvcc pads `wmma.load` and `wmma.mma` differently: one entry per family, no spellings."""
    loads = [f"\twmma.load.{m}.sync.aligned.row.m16n16k16.global.f16 \t{{%r1, %r2}}, [%rd1], %r9;"
             for m in ("a", "b", "a")]
    mmas = [f"\twmma.mma.sync.aligned.row.{c}.m16n16k16.f32.f32 {{%f1, %f2}}, {{%r1}}, {{%r2}}, {{%f1, %f2}};"
            for c in ("col", "row")]
    text = "\n".join([".version 9.0", ".target sm_80", ".address_size 64", "", ".visible .entry k()", "{",
                      "\t.reg .b32 \t%r<10>;", "\t.reg .f32 \t%f<3>;", "\t.reg .b64 \t%rd<2>;", "",
                      *loads, *mmas, "\tret;", "", "}", ""])
    src = ptx_to_python(text)
    assert python_to_ptx(src) == text
    style = src[src.index("ptx.style("):src.index("\n)\n")]
    assert "sync.aligned" not in style
    from ptx2py.transpile.style import preset_table

    # one family's gap is the module's own entry or the nvcc preset's (nvcc's usual wmma.mma gap)
    assert ('"wmma.mma"' in style or '"wmma.load"' in style
            or ("first", "Instruction", "wmma.mma") in preset_table("nvcc"))


def test_line_info_builds_take_their_own_preset():
    """nvcc -lineinfo's `.loc`/`.file`/section layout is the "nvcc-lineinfo" preset, so such a
    module records fewer style entries than under plain "nvcc" (and keeps its bytes)."""
    from ptx2py.transpile.generator import Generator
    from ptx2py.transpile.style import Style

    text = (ROOT / "corpus" / "ptx" / "nvcc" / "stencil.sm_80.lineinfo.ptx").read_text(encoding="latin-1")
    style = Generator(ptxgrammar.parse(text)).style
    assert style.preset == "nvcc-lineinfo"
    assert len(style.overrides()) < len(Style(style.own, style.newline, "nvcc").overrides())
    src = ptx_to_python(text)
    assert 'ptx.style(\n    "nvcc-lineinfo",' in src and python_to_ptx(src) == text


@pytest.mark.parametrize("call, line", [
    # rounding modifiers the ISA tables name but no corpus file happens to use
    ("ptx.cvt.rzi.s32.f32(r[1], f[1])", "cvt.rzi.s32.f32 %r1, %f1;"),
    ("ptx.cvt.rmi.f32.f32(f[2], f[1])", "cvt.rmi.f32.f32 %f2, %f1;"),
    ("ptx.add.rp.f32(f[2], f[1], f[3])", "add.rp.f32 %f2, %f1, %f3;"),
])
def test_dsl_accepts_isa_modifiers_outside_the_corpus(call, line):
    src = ("from ptx2py.dsl import *\n\nr = reg.b32(\"%r\", 10)\nf = reg.f32(\"%f\", 10)\n"
           + call + "\n")
    assert line in python_to_ptx(src, "k.py")
