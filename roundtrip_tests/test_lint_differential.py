"""The linter against ptxas' cached verdicts (roundtrip_tests/cases/lint/differential.jsonl.gz):
a fixed seeded sample of single-instruction mutants of the corpus' instruction shapes. Accepted
by ptxas -> no finding; rejected -> a finding with a rule id on the line ptxas blames, unless the
case is a listed disagreement (differential_disagreements.jsonl, each with its reason).
The full set: `python scripts/lint_differential.py`."""

from __future__ import annotations

import json
import random

import pytest
from conftest import CASES

from ptx2py.lint import differential as D

DATA = CASES / "lint" / "differential.jsonl.gz"
DISAGREEMENTS = CASES / "lint" / "differential_disagreements.jsonl"
SAMPLE = 300


def _data():
    header, cases = D.split_header(D.read_cases(DATA))
    return header, [c for c in cases if not D.UNDECIDED.search(c.get("ptxas_error", ""))]


HEADER, ALL_CASES = _data()


def _known_misses() -> dict[int, dict]:
    rows = [json.loads(line) for line in DISAGREEMENTS.read_text().splitlines() if line.startswith("{")]
    return {r["id"]: r for r in rows}


KNOWN = _known_misses()
SAMPLED = random.Random(17).sample(ALL_CASES, SAMPLE)


def test_the_cached_set_is_large_and_says_which_ptxas():
    assert len(ALL_CASES) >= 5000
    assert HEADER["ptxas"].startswith("13.")
    assert {c["ptxas"] for c in ALL_CASES} == {"accept", "reject"}


def test_every_disagreement_is_a_miss_with_a_reason():
    assert KNOWN, "the disagreements file is empty"
    for row in KNOWN.values():
        assert row["kind"] == "missed", row  # a false positive is a bug, never a listed disagreement
        assert row["reason"]


@pytest.mark.parametrize("case", SAMPLED, ids=[f"c{c['id']}-{c['ptxas']}" for c in SAMPLED])
def test_lint_agrees_with_ptxas(case):
    verdict, findings = D.lint_verdict(case)
    if case["ptxas"] == "accept":
        assert verdict == "clean", (case["instruction"], findings)
    elif case["id"] in KNOWN:
        assert verdict != "at-line", f"listed as a disagreement but now caught: {case['id']} (update the list)"
    else:
        assert verdict == "at-line", (case["instruction"], case.get("ptxas_error"), findings)
