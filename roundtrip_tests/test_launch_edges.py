"""The edges of the edit workflow: launch sidecars found only where they belong and validated before
any run (located in the JSON), `--inputs` checked against their parameters, outputs checked before
the work, `run-ir` on a user's own problem file, the notebook's `run(launch=...)`, and `verify
--run gpu|auto` on a machine without a GPU."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest
from conftest import CASES, ROOT, needs_ptxas

from ptx2py.cli import ptx2py_main

ELEMENTWISE = ROOT / "corpus" / "ptx" / "nvcc" / "elementwise.sm_80.ptx"
REDUCE = ROOT / "corpus" / "ptx" / "nvcc" / "reduce.sm_80.ptx"
EMULATE = CASES / "emulate"
# vector_add (a + b -> c) of elementwise.sm_80.ptx at a small launch
VECTOR_ADD = {"kernel": "vector_add", "grid": [2, 1, 1], "block": [64, 1, 1], "shared": 0, "args": [
    {"name": "a", "kind": "pointer", "dtype": "fp32", "count": 128, "init": "randn"},
    {"name": "b", "kind": "pointer", "dtype": "fp32", "count": 128, "init": "randn"},
    {"name": "c", "kind": "pointer", "dtype": "fp32", "count": 128, "init": "zeros"},
    {"name": "n", "kind": "scalar", "dtype": "i32", "value": 128}]}


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def _dumps(spec: dict) -> str:
    """A sidecar as people write them: a field a line, an argument a line."""
    rows = [f' "{k}": {json.dumps(v)}' for k, v in spec.items() if k != "args"]
    if "args" in spec:
        rows.append(' "args": [\n' + ",\n".join("  " + json.dumps(a) for a in spec["args"]) + "\n ]")
    return "{\n" + ",\n".join(rows) + "\n}\n"


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# ------------------------------------------------------------------ 1. where a sidecar is looked for
@needs_ptxas
def test_verify_never_takes_a_corpus_sidecar_for_a_users_file(tmp_path, capsys):
    user = tmp_path / ELEMENTWISE.name            # the same name as a corpus file, not the corpus file
    shutil.copy(ELEMENTWISE, user)
    assert ptx2py_main(["verify", str(user), str(user), "--run", "cpu"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "_ZN6corpus" not in err
    assert f"looked for {tmp_path / 'elementwise.sm_80.json'}" in err
    assert "ptx2py from-triton" in err and "docs/launch_sidecar.schema.json" in err and "--launch" in err


@needs_ptxas
def test_verify_takes_launch_and_inputs(tmp_path, capsys):
    user = tmp_path / "k.ptx"
    shutil.copy(ELEMENTWISE, user)
    launch = _write(tmp_path / "elsewhere.json", VECTOR_ADD)
    rng = np.random.default_rng(1)
    np.savez(tmp_path / "in.npz", a=rng.random(128, dtype=np.float32), b=rng.random(128, dtype=np.float32))
    assert ptx2py_main(["verify", str(user), str(user), "--run", "cpu", "--launch", str(launch),
                        "--inputs", str(tmp_path / "in.npz")]) == 0
    out = capsys.readouterr().out
    assert "CPU engine (match): 1 kernel(s)" in out and "vector_add" in out


@needs_ptxas
def test_an_edited_copy_of_another_name_uses_the_bases_sidecar(tmp_path, capsys):
    from ptx2py import ptx_to_python

    base = tmp_path / "mm.ptx"
    base.write_text((EMULATE / "race.fixed.ptx").read_text())
    _write(tmp_path / "mm.json", json.loads((EMULATE / "race.json").read_text())["launch"])
    edited = tmp_path / "mm_edit.py"
    edited.write_text(ptx_to_python(base.read_text(), sugar=True))
    assert ptx2py_main(["verify", str(base), str(edited), "--run", "cpu"]) == 0
    assert "CPU engine (match)" in capsys.readouterr().out


def test_verify_launch_without_run_is_a_usage_error(tmp_path, capsys):
    launch = _write(tmp_path / "launch.json", VECTOR_ADD)
    assert ptx2py_main(["verify", str(ELEMENTWISE), str(ELEMENTWISE), "--launch", str(launch)]) == 2
    assert "--launch is for --run" in capsys.readouterr().err


def test_sidecar_candidates_are_beside_the_files_or_the_corpus_own(tmp_path):
    from ptx2py.launch.sidecar import sidecar_candidates

    user = tmp_path / "elementwise.sm_80.ptx"
    assert sidecar_candidates(str(user), str(tmp_path / "e.py")) == [tmp_path / "elementwise.sm_80.json",
                                                                      tmp_path / "e.json"]
    assert sidecar_candidates(str(ELEMENTWISE))[-1] == ROOT / "corpus" / "launch" / "nvcc" / "elementwise.sm_80.json"


# ------------------------------------------------------------------ 2. sidecars validated, located
def _broken(kind: str) -> tuple[str, str, str]:
    """(sidecar text, the text of the line the error must point at, a word the message must have)."""
    spec = json.loads(json.dumps(VECTOR_ADD))
    if kind == "grid":
        del spec["grid"]
        return _dumps(spec), "{", "grid"
    if kind == "block":
        del spec["block"]
        return _dumps(spec), "{", "block"
    if kind == "args":
        del spec["args"]
        return _dumps(spec), "{", "args"
    if kind == "arg dtype":
        del spec["args"][1]["dtype"]
        return _dumps(spec), '"name": "b"', "args[1].dtype"
    if kind == "unknown dtype":
        spec["args"][2]["dtype"] = "f13"
        return _dumps(spec), '"f13"', "args[2].dtype"
    if kind == "descriptor shape":
        spec["args"][0] = {"name": "a", "kind": "tensormap", "dtype": "fp32", "strides": [1], "block_shape": [8]}
        return _dumps(spec), '"name": "a"', "args[0].shape"
    if kind == "json syntax":
        text = _dumps(spec).replace('"block":', '"block"', 1)
        return text, '"block"', "not JSON"
    raise AssertionError(kind)


BROKEN = ["grid", "block", "args", "arg dtype", "unknown dtype", "descriptor shape", "json syntax"]


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_sidecar_is_a_located_error_before_the_run(kind, tmp_path, capsys):
    text, at, word = _broken(kind)
    launch = tmp_path / "launch.json"
    launch.write_text(text)
    out = tmp_path / "out.npz"
    assert ptx2py_main(["run", str(ELEMENTWISE), "--launch", str(launch), "--kernel", "vector_add",
                        "-o", str(out)]) == 2
    err = capsys.readouterr().err
    head = err.splitlines()[0]
    m = re.match(rf"{re.escape(str(launch))}:(\d+):(\d+): error: (.*)", head)
    assert m, err
    lines = text.splitlines()
    line = int(m.group(1))
    assert at in lines[line - 1] and word in m.group(3), (err, lines[line - 1])
    assert err.splitlines()[1] == lines[line - 1].replace("\t", " ") and err.splitlines()[2].endswith("^")
    assert "Traceback" not in err and not out.exists()


def _reduce_spec(**changes) -> dict:
    side = json.loads((ROOT / "corpus" / "launch" / "nvcc" / "reduce.sm_80.json").read_text())
    spec = dict(next(k for k in side["kernels"] if k["kernel"] == "shared_tree_max"), **changes)
    spec.update(grid=[2, 1, 1], args=[dict(a, count=512) if a["name"] == "x" else
                                      dict(a, count=2) if a["name"] == "out" else dict(a, value=512)
                                      for a in spec["args"]])
    return spec


def test_a_kernel_using_dynamic_shared_memory_needs_shared(tmp_path, capsys):
    spec = _reduce_spec()
    assert spec["shared"] == 1024 and ".extern .shared .align 16 .b8 sdata[];" in REDUCE.read_text()
    good = _write(tmp_path / "good.json", spec)
    assert ptx2py_main(["run", str(REDUCE), "--launch", str(good)]) == 0
    capsys.readouterr()        # the good run's own lines (its coverage)
    del spec["shared"]
    launch = _write(tmp_path / "launch.json", spec)
    assert ptx2py_main(["run", str(REDUCE), "--launch", str(launch)]) == 2
    err = capsys.readouterr().err
    line = _line_of(launch.read_text(), '"kernel": "shared_tree_max"')
    assert err.startswith(f"{launch}:{line}:") and "shared" in err.splitlines()[0] and "sdata" in err


@needs_ptxas
def test_verify_validates_the_sidecar_before_ptxas_runs(tmp_path, capsys):
    text, at, _ = _broken("unknown dtype")
    launch = tmp_path / "launch.json"
    launch.write_text(text)
    assert ptx2py_main(["verify", str(ELEMENTWISE), str(ELEMENTWISE), "--run", "cpu", "--launch", str(launch),
                        "--ptxas", str(tmp_path / "no-ptxas")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{launch}:{_line_of(text, at)}:") and "args[2].dtype" in err


def test_the_validator_agrees_with_jsonschema():
    """An independent oracle: jsonschema's verdict on every corpus sidecar and on broken ones."""
    jsonschema = pytest.importorskip("jsonschema")
    from ptx2py.launch.sidecar import schema, violations

    check = jsonschema.Draft202012Validator(schema())
    cases = [json.loads(p.read_text()) for p in sorted((ROOT / "corpus" / "launch").rglob("*.json"))]
    cases += [json.loads(_broken(k)[0]) for k in BROKEN if k != "json syntax"]
    cases += [dict(VECTOR_ADD, grid=[0]), dict(VECTOR_ADD, block=[1, 1, 1, 1]), dict(VECTOR_ADD, shared=True),
              dict(VECTOR_ADD, extra=1), {"kernels": []}, {"kernels": [VECTOR_ADD]}, [VECTOR_ADD]]
    verdicts = [(bool(violations(c)), bool(list(check.iter_errors(c)))) for c in cases]
    assert all(ours == theirs for ours, theirs in verdicts), [i for i, v in enumerate(verdicts) if v[0] != v[1]]
    assert sum(theirs for _, theirs in verdicts) == len(BROKEN) - 1 + 6


