"""`ptx2py verify BASE EDITED --run cpu`: both kernels run on the CPU engine with the same seeded
inputs; identical kernels match bit for bit, an edit that changes the arithmetic is a mismatch
(exit 1) with a per-buffer summary."""

from pathlib import Path

from conftest import needs_ptxas

from ptx2py.cli import ptx2py_main

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "corpus" / "ptx" / "nvcc" / "elementwise.sm_80.ptx"

pytestmark = needs_ptxas   # verify assembles with ptxas


def test_unedited_kernel_matches_on_the_cpu(tmp_path, capsys):
    edited = tmp_path / "edited.ptx"
    edited.write_text(BASE.read_text())
    assert ptx2py_main(["verify", str(BASE), str(edited), "--run", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "CPU engine (match)" in out and "vector_add" in out


def test_changed_arithmetic_is_a_mismatch(tmp_path, capsys):
    text = BASE.read_text()
    assert "add.f32 \t%f3, %f2, %f1;" in text
    edited = tmp_path / "edited.ptx"
    edited.write_text(text.replace("add.f32 \t%f3, %f2, %f1;", "sub.f32 \t%f3, %f2, %f1;", 1))
    assert ptx2py_main(["verify", str(BASE), str(edited), "--run", "cpu"]) == 1
    out = capsys.readouterr().out
    assert "CPU engine (mismatch)" in out and " NO " in out


def test_reports_of_an_edited_dsl_module_name_its_python_lines(tmp_path, capsys):
    import json

    from ptx2py import ptx_to_python

    cases = ROOT / "roundtrip_tests" / "cases" / "emulate"
    base = tmp_path / "race.ptx"
    base.write_text((cases / "race.fixed.ptx").read_text())
    base.with_suffix(".json").write_text(json.dumps(json.loads((cases / "race.json").read_text())["launch"]))
    edited = tmp_path / "edited.py"                     # the barrier deleted, in the Python
    edited.write_text(ptx_to_python((cases / "race.bad.ptx").read_text(), sugar=True))
    lines = edited.read_text().splitlines()
    st = next(i + 1 for i, s in enumerate(lines) if "ptx.st.shared" in s)
    assert ptx2py_main(["verify", str(base), str(edited), "--run", "cpu"]) == 1
    out = capsys.readouterr().out
    race = next(s for s in out.splitlines() if ": error: race: " in s)
    assert f"{edited}:{st} (PTX line " in race and race.count(f"{edited}:") == 2, race
