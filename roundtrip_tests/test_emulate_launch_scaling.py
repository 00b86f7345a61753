"""Coverage-driven launch scaling (emulate/launch_scaling.py): from the worked example's small
sidecar (M = N = 256, K = 128: no stage of its ring is refilled), `verify --run cpu` grows K until
the pipeline is exercised, so the racing `wgmma.wait_group 1 -> 2` edit is caught and the legitimate
`1 -> 0` edit still matches; `--no-scale`, given inputs and a spent budget keep the given launch
and say so; `run --cover` opts in."""

from __future__ import annotations

import argparse
import json
import re

import pytest
from gallery import BASE_PTX, matmul_launch

from ptx2py.cli import ptx2py_main
from ptx2py.emulate.compare_run import run_pair_cpu, verify_on_cpu
from ptx2py.emulate.frontend import seeded_inputs
from ptx2py.emulate.launch_scaling import grown, size_classes
from ptx2py.launch.sidecar import check_sidecar, find_sidecar

WAIT_1, WAIT_2, WAIT_0 = ("wgmma.wait_group.sync.aligned 1;", "wgmma.wait_group.sync.aligned 2;",
                          "wgmma.wait_group.sync.aligned 0;")
SCALED = re.compile(r"coverage: launch scaled K 128 -> (\d+) \((\d+) steps?, ([\d.]+[kM]?) thread-instructions, "
                    r"budget ([\d.]+[kM]?)\): every ring of stages wrapped twice and no gap remains")


@pytest.fixture
def small_sidecar(tmp_path):
    """The base kernel with a K = 128 sidecar beside it (found as verify finds it)."""
    base = tmp_path / "base.ptx"
    base.write_text(BASE_PTX.read_text())
    (tmp_path / "base.json").write_text(json.dumps(matmul_launch(256, 256, 128)))
    return base, check_sidecar(find_sidecar(str(base))).data


def test_size_classes_tie_k_to_the_descriptors_inner_dimension_and_grow_it_as_the_launch_would():
    spec = matmul_launch(256, 256, 128)
    classes = {c.label: c for c in size_classes(spec)}
    assert set(classes) == {"K", "M=N"}
    assert sorted(classes["K"].dims) == [("a_desc", 1), ("b_desc", 1)]
    # the gallery builds the K = 384 launch from the kernel's own layout: the same tensors
    want, got = matmul_launch(256, 256, 384), grown(spec, classes["K"], 384)
    assert got["args"] == want["args"] and got["grid"] == spec["grid"]


def test_a_scalar_a_reduced_launch_lowered_is_tied_by_its_sidecar_value():
    """reduced_launch lowers K and keeps the buffers: K still grows, the buffers only past them."""
    from ptx2py.emulate.frontend import reduced_launch

    side = matmul_launch(512, 256, 2048)
    small = reduced_launch(side, 1, scalars={"K": 128})
    assert "K" not in {c.label for c in size_classes(small)}            # 128 is no dimension
    k = next(c for c in size_classes(small, origin=side) if c.label == "K")
    assert k.tie == 2048 and sorted(k.dims) == [("a_desc", 1), ("b_desc", 1)]
    assert grown(small, k, 256)["args"] == [dict(a, value=256) if a["name"] == "K" else a for a in small["args"]]
    assert grown(small, k, 4096)["args"] == matmul_launch(512, 256, 4096)["args"]


def test_a_buffer_count_grows_with_the_power_of_the_scalar_it_is_made_of():
    spec = {"args": [{"name": "A", "kind": "pointer", "dtype": "f16", "count": 256 * 128},
                     {"name": "C", "kind": "pointer", "dtype": "f32", "count": 256 * 256},
                     {"name": "K", "kind": "scalar", "dtype": "i32", "value": 256},
                     {"name": "alpha", "kind": "scalar", "dtype": "f32", "value": 2.0}], "grid": [1, 1, 1]}
    (cls,) = size_classes(spec)
    assert cls.scalars == ["K"] and cls.counts == {"A": 1, "C": 2}
    out = {a["name"]: a for a in grown(spec, cls, 768)["args"]}
    assert out["A"]["count"] == 768 * 128 and out["C"]["count"] == 768 * 768 and out["K"]["value"] == 768


def test_verify_scales_the_small_sidecar_and_catches_the_racing_wait(small_sidecar):
    base, launch = small_sidecar
    out = run_pair_cpu(str(base), BASE_PTX.read_text().replace(WAIT_1, WAIT_2), launch, edited_name="edited.ptx")
    assert out["status"] == "report" and re.search(r"edited\.ptx:\d+:\d+: error: race: ", out["message"])
    m = SCALED.search(out["message"])
    assert m and int(m[1]) > 128 and int(m[1]) % 128 == 0
    assert out["kernels"][0]["scaling"]["to"] == int(m[1])


