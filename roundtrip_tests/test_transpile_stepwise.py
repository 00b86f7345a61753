"""python_to_ptx runs generated-style modules statement by statement from compiled
templates (transpile.fastrun); each case here must give exactly what running the module
whole gives -- the same PTX, or the same located error -- and modules outside the
subset must be refused before anything runs."""

from __future__ import annotations

import pytest

from ptx2py.transpile import DSLError, _run, _run_stepwise, fastrun, python_to_ptx
from ptx2py.transpile.dsl import recorder
from ptx2py.transpile.generator import HEADER

PRELUDE = HEADER + '''
ptx.version("8.0")
ptx.target("sm_90a")
ptx.address_size(64)
'''

BODY = '''with ptx.entry("k", visible=True):
    r = reg.b32("%r", 80)
    rd = reg.b64("%rd", 4)
    p = reg.pred("%p", 2)
'''

ACCEPTED = {
    "plain instructions": BODY + "    ptx.add.s32(r[1], r[2], 4)\n    ptx.mov.u32(r[3], sreg.tid.x)\n    ptx.ret()\n",
    "strings, bytes, escapes and kwargs": BODY + (
        '    ptx.bra(sym("$L__BB0_1"), pred=~p[1])\n    ptx.label("$L__BB0_1", indent="\\t")\n'
        '    ptx.comment(" it\'s # not a comment")  # a Python comment\n    ptx.ret(fmt={1: "  "})\n'
        ),
    "a call over several lines": BODY + '    ptx.add.s32(\n        r[1],\n        r[2],  # (\n        -5,\n    )\n',
    "a for loop binds its target for the body":
        BODY + "    for i in range(3):\n        ptx.add.s32(r[i], r[i + 1], i)\n",
    "a nested for and a comprehension over a literal": BODY + (
        "    for i, x in enumerate((r[5], r[6])):\n        for j in [k + 10 for k in range(2)]:\n"
        "            ptx.add.s32(x, r[j], i)\n"),
    "an if without else": BODY + "    if 1 > 2:\n        ptx.ret()\n    ptx.exit()\n",
    "names rebound at module level": BODY + "    a = b = r\n    a, c = r, rd\n    ptx.mov.b64(c[1], c[2])\n"
                                            "    ptx.add.s32(b[1], a[2], 0)\n",
    "a block inside the function": BODY + "    with ptx.block():\n        ptx.ret()\n    ptx.exit()\n",
    "prefixed strings, one per line and over several lines": BODY + (
        '    ptx.comment(r" raw \\d", indent="\\t")\n    ptx.comment(u" u")\n'
        '    ptx.comment(\n        R" \\N",  # (it\'s "odd\n    )\n'
        '    with ptx.section(".debug_str"):\n        ptx.data.b8(*b"ab\\x00")\n        ptx.data.b8(*Rb"\\x")\n'),
    "quotes, digits and bad escapes in comments": BODY + (
        '    ptx.add.s32(r[1], r[2], 4)  # it\'s 5 "x\\N" 6\n'
        '    # 7 \'\\N\' "8"\n    ptx.add.s32(r[3], r[4], 5)\n'),
    "a statement with 2000 literals": 'var.global_.b8("data", 2000, init=[' + ", ".join(["7"] * 2000) + "])\n" + BODY,
}

REFUSED = {
    "a tab in the indentation": BODY + "\tptx.ret()\n",
    "a backslash continuation": BODY + "    ptx.add.s32(r[1], \\\n r[2], 4)\n",
    "a string over several lines": BODY + '    ptx.comment("""a\nb""")\n',
    "a def": BODY + "def f():\n    pass\n",
    "if with else": BODY + "    if 1:\n        ptx.ret()\n    else:\n        ptx.exit()\n",
    "locals()": BODY + "    locals()\n",
    "an f-string": BODY + '    ptx.comment(f"{1}")\n',
    "a name of the runner's": BODY + "    __ptx_p0 = 1\n",
    "an empty block": BODY + "    with ptx.block():\n    ptx.ret()\n",
    "an unexpected indent": BODY + "    ptx.ret()\n        ptx.exit()\n",
    "another header": "from ptx2py.dsl import *\n" + BODY,
}

FAILING = {  # accepted by the plan; the error is located as the whole run locates it
    "a DSL error": (BODY + '    ptx.add.s32(r[1], r[2], "x")\n', 5),
    "an out-of-range register": (BODY + "    ptx.add.s32(r[1], r[2], r[99])\n", 5),
    "a Python error in a loop body": (BODY + "    for i in range(2):\n        ptx.add.s32(r[i], undefined, 1)\n", 6),
    "a block left open": (BODY + "    ptx.block_open()\n", 5),
}


def whole(source: str, check: bool = False) -> str:
    """The reference: the module compiled and run in one piece."""
    recorder.begin(check=check)
    try:
        return _run(source, "k.py")
    finally:
        recorder.end()


def stepwise(source: str) -> str | None:
    """The stepwise run alone (None: it refused or raised)."""
    recorder.begin()
    try:
        return _run_stepwise(source, "k.py")
    finally:
        recorder.end()


def outcome(fn, *args):
    try:
        return fn(*args)
    except DSLError as e:
        return ("error", str(e))


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_modules_give_what_the_whole_run_gives(name):
    source = PRELUDE + ACCEPTED[name]
    out = stepwise(source)
    assert out is not None, "the stepwise run refused or raised"
    assert out == whole(source) == python_to_ptx(source, "k.py")
    assert ".entry k" in out


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_modules_outside_the_subset_are_refused_before_running(name):
    source = PRELUDE + REFUSED[name] if not REFUSED[name].startswith("from") else REFUSED[name]
    assert fastrun.plan(source, {}) is None
    assert outcome(python_to_ptx, source, "k.py") == outcome(whole, source)


@pytest.mark.parametrize("name", sorted(FAILING))
def test_errors_are_located_as_in_the_whole_run(name):
    body, line = FAILING[name]
    source = PRELUDE + body
    assert fastrun.plan(source, {}) is not None
    assert stepwise(source) is None   # it raised: the whole run locates the error
    with pytest.raises(DSLError) as err:
        python_to_ptx(source, "k.py")
    assert str(err.value) == outcome(whole, source)[1]
    assert err.value.line == line + PRELUDE.count("\n")


def test_checked_mode_reports_at_the_line_stepwise_too():
    source = PRELUDE + BODY + "    ptx.mov.u32(r[1], r[2])\n    ptx.wgmma.fence.sync.aligned(r[1])\n"
    assert fastrun.plan(source, {}) is not None
    assert outcome(python_to_ptx, source, "k.py") == outcome(whole, source)
    with pytest.raises(DSLError) as err:
        python_to_ptx(source, "k.py", check=True)
    assert err.value.line == source.count("\n")
    assert str(err.value) == outcome(whole, source, True)[1]
