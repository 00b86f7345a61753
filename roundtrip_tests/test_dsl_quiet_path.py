"""The recorder's quiet path (a plain instruction, `.loc`, int data row or declaration where
nothing is pending) must give every statement exactly the trivia the plain path gives it.
`fmt={}` changes nothing in a statement but keeps it off the quiet path, so a module written
once with it on every call and once without must print the same PTX, in every context the
lead depends on (depth, after a comment, inside inline asm, after a label, a new style)."""

from __future__ import annotations

import re

import pytest

from ptx2py.transpile import DSLError, fastrun, python_to_ptx
from ptx2py.transpile.generator import HEADER

HEAD = 'from ptx2py.dsl import *\nptx.version("9.0")\nptx.target("sm_90")\nptx.address_size(64)\n'

BODY = '''
ptx.file(1, "k.cu")
with ptx.entry("k", params=[], visible=True):
    p = reg.pred("%p", 4)
    r = reg.b32("%r", 40)
    rd = reg.b64("%rd", 8)
    reg.b32("a", "b", "c")
    for i in range(2):
        var.global_.align(4).b8("s", dims=(3,), init=b"ab\\x00")
        var.shared.align(8).b32("t", dims=(2, None))
    for i in range(3):
        ptx.add.s32(r[i], r[i + 1], 7)
        ptx.add.s32(r[i + 2], r[i + 3], -7)
        ptx.loc(1, 10 + i, 5)
        ptx.loc(1, 10 + i, 5, "$L__info_string0", (1, 3, 2))
        ptx.setp.lt.s32(p[1], r[i], 9)
        ptx.bra(sym("$L__BB0_1"), pred=~p[1])
        ptx.bra(sym("$L__BB0_1"), pred=p[2])
        ptx.ld.global_.u32(r[5], [rd[1] + 4])
        ptx.st.global_.v2.u32([rd[2]], (r[1], r[2]))
        ptx.mov.u32(r[6], sreg.tid.x)
        ptx.comment(" between")
        ptx.add.s32(r[i], r[i + 1], 7)
        ptx.label("$L__BB0_1")
        ptx.add.s32(r[i], r[i + 1], 7)
        ptx.comment(" begin inline asm")
        ptx.add.s32(r[i], r[i + 1], 7)
        ptx.add.s32(r[i], r[i + 1], 7)
        ptx.comment(" end inline asm")
        ptx.add.s32(r[i], r[i + 1], 7)
        with ptx.block():
            ptx.add.s32(r[i], r[i + 1], 7)
            var.param.b64("param0")
            var.param.b64("param0")
            ptx.add.s32(r[i], r[i + 1], 7)
    ptx.ret()
with ptx.section(".debug_info"):
    for i in range(3):
        ptx.data.b8(1, 2, 3, 4)
        ptx.data.b32(7)
        ptx.data.b8(1, 2, 3, 4)
'''

STYLE = 'ptx.style("nvcc", {("Instruction", ".", "Register", "w", "add.s32"): "  "})\n'


def with_fmt(body: str) -> str:
    """The body with `fmt={}` added to every statement call that takes it."""
    calls = r"(ptx\.(?:add|setp|bra|ld|st|mov|loc|data)[\w.]*|reg\.b32|var\.[\w.()0-9]+)\((.*)\)$"
    out = []
    for line in body.split("\n"):
        m = re.search(calls, line)
        if m and "range(" not in line and not line.rstrip().endswith(":"):
            line = line[:m.start()] + f"{m.group(1)}({m.group(2)}, fmt={{}})"
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("style", ["", STYLE], ids=["default style", "a ptx.style table"])
@pytest.mark.parametrize("stepwise", [True, False], ids=["stepwise", "whole"])
def test_quiet_statements_print_as_the_plain_path_prints_them(style, stepwise):
    quiet = python_to_ptx(HEAD + style + BODY, "k.py", stepwise=stepwise)
    plain = python_to_ptx(HEAD + style + with_fmt(BODY), "k.py", stepwise=stepwise)
    assert with_fmt(BODY).count("fmt={}") == 26
    assert quiet == plain
    assert quiet.count("add.s32") == 27 and quiet.count(".loc") == 6 and quiet.count(".b8") == 8
    assert quiet.count(".align 4 .b8") == 2 and "{97, 98, 0}" in quiet.replace(" ", "").replace(",", ", ")


def test_each_run_checks_the_style_it_is_given():
    """Shape predictions are shared between runs of the same style, the check of its
    entries is not skipped for that: a bad entry is refused every time."""
    bad = 'ptx.style({("L", "Instruction", 1): "\\tret;"})\n'
    source = HEAD + bad + 'with ptx.entry("k", params=[], visible=True):\n    ptx.ret()\n'
    for _ in range(2):
        with pytest.raises(DSLError):
            python_to_ptx(source, "k.py")


# a generated module's first line: `python_to_ptx` plans such a module (`transpile.fastrun`)
PLANNED = HEADER + HEAD[HEAD.index("\n"):]

