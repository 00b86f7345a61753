"""Whole-file differential (lint/filediff.py): ptxas judges whole files, lint must agree.
The fast test judges a few hand-made files; the slow one compiles a fresh nvcc corpus
(scripts/make_lint_corpus.py --quick) and asks for 0 lint errors on every file ptxas accepts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptx2py.lint import filediff

ROOT = Path(__file__).resolve().parent.parent
from conftest import PTXAS  # noqa: E402  (the project's tool search: ptx2py.verify.tools)

NVCC = shutil.which("nvcc")
GOOD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k()
{
\t.reg .b32 %r<3>;
\t{
\t.reg .b16 %r1;
\tmov.u16 %r1, 1;
\t}
\tmov.u32 %r1, %gridid;
\tret;
}
"""
BAD = GOOD.replace("\tmov.u16 %r1, 1;", "\tmov.u32 %r1, 1;")  # the inner %r1 is .b16: line 9


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_accepted_file_is_clean_and_rejected_file_is_named_at_its_line(tmp_path):
    root = tmp_path / "set" / "hand"
    root.mkdir(parents=True)
    (root / "good.ptx").write_text(GOOD)
    (root / "bad.ptx").write_text(BAD)
    result = filediff.run([str(tmp_path / "set")], PTXAS, None, jobs=1)
    tally = result["producers"]["set/hand"]
    assert (tally["files"], tally["accepted"], tally["rejected"]) == (2, 1, 1)
    assert tally["false_alarm_files"] == 0
    assert tally["rejected_exact"] == 1, tally["examples"]


SHORT_GENERIC = GOOD.replace("\tmov.u32 %r1, %gridid;", "\tmbarrier.init.b64 [%r1], 1;")  # line 11


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
def test_a_fatal_error_without_a_line_is_named_by_the_warning_before_it(tmp_path):
    # a generic address in a 32-bit register: ptxas stops with a fatal 32-bit-ABI error that names
    # no line, the line is in its warning; lint reports that line
    (tmp_path / "short.ptx").write_text(SHORT_GENERIC)
    verdict = filediff.ptxas_verdict(PTXAS, str(tmp_path / "short.ptx"))
    assert (verdict["verdict"], verdict["lines"]) == ("reject", [11]), verdict
    assert filediff.lint_lines(str(tmp_path / "short.ptx"))["lines"] == [11]


@pytest.mark.slow
@pytest.mark.skipif(PTXAS is None or NVCC is None, reason="nvcc/ptxas are not installed")
def test_fresh_nvcc_corpus_has_no_false_alarms(tmp_path):
    out = tmp_path / "fresh"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_lint_corpus.py"), "--out", str(out), "--quick",
                    "--manifest", str(tmp_path / "manifest.json")], check=True, capture_output=True)
    result = filediff.run([str(out / "ptx")], PTXAS, None, jobs=2)
    assert sum(t["accepted"] for t in result["producers"].values()) >= 10
    assert all(t["false_alarm_files"] == 0 for t in result["producers"].values()), result["producers"]
