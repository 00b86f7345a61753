"""Synchronisation coverage on every run (emulate/sync_coverage.py): at the worked example's small
launch (K = 128, its TMA+WGMMA ring of 3 mbarriers) no stage is refilled and no mbarrier phase wraps, and
`run` / `verify --run cpu` say so; at K = 512 the ring wraps and nothing is left unexercised. The
racing `wgmma.wait_group 1 -> 2` edit is named at its line at the small launch. (verify's scaling
of such a launch: test_emulate_launch_scaling.py.)"""

from __future__ import annotations

import json

import pytest
from gallery import BASE_PTX, matmul_launch

from ptx2py.cli import ptx2py_main
from ptx2py.emulate.compare_run import run_pair_cpu
from ptx2py.emulate.frontend import run
from ptx2py.launch.sidecar import check_sidecar, find_sidecar

WAIT_1, WAIT_2 = "wgmma.wait_group.sync.aligned 1;", "wgmma.wait_group.sync.aligned 2;"


def _wait_line(text):
    return 1 + text.split("\n").index(next(line for line in text.split("\n") if WAIT_1 in line))


def test_small_launch_leaves_the_ring_unwrapped_and_a_larger_one_wraps_it():
    text = BASE_PTX.read_text()
    small = run(text, matmul_launch(256, 256, 128), filename="matmul.ptx").stats["coverage"]
    assert small["stage_refills"] == 0
    assert max(small["mbarrier_phases"].values()) == 1 and min(small["mbarrier_phases"].values()) == 0
    assert any("no shared-memory stage was refilled" in g for g in small["gaps"])
    assert any("completed no phase" in g for g in small["gaps"])
    wait = small["waits"][f"matmul.ptx:{_wait_line(text)}:2"]
    assert wait == {"instruction": "wgmma.wait_group.sync.aligned", "keep": 1, "max_outstanding": 2}
    large = run(text, matmul_launch(256, 256, 512), filename="matmul.ptx").stats["coverage"]
    assert large["gaps"] == [] and large["stage_refills"] >= 1
    assert min(large["mbarrier_phases"].values()) >= 2


def test_run_names_a_wait_that_waited_for_nothing(tmp_path, capsys):
    text = BASE_PTX.read_text()
    line = _wait_line(text)
    ptx, launch = tmp_path / "edited.ptx", tmp_path / "launch.json"
    ptx.write_text(text.replace(WAIT_1, WAIT_2))
    launch.write_text(json.dumps(matmul_launch(256, 256, 128)))
    assert ptx2py_main(["run", str(ptx), "--launch", str(launch)]) == 0     # clean: the race never runs
    err = capsys.readouterr().err
    assert ("coverage: 3 mbarriers completed 0-1 phases; shared stages refilled up to 0 times; 3 group waits "
            "(1 never waited)") in err
    assert (f"note: pipeline not exercised at this launch: {ptx}:{line}:2: wgmma.wait_group.sync.aligned 2 "
            "never had more than 2 groups outstanding: it waited for nothing") in err
    assert "note: --cover grows the launch's problem size until the pipeline is exercised" in err


def test_verify_run_cpu_without_scaling_says_a_match_does_not_cover_the_pipeline(tmp_path):
    """A sidecar at K = 128 beside the base kernel, scaling off (--no-scale): the racing edit
    matches there, and verify says the match does not cover the pipeline (the corpus sidecar's own
    launch catches the race)."""
    base = tmp_path / "base.ptx"
    base.write_text(BASE_PTX.read_text())
    (tmp_path / "base.json").write_text(json.dumps(matmul_launch(256, 256, 128)))
    edited = BASE_PTX.read_text().replace(WAIT_1, WAIT_2)
    launch = check_sidecar(find_sidecar(str(base))).data
    out = run_pair_cpu(str(base), edited, launch, edited_name="edited.ptx", scale=False)
    assert out["status"] == "match"
    assert "the match does not cover the pipeline at this launch" in out["message"]
    assert "edited.ptx:" in out["message"] and "waited for nothing" in out["message"]
    assert out["kernels"][0]["coverage"]["gaps"]


@pytest.mark.slow
def test_the_corpus_sidecar_launch_catches_the_racing_wait_edit():
    edited = BASE_PTX.read_text().replace(WAIT_1, WAIT_2)
    launch = check_sidecar(find_sidecar(str(BASE_PTX))).data
    out = run_pair_cpu(str(BASE_PTX), edited, launch, edited_name="edited.ptx")
    assert out["status"] == "report" and ": error: race: " in out["message"]
