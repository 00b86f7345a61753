"""The mutation test's observability classifier (scripts/sync_mutations.py, emulate/sync_observer.py)
on small kernels, data-driven (roundtrip_tests/cases/emulate_mutants/): each case lists, for every
synchronisation site in order, the mutation and whether it can show at the launch, derived by hand
from the kernel; an observable mutant is caught (a report or other outputs), an unobservable one
changes nothing."""

import json
from pathlib import Path

import numpy as np
import pytest
from sync_mutations import SCHEDULES, mutate, observe, outcome, sync_sites

from ptx2py import ptxgrammar

CASES = Path(__file__).parent / "cases" / "emulate_mutants"
NAMES = sorted(p.stem for p in CASES.glob("*.json"))


def _load(name):
    case = json.loads((CASES / f"{name}.json").read_text())
    path = CASES / case["ptx"]
    return case, ptxgrammar.parse(path.read_text(), filename=str(path)), str(path)


@pytest.mark.parametrize("name", NAMES)
def test_classification_matches_the_hand_derived_one(name):
    case, module, filename = _load(name)
    seen = observe(module, case["launch"], None, filename)
    assert all(not r.reports for _, r in seen.runs)
    sites = sync_sites(module, case["launch"]["kernel"])
    got = [[kind, seen.classify(module, path, kind)] for path, kind in sites]
    assert got == case["expect"]


@pytest.mark.parametrize("name", NAMES)
def test_observable_mutants_are_caught_and_unobservable_ones_change_nothing(name):
    case, module, filename = _load(name)
    seen = observe(module, case["launch"], None, filename)
    for (path, kind), (_, expected) in zip(sync_sites(module, case["launch"]["kernel"]), case["expect"]):
        caught = False
        for sched, base in seen.runs:
            out, reports = outcome(mutate(module, path, kind), case["launch"], None, filename, sched)
            caught |= bool(reports) or any(not np.array_equal(out[k], base.outputs[k]) for k in out)
        assert caught == (expected == "observable"), (kind, path, reports)


def test_every_schedule_is_observed():
    case, module, filename = _load("barriers")
    assert [s for s, _ in observe(module, case["launch"], None, filename).runs] == list(SCHEDULES)
