"""benchmarks/run_all.py --quick runs every benchmark end to end on two small corpus
files and writes its JSON, Markdown table and plot with a row for each file and
problem (no timing is asserted: speed goals live in benchmarks/, not in tests)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

pytest.importorskip("pyptx", reason="the peer is the bench extra: pip install -e '.[bench]'")
pytest.importorskip("matplotlib", reason="the plot needs the bench extra: pip install -e '.[bench]'")

sys.path.insert(0, str(ROOT / "benchmarks"))
from run_all import quick_files  # noqa: E402


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--quick", "--no-triton",
                          "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return out, json.loads((out / "results.json").read_text())


def test_every_section_has_a_row_per_file(quick_run):
    _, results = quick_run
    names = [str(p.relative_to(ROOT / "corpus" / "ptx")) for p in quick_files(2)]
    for section, keys in (("parse", {"cold", "as_installed", "cold_stored", "warm"}),
                          ("loop", {"cold", "as_installed", "warm"}), ("sugar_loop", {"cold", "warm"})):
        rows = results[section]["rows"]
        assert [r["file"] for r in rows] == names
        for r in rows:
            assert set(r["ptx2py_s"]) == keys and all(t > 0 for t in r["ptx2py_s"].values())
            assert set(r["ratios"]) == keys
        assert set(results[section]["geomean"]) == keys


def test_ir_compile_and_memory_rows(quick_run):
    _, results = quick_run
    (row,) = results["ir"]["rows"]
    assert row["problem"] == "vector_add" and row["ptx2py_ms"] > 0
    assert row["triton_ptx_ms"] is None            # --no-triton
    whats = [r["what"] for r in results["rss"]["rows"]]
    assert whats == ["ptx2py parse+emit", "pyptx parse", "ptx2py PTX->Python->PTX", "pyptx ptx_to_python"]
    assert all(r["peak_mb"] > 0 for r in results["rss"]["rows"] if r["failure"] is None)
    assert results["meta"]["primed_files"] == 2
    assert results["meta"]["shipped_store_current"] is True


def test_markdown_and_plot_are_written(quick_run):
    out, results = quick_run
    md = (out / "results.md").read_text()
    for r in results["parse"]["rows"]:
        assert f"| {r['file']} |" in md
    for row in results["summary"]["table"]:
        assert f"| {row['figure']} |" in md
    assert "| vector_add |" in md and "![per-file ratios](results.png)" in md
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
