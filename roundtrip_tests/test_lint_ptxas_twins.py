"""Instruction-table rules checked on pairs (roundtrip_tests/cases/lint/ptxas_twins.txt): lint flags
the rejected instruction with its rule on its line and nothing on the accepted twin; ptxas, the
oracle, rejects the one on that line and accepts the other."""

from __future__ import annotations

import subprocess

import pytest
from conftest import CASES, PTXAS  # PTXAS: the project's tool search (ptx2py.verify.tools)
from test_lint import INSTRUCTION_LINE, MODULE

from ptx2py.lint import lint_text

TWINS = CASES / "lint" / "ptxas_twins.txt"


def twin_cases():
    out = []
    for n, line in enumerate(TWINS.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        head, bad, good, rule = (x.strip() for x in line.split("|"))
        target, version = head.split()
        out.append(pytest.param(target, version, bad, good, rule, id=f"L{n}-{rule}"))
    return out


CASE_LIST = twin_cases()


def _module(target, version, instruction):
    return MODULE.format(version=version, target=target, instruction=instruction)


def test_every_rule_has_cases():
    assert len(CASE_LIST) >= 10
    assert {p.values[4] for p in CASE_LIST} >= {"ptx-version", "operand-count", "operand-kind", "register-class",
                                                 "register-count", "unknown-modifier"}


@pytest.mark.parametrize("target, version, bad, good, rule", CASE_LIST)
def test_lint_flags_the_rejected_one_only(target, version, bad, good, rule):
    found = lint_text(_module(target, version, bad), "bad.ptx")
    assert [(v.line, v.rule) for v in found] == [(INSTRUCTION_LINE, rule)], [str(v) for v in found]
    assert lint_text(_module(target, version, good), "good.ptx") == []


def _ptxas_errors(tmp_path, target, text) -> list[str]:
    path = tmp_path / "k.ptx"
    path.write_text(text)
    done = subprocess.run([PTXAS, f"--gpu-name={target}", str(path), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    return [line for line in done.stderr.splitlines() if "error" in line and "fatal" not in line]


@pytest.mark.skipif(PTXAS is None, reason="no ptxas found")
@pytest.mark.parametrize("target, version, bad, good, rule", CASE_LIST)
def test_ptxas_rejects_the_one_and_accepts_the_twin(tmp_path, target, version, bad, good, rule):
    errors = _ptxas_errors(tmp_path, target, _module(target, version, bad))
    assert errors and all(f"line {INSTRUCTION_LINE};" in e for e in errors), errors
    assert _ptxas_errors(tmp_path, target, _module(target, version, good)) == []
