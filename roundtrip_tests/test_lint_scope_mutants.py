"""File-level scope mutants of corpus files against ptxas' stored verdicts
(roundtrip_tests/cases/lint/scope_mutants.jsonl.gz, lint/scope_mutants.py): an inner block re-declaring
a name with another type, a name used after its block closed, a parameter shadowed or declared again,
declarations across sibling blocks. Lint: no finding where ptxas accepts, and >= 97 % of ptxas'
rejections caught on a line ptxas names. `python scripts/lint_scope_mutants.py --regenerate` asks
ptxas again."""

from __future__ import annotations

import random

import pytest
from conftest import CASES, ROOT

from ptx2py.lint import differential as D
from ptx2py.lint import scope_mutants as S

HEADER, ALL = D.split_header(D.read_cases(CASES / "lint" / "scope_mutants.jsonl.gz"))
SAMPLE = random.Random(31).sample(ALL, 60)


def test_the_stored_set_covers_every_mutation_both_ways():
    assert len(ALL) >= 1000 and HEADER["ptxas"]
    kinds = {(c["mutation"], c["ptxas"]) for c in ALL}
    assert {m for m, _ in kinds} == set(S.MUTATIONS)
    assert sum(c["ptxas"] == "accept" for c in ALL) >= 300 and sum(c["ptxas"] == "reject" for c in ALL) >= 500


def _check(cases):
    result = S.score(ROOT, cases)
    assert result["false_positives"] == 0, result["disagreements"][:3]
    assert result["caught_share"] >= 0.97, [d for d in result["disagreements"] if d["kind"] == "missed"][:5]


def test_scope_mutants_sample():
    _check(SAMPLE)


@pytest.mark.slow
def test_scope_mutants_all():
    _check(ALL)
