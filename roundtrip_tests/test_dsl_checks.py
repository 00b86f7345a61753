"""The DSL checks each instruction as it runs (with check=True, as py2ptx does):
a violation of the instruction tables is reported at the user's Python line."""

from __future__ import annotations

import re

import pytest

from ptx2py import cli
from ptx2py.transpile import DSLError, python_to_ptx

HEADER = '''from ptx2py.dsl import *
ptx.version("{version}")
ptx.target("{target}")
ptx.address_size(64)
with ptx.entry("k", visible=True):
    r = reg.b32("%r", 80)
    rd = reg.b64("%rd", 4)
    p = reg.pred("%p", 2)
'''


def module(body: str, version="8.0", target="sm_90a") -> str:
    return HEADER.format(version=version, target=target) + body


WGMMA = "    ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16({acc}, rd[1], rd[2], p[1], 1, 1, 0, 0)\n"

CASES = [
    pytest.param(module(WGMMA.format(acc="tuple(r[i] for i in range(64))"), target="sm_80"), "target",
                 id="wgmma-on-sm_80"),
    pytest.param(module(WGMMA.format(acc="tuple(r[i] for i in range(32))")), "register-count",
                 id="m64n128k16-f32-accumulator-of-32"),
    pytest.param(module("    ptx.ld.global_.rn.u32(r[1], [rd[1]])\n"), "unknown-modifier",
                 id="modifier-of-another-family"),
    pytest.param(module("    ptx.add.s32(r[1], r[2])\n"), "operand-count", id="operand-count"),
    pytest.param(module(WGMMA.format(acc="tuple(r[i] for i in range(64))"), version="7.8"), "ptx-version",
                 id="wgmma-in-ptx-7.8"),
    # the same operand and constraint tables as `ptx2py lint`
    pytest.param(module("    ptx.add.u32(r[1], rd[1], r[3])\n"), "register-class", id="b64-register-in-u32-add"),
    pytest.param(module("    ptx.fma.f32(r[1], r[2], r[3], r[4])\n"), "missing-modifier", id="fma-without-rounding"),
    pytest.param(module("    ptx.add.ftz.s32(r[1], r[2], r[3])\n"), "modifier-type", id="ftz-on-s32"),
    pytest.param(module("    ptx.setmaxnreg.inc.sync.aligned.u32(300)\n"), "immediate", id="setmaxnreg-300"),
    pytest.param(module("    ptx.selp.b32(r[1], r[2], r[3], r[4])\n"), "register-class", id="selp-without-predicate"),
]


@pytest.mark.parametrize("source, rule", CASES)
def test_violation_is_reported_at_the_python_line(source, rule):
    with pytest.raises(DSLError) as info:
        python_to_ptx(source, "kernel.py", check=True)
    err = info.value
    assert err.line == 9, str(err)
    assert f"[{rule}]" in err.message
    assert re.match(r"kernel\.py:9:\d+: error: ", str(err)), str(err)
    assert str(err).splitlines()[1] == source.splitlines()[8]  # the user's line, then a caret
    assert str(err).splitlines()[2].strip() == "^"


def test_the_caret_points_at_the_modifier_at_fault():
    with pytest.raises(DSLError) as info:
        python_to_ptx(module("    ptx.add.ftz.s32(r[1], r[2], r[3])\n"), "kernel.py", check=True)
    _, line, caret = str(info.value).splitlines()
    assert line[caret.index("^"):].startswith(".ftz")


def test_valid_instructions_pass_the_checks():
    source = module(WGMMA.format(acc="tuple(r[i] for i in range(64))") + "    ptx.add.s32(r[1], r[2], 3)\n")
    assert "wgmma.mma_async" in python_to_ptx(source, "kernel.py", check=True)


def test_unchecked_mode_keeps_any_parsable_ptx(tmp_path):
    source = module("    ptx.add.s32(r[1], r[2])\n")
    assert "add.s32 %r1, %r2;" in python_to_ptx(source, "kernel.py")
    path = tmp_path / "k.py"
    path.write_text(source)
    out = tmp_path / "k.ptx"
    assert cli.py2ptx_main([str(path), "-o", str(out)]) == 2
    assert not out.exists()
    assert cli.py2ptx_main([str(path), "-o", str(out), "--no-check"]) == 0


def test_a_spelling_outside_the_tables_is_reported_at_its_line():
    with pytest.raises(DSLError) as info:
        python_to_ptx(module("    ptx.ld.global_.weird.u32(r[1], [rd[1]])\n"), "kernel.py")
    assert info.value.line == 9 and ".weird" in info.value.message