# Statements whose lead the quiet path assembles (after comment lines, a tail, with
# indent=), labels, data rows of names, runs of one-int rows (run as one batch by
# `transpile.fastrun`) and call argument lists.
LED = '''
with ptx.entry("k", params=[], visible=True):
    r = reg.b32("%r", 8)
    for i in range(3):
        ptx.comment(" begin inline asm")
        ptx.add.s32(r[i], r[i + 1], 7)
        ptx.comment(" end inline asm")
        ptx.loc(1, 10 + i, 5)
        ptx.label("$L__BB0_1")
        ptx.label("$L__BB0_2", indent="")
        ptx.add.s32(r[i], r[i + 1], 7, indent="  ")
        ptx.tail("  ")
        ptx.add.s32(r[i], r[i + 1], 7)
        ptx.blank()
        ptx.label("$L__BB0_3")
        ptx.call.uni(sym("f"), args(sym("param0"), r[1]))
        ptx.call.uni(sym("f"), args())
    ptx.ret()
with ptx.section(".debug_info"):
    for i in range(2):
        ptx.data.b64(sym("$L__func_begin0"))
        ptx.data.b8(1)
        ptx.data.b8(2)
        ptx.data.b8(2)
        ptx.data.b32(7)
        ptx.data.b8(3)
        ptx.data.b8(*b"name")
'''
# the same rows written out (no `for`): a run of rows is one batch of the plan
ROWS = '''
with ptx.section(".debug_info"):
    ptx.data.b8(1)
    ptx.data.b8(1)
    ptx.data.b8(2)
    ptx.data.b8(3)
    ptx.comment(" a note")
    ptx.data.b8(4)
    ptx.data.b8(5, indent="  ")
    ptx.data.b8(6)
    ptx.data.b8(-1)
    ptx.data.b8(7)
'''


def with_fmt_led(body: str) -> str:
    calls = r"(ptx\.(?:add|loc|label|call|data)[\w.]*)\((.*)\)$"
    return "\n".join(line[:m.start()] + f"{m.group(1)}({m.group(2)}, fmt={{}})"
                     if (m := re.search(calls, line)) and "range(" not in line else line
                     for line in body.split("\n"))


@pytest.mark.parametrize("body", [LED, ROWS], ids=["led statements", "data rows"])
@pytest.mark.parametrize("stepwise", [True, False], ids=["stepwise", "whole"])
def test_led_statements_print_as_the_plain_path_prints_them(body, stepwise):
    assert fastrun.plan(PLANNED + body, {}) is not None
    quiet = python_to_ptx(PLANNED + body, "k.py", stepwise=stepwise)
    plain = python_to_ptx(PLANNED + with_fmt_led(body), "k.py", stepwise=stepwise)
    assert with_fmt_led(body).count("fmt={}") == (16 if body is LED else 9)
    assert quiet == plain
    if body is ROWS:
        assert quiet.count("\t.b8") == 8 and "\t.b8 -1" in quiet and "\n  .b8 5" in quiet and "\t// a note" in quiet


def test_rows_of_another_ptx_run_as_written():
    """A run of `ptx.data.b8(v)` lines runs through whatever `ptx` names: here rows of
    `.b16` (the DSL's rows are used only when `ptx.data.b8` is the DSL's)."""
    body = ('real = ptx\nptx = type("P", (), {})()\nptx.data = type("D", (), {})()\n'
            'ptx.data.b8 = real.data.b16.__call__\n'   # (a method wrapper: not the DSL's, no `rows`)
            'with real.section(".debug_info"):\n' + "".join(f"    ptx.data.b8({v})\n" for v in (1, 2, 2, 3)))
    assert fastrun.plan(PLANNED + body, {}) is not None
    out = python_to_ptx(PLANNED + body, "k.py")
    assert out == python_to_ptx(PLANNED + body, "k.py", stepwise=False)
    assert out.count(".b16") == 4 and ".b8" not in out


@pytest.mark.parametrize("index", [True, 1.0, -1, 8, "1"])
def test_a_register_index_is_an_int_in_range(index):
    """`r[True]` and `r[1.0]` are errors even once `r[1]` was used (names are shared)."""
    from ptx2py.transpile.dsl import reg

    r = reg.b32("%r", 8)
    assert r[1].name == "%r1" and r[1:3][1].name == "%r2"
    with pytest.raises(DSLError, match="must be an int|out of range"):
        r[index]


def test_a_shape_builder_makes_the_nodes_of_the_general_walk():
    """`quiet._shape_builder` writes out, per operand shape key, what `_built_nodes` walks:
    the same nodes with the same trivia slots for every kind of keyed value."""
    from ptx2py.transpile.dsl import quiet
    from ptx2py.transpile.dsl.operands import Expr, RegFile, args, sink, sym

    r, rd = RegFile("%r", 8), RegFile("%rd", 8)
    cases = [
        (r[1], [rd[2] + 8], -3, 5),
        ((r[1], r[2], sink, 4), [rd[1]], sym("g")),
        (args(r[1], -2, [rd[3] + 16]), Expr(Expr(r[1], "+", 4), "-", r[2])),
        ([sym("s")], (r[0],), args()),
    ]
    for values in cases:
        shapes = tuple(quiet._value_key(v) for v in values)
        assert None not in shapes
        tv = tuple((f"t{i}",) for i in range(40))   # distinct trivia: a shifted slot shows
        built = quiet._shape_builder(shapes)
        assert built is not None and built is quiet._shape_builder(shapes)
        assert built(values, tv) == quiet._built_nodes(values, tv)
    many = (tuple(r[i % 8] for i in range(70)),)
    assert quiet._shape_builder(tuple(quiet._value_key(v) for v in many)) is None   # past _MAX_SLOTS