def test_the_fields_from_triton_writes_follow_the_schema():
    from ptx2py.launch.sidecar import violations

    fields = {"param_names": ["a", "b", "c", "n"], "triton": {"version": "3.9.0"}, "source": None,
              "incomplete": ["n: scalar value (--arg n=VALUE)"]}
    assert violations(dict(VECTOR_ADD, **fields)) == []


def test_a_sidecar_from_triton_lacks_values_for_cannot_run(tmp_path, capsys):
    launch = tmp_path / "k.json"
    launch.write_text(_dumps(dict(VECTOR_ADD, incomplete=["n: scalar value (--arg n=VALUE)"])))
    assert ptx2py_main(["run", str(ELEMENTWISE), "--launch", str(launch)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{launch}:{_line_of(launch.read_text(), 'incomplete')}:") and "--arg n=VALUE" in err


@pytest.mark.slow   # a Triton compile and four CPU-engine runs: ~50 s on a shared machine
@needs_ptxas
def test_the_triton_workflow_from_triton_edit_py2ptx_verify_launch(tmp_path, capsys):
    """from-triton (sm_90a) -> edit the Python -> py2ptx -> verify --run cpu --launch, on the sidecar
    from-triton wrote, which validates; the edit's renamed copy runs on the base's sidecar."""
    pytest.importorskip("triton")
    from ptx2py.cli import py2ptx_main
    from ptx2py.launch.sidecar import load_sidecar

    py = tmp_path / "add.py"
    assert ptx2py_main(["from-triton", str(ROOT / "corpus" / "src" / "triton" / "kernels.py") + "::add_kernel",
                        "--signature", "*fp32,*fp32,*fp32,i32", "--constexprs", "BLOCK=256", "--arg", "x_ptr=512",
                        "--arg", "y_ptr=512", "--arg", "out_ptr=512:zeros", "--arg", "n_elements=512",
                        "--grid", "2,1,1", "-o", str(py)]) == 0
    ptx, side = py.with_suffix(".ptx"), py.with_suffix(".json")
    assert ".target sm_90a" in ptx.read_text() and load_sidecar(side).data["param_names"]
    out = tmp_path / "out.npz"
    assert ptx2py_main(["run", str(ptx), "--launch", str(side), "-o", str(out)]) == 0, capsys.readouterr().err
    with np.load(out) as got:
        assert np.array_equal(got["out_ptr"], got["x_ptr"] + got["y_ptr"])
    same, wrong = tmp_path / "add_edit.py", tmp_path / "add_wrong.py"
    text = py.read_text()
    assert text.count("ptx.add.f32(") == 2
    same.write_text(text.replace("ptx.add.f32(r[5], r[1], r[3])", "ptx.add.f32(r[5], r[3], r[1])"))  # commutes
    wrong.write_text(text.replace("ptx.add.f32(r[5], r[1], r[3])", "ptx.sub.f32(r[5], r[1], r[3])"))
    assert py2ptx_main([str(same), "-o", str(tmp_path / "add_edit.ptx")]) == 0
    capsys.readouterr()
    assert ptx2py_main(["verify", str(ptx), str(same), "--run", "cpu", "--launch", str(side)]) == 0
    assert "CPU engine (match)" in capsys.readouterr().out
    assert ptx2py_main(["verify", str(ptx), str(wrong), "--run", "cpu"]) == 1     # add.json found beside add.ptx
    assert "CPU engine (mismatch)" in capsys.readouterr().out


# ------------------------------------------------------------------ 3. --inputs checked
@pytest.mark.parametrize("array, says", [
    (np.zeros(128, np.float64), "the array is float64, the buffer needs float32"),
    (np.zeros(100, np.float32), "the array has 100 elements"),
    (np.zeros(128, np.int32), "the array is int32"),          # values, not bits: an integer is not a float
])
def test_inputs_that_do_not_fit_their_parameter_are_refused(array, says, tmp_path, capsys):
    launch = _write(tmp_path / "launch.json", VECTOR_ADD)
    np.savez(tmp_path / "in.npz", a=array)
    out = tmp_path / "out.npz"
    assert ptx2py_main(["run", str(ELEMENTWISE), "--launch", str(launch), "--inputs", str(tmp_path / "in.npz"),
                        "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{tmp_path / 'in.npz'}: error: input 'a' (parameter ") and says in err
    assert not out.exists()


def test_inputs_that_fit_are_used(tmp_path):
    launch = _write(tmp_path / "launch.json", VECTOR_ADD)
    rng = np.random.default_rng(7)
    a, b = rng.random(128, dtype=np.float32), rng.random(128, dtype=np.float32)
    np.savez(tmp_path / "in.npz", a=a, b=b.view(np.uint32))   # b as its raw bits
    out = tmp_path / "out.npz"
    assert ptx2py_main(["run", str(ELEMENTWISE), "--launch", str(launch), "--inputs", str(tmp_path / "in.npz"),
                        "-o", str(out)]) == 0
    with np.load(out) as got:
        assert np.array_equal(got["c"], a + b)


# ------------------------------------------------------------------ 4. run-ir on a user's problem file
def _user_problem(tmp_path: Path, bare: bool) -> Path:
    data = json.loads((ROOT / "kernelir" / "problems" / "vector_add.json").read_text())
    data["kernel"]["name"] = "my_add"
    return _write(tmp_path / "my_add.json", data["kernel"] if bare else data)


@pytest.mark.parametrize("bare", [False, True], ids=["problem-file", "bare-kernel"])
def test_run_ir_runs_a_users_problem_file_with_seeded_inputs(bare, tmp_path, capsys):
    out = tmp_path / "out.npz"
    argv = ["run-ir", str(_user_problem(tmp_path, bare)), "-o", str(out)] + (["--params", "n=300"] if bare else [])
    assert ptx2py_main(argv) == 0, capsys.readouterr().err
    with np.load(out) as got:
        assert got["x"].size == (300 if bare else got["x"].size) and np.any(got["x"] != 0)
        assert np.array_equal(got["z"], got["x"] + got["y"])


# ------------------------------------------------------------------ 5. outputs checked before the work
@pytest.mark.parametrize("command", ["run -o", "run --json", "run-ir -o", "verify --json", "verify --html",
                                     "from-triton -o"])
def test_an_output_into_a_missing_folder_is_refused_first(command, tmp_path, capsys):
    target = tmp_path / "missing" / ("out.npz" if command.endswith("-o") and "triton" not in command else "out")
    launch = _write(tmp_path / "launch.json", VECTOR_ADD)
    name, option = command.split()
    argv = {
        "run": ["run", str(ELEMENTWISE), "--launch", str(launch)],
        "run-ir": ["run-ir", str(ROOT / "kernelir" / "problems" / "vector_add.json")],
        "verify": ["verify", str(ELEMENTWISE), str(ELEMENTWISE), "--ptxas", str(tmp_path / "no-ptxas")],
        "from-triton": ["from-triton", str(ROOT / "corpus" / "src" / "triton" / "kernels.py") + "::add_kernel",
                        "--signature", "*fp32,*fp32,*fp32,i32", "--constexprs", "BLOCK=1024"],
    }[name]
    if name == "from-triton":
        target = target.with_suffix(".py")
    assert ptx2py_main(argv + [option, str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{target}: error: no such folder {tmp_path / 'missing'}") and "Traceback" not in err


def test_an_output_never_replaces_the_launch_or_the_inputs(tmp_path, capsys):
    launch = _write(tmp_path / "launch.json", VECTOR_ADD)
    before = launch.read_text()
    assert ptx2py_main(["run", str(ELEMENTWISE), "--launch", str(launch), "--json", str(launch)]) == 2
    assert "would overwrite the input" in capsys.readouterr().err and launch.read_text() == before


def test_npz_outputs_follow_the_umask(tmp_path):
    launch = _write(tmp_path / "launch.json", VECTOR_ADD)
    out = tmp_path / "out.npz"
    old = os.umask(0o022)
    try:
        assert ptx2py_main(["run", str(ELEMENTWISE), "--launch", str(launch), "-o", str(out)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


# ------------------------------------------------------------------ 8. the notebook API
def test_notebook_run_takes_a_launch_path_or_dict(tmp_path):
    import ptx2py

    launch = _write(tmp_path / "x.json", VECTOR_ADD)
    k = ptx2py.open(ELEMENTWISE)
    by_path, by_dict = k.run(launch=str(launch)), k.run(launch=VECTOR_ADD)
    assert by_path.clean and np.array_equal(by_path.outputs["c"], by_dict.outputs["c"])
    text, at, _ = _broken("unknown dtype")
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    from ptx2py.launch.sidecar import SidecarError

    with pytest.raises(SidecarError) as e:
        k.run(launch=bad)
    assert str(e.value).startswith(f"{bad}:{_line_of(text, at)}:")


def test_notebook_never_takes_a_corpus_sidecar_for_a_users_file(tmp_path):
    import ptx2py

    user = tmp_path / ELEMENTWISE.name
    shutil.copy(ELEMENTWISE, user)
    with pytest.raises(ValueError, match=re.escape(f"looked for {tmp_path / 'elementwise.sm_80.json'}")):
        ptx2py.open(user).run(kernel="vector_add")


def test_notebook_reports_of_a_python_kernel_name_its_python_lines(tmp_path):
    import ptx2py
    from ptx2py import ptx_to_python

    py = tmp_path / "b1.py"
    py.write_text(ptx_to_python((EMULATE / "race.bad.ptx").read_text(), sugar=True))
    st = next(i for i, s in enumerate(py.read_text().splitlines(), 1) if "ptx.st.shared" in s)
    launch = json.loads((EMULATE / "race.json").read_text())["launch"]
    result = ptx2py.open(py).run(launch=launch)
    race = next(r for r in result.reports if r.kind == "race")
    assert race.where.startswith(f"{py}:{st} (PTX line "), race.where


# ------------------------------------------------------------------ 9. the tests find tools and folders
def test_the_tests_find_ptxas_and_shared_material_as_the_project_does():
    which_ptxas = "shutil.which(" + '"ptxas")'
    absolute = re.compile(r"[\"']/work/")
    bad = [p.name for p in sorted(Path(__file__).parent.glob("*.py"))
           if which_ptxas in p.read_text() or absolute.search(p.read_text())]
    assert bad == []


# ------------------------------------------------------------------ 10. --run gpu / auto without a GPU
@needs_ptxas
def test_run_gpu_without_a_gpu_is_an_error_and_auto_says_it_used_the_cpu(tmp_path, capsys):
    from ptx2py.verify import gpu_run

    why = gpu_run.skip_reason()
    if why is None:
        pytest.skip("a GPU is present: --run gpu runs there")
    launch = _write(tmp_path / "launch.json", VECTOR_ADD)
    assert ptx2py_main(["verify", str(ELEMENTWISE), str(ELEMENTWISE), "--run", "gpu", "--launch", str(launch)]) == 2
    err = capsys.readouterr().err
    assert "--run gpu: " + why in err and "skipped" not in err
    assert ptx2py_main(["verify", str(ELEMENTWISE), str(ELEMENTWISE), "--run", "auto", "--launch", str(launch)]) == 0
    captured = capsys.readouterr()
    assert "--run auto: " + why + ": running both kernels on the CPU engine" in captured.err
    assert "CPU engine (match)" in captured.out
