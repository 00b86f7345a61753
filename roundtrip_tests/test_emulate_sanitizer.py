"""Sanitizer checks, data-driven: for each check a kernel that triggers it (`<check>.bad.ptx`)
and a fixed one (`<check>.fixed.ptx`) that runs clean; `<check>.json` holds the launch and the
report kind the bad kernel must produce (roundtrip_tests/cases/emulate/)."""

import json
from pathlib import Path

import pytest

from ptx2py import emulate

CASES = Path(__file__).parent / "cases" / "emulate"
NAMES = sorted(p.stem for p in CASES.glob("*.json"))


def _run(name, variant, **kw):
    case = json.loads((CASES / f"{name}.json").read_text())
    path = CASES / f"{name}.{variant}.ptx"
    return emulate.run(path.read_text(), case["launch"], filename=str(path), **kw), case


@pytest.mark.parametrize("name", NAMES)
def test_bad_kernel_is_reported(name):
    result, case = _run(name, "bad")
    kinds = {r.kind for r in result.reports}
    assert case["expect"] in kinds, [r.render() for r in result.reports]
    first = next(r for r in result.reports if r.kind == case["expect"])
    assert f"{name}.bad.ptx:" in first.where and first.where.split(":")[-2].isdigit()


@pytest.mark.parametrize("name", NAMES)
def test_fixed_kernel_is_clean(name):
    result, _ = _run(name, "fixed")
    assert result.reports == [], [r.render() for r in result.reports]


@pytest.mark.parametrize("name", [n for n in NAMES if n != "deadlock"])   # a deadlock always ends the run
def test_check_can_be_turned_off(name):
    case = json.loads((CASES / f"{name}.json").read_text())
    result, _ = _run(name, "bad", disabled={case["expect"]})
    assert case["expect"] not in {r.kind for r in result.reports}


def test_race_witness_names_both_threads_and_lines():
    result, _ = _run("race", "bad")
    race = next(r for r in result.reports if r.kind == "race")
    assert "thread (" in race.details["thread"] and "thread (" in race.details["other_thread"]
    assert race.details["other"].startswith(str(CASES / "race.bad.ptx") + ":")
    assert race.details["other"] != race.where
