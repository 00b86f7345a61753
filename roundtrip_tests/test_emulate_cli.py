"""`ptx2py run` and `ptx2py run-ir`: exit 0 clean, 1 on a sanitizer report, 2 on bad input (a
located message, no traceback, no output file)."""

import json
from pathlib import Path

import numpy as np

from ptx2py.cli import ptx2py_main

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "roundtrip_tests" / "cases" / "emulate"


def _launch(tmp_path, name):
    p = tmp_path / "launch.json"
    p.write_text(json.dumps(json.loads((CASES / f"{name}.json").read_text())["launch"]))
    return str(p)


def test_run_clean_kernel_writes_outputs_and_json(tmp_path):
    out, rep = tmp_path / "out.npz", tmp_path / "rep.json"
    code = ptx2py_main(["run", str(CASES / "race.fixed.ptx"), "--launch", _launch(tmp_path, "race"),
                        "-o", str(out), "--json", str(rep), "--schedule", "reverse"])
    assert code == 0
    with np.load(out) as data:
        assert set(data.files) == {"out", "inp"}
        inp_first_lane = data["out"][0]
    assert inp_first_lane == 32               # thread 0 read the slot thread 32 wrote
    report = json.loads(rep.read_text())
    assert report["reports"] == [] and report["stats"]["thread_instructions"] > 0


def test_run_with_a_report_exits_1_and_prints_located_lines(tmp_path, capsys):
    rep = tmp_path / "rep.json"
    code = ptx2py_main(["run", str(CASES / "race.bad.ptx"), "--launch", _launch(tmp_path, "race"),
                        "--json", str(rep)])
    assert code == 1
    err = capsys.readouterr().err
    assert "race.bad.ptx:" in err and ": error: race: " in err
    assert "race" in {r["kind"] for r in json.loads(rep.read_text())["reports"]}


def test_no_sanitize_runs_clean(tmp_path):
    assert ptx2py_main(["run", str(CASES / "race.bad.ptx"), "--launch", _launch(tmp_path, "race"),
                        "--no-sanitize"]) == 0


def test_bad_inputs_exit_2_without_output(tmp_path, capsys):
    out = tmp_path / "out.npz"
    code = ptx2py_main(["run", str(CASES / "race.bad.ptx"), "--launch", _launch(tmp_path, "race"),
                        "--kernel", "nope", "-o", str(out)])
    assert code == 2 and not out.exists()
    assert "error:" in capsys.readouterr().err
    code = ptx2py_main(["run", str(CASES / "race.bad.ptx"), "--launch", _launch(tmp_path, "race"),
                        "--schedule", "sideways"])
    assert code == 2


def test_run_ir_runs_the_compiled_ptx(tmp_path):
    out = tmp_path / "out.npz"
    problem = ROOT / "kernelir" / "problems" / "vector_add.json"
    rep = tmp_path / "rep.json"
    code = ptx2py_main(["run-ir", str(problem), "--target", "sm_90a", "--params", "n=100",
                        "-o", str(out), "--json", str(rep)])
    assert code == 0
    from ptx2py.kernelir import make_inputs

    inputs = make_inputs("vector_add", {"n": 100})
    with np.load(out) as data:
        assert np.allclose(data["z"], inputs["x"] + inputs["y"])
    assert json.loads(rep.read_text())["stats"]["thread_instructions"] > 0


def test_not_emulated_instruction_exits_2_with_a_location(tmp_path, capsys):
    text = (CASES / "race.fixed.ptx").read_text().replace("\tbar.sync 0;\n", "\tbrkpt;\n", 1)
    ptx = tmp_path / "k.ptx"
    ptx.write_text(text)
    out = tmp_path / "out.npz"
    assert ptx2py_main(["run", str(ptx), "--launch", _launch(tmp_path, "race"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, s in enumerate(text.splitlines(), 1) if s.strip() == "brkpt;")
    assert f"k.ptx:{line}:2: error: not emulated: brkpt" in err and not out.exists()


def test_the_notebook_kernel_runs_on_the_cpu_engine_from_its_corpus_sidecar():
    import ptx2py

    k = ptx2py.open(str(ROOT / "corpus" / "ptx" / "triton" / "add_fp32_sm80.ptx"))
    result = k.run(max_ctas=2)
    assert not result.reports
    x, y, out = (result.outputs[n] for n in ("x_ptr", "y_ptr", "out_ptr"))
    done = 2 * 1024   # two CTAs of BLOCK_SIZE 1024
    assert np.array_equal(out[:done], (x[:done] + y[:done]).astype(np.float32))
    assert not out[done:].any()


def _python_of(tmp_path, name):
    """The sugar Python of a case kernel, and the Python lines of its st.shared / ld.shared."""
    from ptx2py import ptx_to_python

    py = tmp_path / f"{name}.py"
    py.write_text(ptx_to_python((CASES / f"{name}.ptx").read_text(), sugar=True))
    lines = py.read_text().splitlines()
    return py, {op: next(i + 1 for i, s in enumerate(lines) if f"ptx.{op}.shared" in s) for op in ("st", "ld")}


def test_run_of_a_dsl_module_names_its_python_lines_in_race_witnesses(tmp_path, capsys):
    py, at = _python_of(tmp_path, "race.bad")
    rep = tmp_path / "rep.json"
    assert ptx2py_main(["run", str(py), "--launch", _launch(tmp_path, "race"), "--json", str(rep)]) == 1
    race = next(r for r in json.loads(rep.read_text())["reports"] if r["kind"] == "race")
    both = {race["where"].split(" ")[0], race["other"].split(" ")[0]}
    assert both == {f"{py}:{at['st']}", f"{py}:{at['ld']}"}, race
    assert "(PTX line " in race["where"] and race["ptx_where"].startswith(f"{py} (as PTX):")
    err = capsys.readouterr().err
    assert f"{py}:{at['st']} (PTX line " in err and ": error: race: " in err


def test_run_of_a_broken_dsl_module_exits_2_located(tmp_path, capsys):
    py = tmp_path / "broken.py"
    py.write_text("this is not a kernel(\n")
    assert ptx2py_main(["run", str(py), "--launch", _launch(tmp_path, "race")]) == 2
    err = capsys.readouterr().err
    assert "broken.py" in err and "Traceback" not in err