def test_the_legitimate_wait_edit_still_matches_at_the_scaled_launch(small_sidecar):
    base, launch = small_sidecar
    out = run_pair_cpu(str(base), BASE_PTX.read_text().replace(WAIT_1, WAIT_0), launch, edited_name="edited.ptx")
    assert out["status"] == "match", out["message"]
    assert SCALED.search(out["message"]) and "does not cover" not in out["message"]
    cov = out["kernels"][0]["coverage"]              # measured on the edited kernel at the launch that ran
    assert cov["gaps"] == [] and cov["stage_refills"] >= 2 and min(cov["mbarrier_phases"].values()) >= 2


def _verify_args(base, *flags):
    parser = argparse.ArgumentParser()
    from ptx2py.verify.cli import add_parser

    add_parser(parser.add_subparsers())
    return parser.parse_args(["verify", str(base), "edited.ptx", "--run", "cpu", *flags])


def test_no_scale_keeps_the_given_launch_and_its_note(small_sidecar, capsys):
    base, launch = small_sidecar
    args = _verify_args(base, "--no-scale")
    report: dict = {}
    assert verify_on_cpu(args, report, BASE_PTX.read_text().replace(WAIT_1, WAIT_2), 0, launch, {}) == 0
    out = capsys.readouterr().out
    assert "coverage: launch not scaled: scaling is off (--no-scale)" in out
    assert "the match does not cover the pipeline at this launch" in out
    assert report["run"]["kernels"][0]["coverage"]["stage_refills"] == 0


def test_given_inputs_fix_the_shapes_so_the_launch_is_not_scaled(small_sidecar):
    base, launch = small_sidecar
    inputs = seeded_inputs(BASE_PTX.read_text(), launch)
    out = run_pair_cpu(str(base), BASE_PTX.read_text().replace(WAIT_1, WAIT_2), launch, inputs=inputs,
                       edited_name="edited.ptx")
    assert out["status"] == "match"
    assert "coverage: launch not scaled: the inputs given fix the buffers' shapes" in out["message"]
    assert "the match does not cover the pipeline at this launch" in out["message"]


def test_a_spent_budget_is_a_note_not_a_silent_pass(small_sidecar, capsys):
    base, launch = small_sidecar
    args = _verify_args(base, "--scale-budget", "700_000")     # less than one run at twice K
    assert verify_on_cpu(args, {}, BASE_PTX.read_text().replace(WAIT_1, WAIT_2), 0, launch, {}) == 0
    out = capsys.readouterr().out
    assert ("coverage: launch not scaled (0 steps, 0 thread-instructions, budget 700k): the budget was "
            "reached before the pipeline was exercised") in out
    assert "the match does not cover the pipeline at this launch" in out


def test_run_cover_runs_the_scaled_launch_and_finds_the_race(tmp_path, capsys):
    ptx, launch = tmp_path / "edited.ptx", tmp_path / "launch.json"
    ptx.write_text(BASE_PTX.read_text().replace(WAIT_1, WAIT_2))
    launch.write_text(json.dumps(matmul_launch(256, 256, 128)))
    assert ptx2py_main(["run", str(ptx), "--launch", str(launch), "--cover"]) == 1
    err = capsys.readouterr().err
    assert re.search(r"coverage: launch scaled K 128 -> 256 \(1 step, .*\): the run at this launch gets a "
                     r"report \(below\)", err)
    assert "coverage: the outputs and reports are the scaled launch's: K = 256" in err
    assert re.search(r"edited\.ptx:\d+:\d+: error: race: ", err)


def test_run_cover_with_inputs_keeps_the_launch(tmp_path, capsys):
    import numpy as np

    ptx, launch, inputs = tmp_path / "edited.ptx", tmp_path / "launch.json", tmp_path / "in.npz"
    ptx.write_text(BASE_PTX.read_text().replace(WAIT_1, WAIT_2))
    spec = matmul_launch(256, 256, 128)
    launch.write_text(json.dumps(spec))
    np.savez(inputs, **{k: v for k, v in seeded_inputs(BASE_PTX.read_text(), spec).items() if k == "a_desc"})
    assert ptx2py_main(["run", str(ptx), "--launch", str(launch), "--inputs", str(inputs), "--cover"]) == 0
    assert "coverage: launch not scaled: --inputs fixes the buffers' shapes" in capsys.readouterr().err
