"""Special registers as sources: lint accepts the types ptxas accepts (`mov.u32 %r, %gridid` although
the ISA calls %gridid .u64), per PTX version, from the table scripts/probe_special_registers.py
asked ptxas for (ptxgrammar/isa/special_register_widths.json)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptx2py.lint import lint_text
from ptx2py.lint.special_widths import accepted_types

ROOT = Path(__file__).resolve().parent.parent
from conftest import PTXAS  # noqa: E402  (the project's tool search: ptx2py.verify.tools)

# (PTX version, target, instruction, does ptxas accept it) -- ptxas 13.x verdicts
CASES = [
    ("8.0", "sm_90", "mov.u32 %r1, %gridid;", True),
    ("8.0", "sm_90", "mov.u64 %rd1, %gridid;", True),
    ("8.0", "sm_90", "mov.u16 %h1, %tid.x;", True),
    ("8.0", "sm_90", "mov.u32 %r1, %nctaid.y;", True),
    ("7.0", "sm_80", "mov.u32 %r1, %laneid;", True),
    ("8.0", "sm_90", "cvt.u64.u32 %rd1, %tid.x;", True),
    ("8.0", "sm_90", "cvt.u32.u64 %r1, %gridid;", True),
    ("8.0", "sm_90", "mov.u32 %r1, %cluster_ctarank;", True),
    ("8.0", "sm_90", "mov.u64 %rd1, %globaltimer;", True),
    ("8.0", "sm_90", "mov.u32 %r1, %clock64;", False),
    ("8.0", "sm_90", "mov.u64 %rd1, %tid.x;", False),
    ("8.0", "sm_90", "mov.u32 %r1, %globaltimer;", False),
    ("8.0", "sm_90", "cvt.rn.f32.u32 %f1, %tid.x;", False),
    ("8.0", "sm_90", "add.u32 %r1, %tid.x, 1;", False),
    ("8.0", "sm_90", "mov.f32 %f1, %laneid;", False),
]
MODULE = (".version {v}\n.target {t}\n.address_size 64\n.visible .entry k()\n{{\n"
          ".reg .b16 %h<3>; .reg .b32 %r<3>; .reg .b64 %rd<3>; .reg .f32 %f<3>;\n{i}\nret;\n}}\n")
LINE = 7


@pytest.mark.parametrize("version, target, instruction, ok", CASES, ids=[c[2] for c in CASES])
def test_special_register_source(version, target, instruction, ok):
    found = [v for v in lint_text(MODULE.format(v=version, t=target, i=instruction), "s.ptx")
             if v.severity == "error"]
    assert [v.line for v in found] == ([] if ok else [LINE]), [str(v) for v in found]


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
@pytest.mark.parametrize("version, target, instruction, ok", CASES, ids=[c[2] for c in CASES])
def test_special_register_case_is_ptxas_verdict(version, target, instruction, ok, tmp_path):
    path = tmp_path / "s.ptx"
    path.write_text(MODULE.format(v=version, t=target, i=instruction))
    r = subprocess.run([PTXAS, "-arch", target, str(path), "-o", str(tmp_path / "s.o")], capture_output=True,
                       text=True)
    assert (r.returncode == 0) == ok, r.stderr
    assert ok or re.search(rf"line {LINE};", r.stderr)


def test_table_lookup_by_version():
    assert "u32" in accepted_types("%gridid", "mov", (8, 0))
    assert accepted_types("%clusterid.x", "mov", (7, 0)) is None  # not there before PTX 7.8: not probed
    assert accepted_types("%clusterid.x", "mov", (8, 0)) == {"b32", "u32", "s32"}
    assert accepted_types("%tid.x", "add", (8, 0)) == frozenset()
    assert accepted_types("%tid.x", "setp", (8, 0)) is None


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_recorded_table_is_what_ptxas_says():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "probe_special_registers.py"), "--check",
                        "--ptxas", PTXAS], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
