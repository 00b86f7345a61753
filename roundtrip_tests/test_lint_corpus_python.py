"""The Python producers of lint's fresh corpus (scripts/lint_corpus_python.py). The fast tests check
the manifest row and the --site folders; the slow one builds the numba-cuda and CuTe DSL kernels
from a pip --target folder named by PTX2PY_FRESH_DEPS and asks lint for 0 errors on every file
ptxas accepts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptx2py.lint import differential, filediff

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import lint_corpus_python as py  # noqa: E402
from conftest import PTXAS  # noqa: E402  (the project's tool search: ptx2py.verify.tools)

TWO_ENTRIES = """.version 9.0
.target sm_80
.address_size 64
.visible .entry a()
{
\tret;
}
.visible .entry b()
{
\tret;
}
"""


def test_manifest_row_counts_lines_kernels_and_version(tmp_path):
    ptx = tmp_path / "ptx" / "k.ptx"
    ptx.parent.mkdir()
    ptx.write_text(TWO_ENTRIES)
    row = py.ptx_row(tmp_path, ptx, producer="numba", target="sm_80")
    assert (row["ptx"], row["lines"], row["kernels"], row["version"]) == ("ptx/k.ptx", 11, 2, "9.0")
    assert row["bytes"] == len(TWO_ENTRIES) and row["ok"] and row["producer"] == "numba"


def test_site_folder_runs_its_pth_files(tmp_path):
    # numba-cuda redirects `numba.cuda` from a .pth file: a plain PYTHONPATH entry would skip it
    (tmp_path / "marker_pth_mod.py").write_text("import os\nos.environ['PTX2PY_PTH_RAN'] = '1'\n")
    (tmp_path / "marker.pth").write_text("import marker_pth_mod\n")
    os.environ.pop("PTX2PY_PTH_RAN", None)
    try:
        py.add_sites([str(tmp_path)])
        assert os.environ.get("PTX2PY_PTH_RAN") == "1"
        assert str(tmp_path) in sys.path
    finally:
        sys.path.remove(str(tmp_path))
        os.environ.pop("PTX2PY_PTH_RAN", None)


DEPS = [d for d in os.environ.get("PTX2PY_FRESH_DEPS", "").split(os.pathsep) if d]  # pip --target folders


@pytest.mark.slow
@pytest.mark.skipif(PTXAS is None or not any((Path(d) / "numba_cuda").is_dir() for d in DEPS),
                    reason="ptxas, or numba-cuda in the folder PTX2PY_FRESH_DEPS names, is not installed")
def test_fresh_numba_and_cute_corpus_has_no_false_alarms(tmp_path):
    out = tmp_path / "fresh"
    sites = [a for d in DEPS for a in ("--site", d)]
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_lint_corpus.py"), "--out", str(out), "--no-nvcc",
                    "--numba", "--cute", *sites, "--manifest", str(tmp_path / "manifest.json")],
                   check=True, capture_output=True)
    # the newest ptxas, as scripts/lint_file_differential.py: numba-cuda writes the PTX version of the
    # libnvvm it finds (13.5's from pip: .version 9.5), which an older ptxas cannot judge
    result = filediff.run([str(out / "ptx")], differential.default_ptxas(), None, jobs=2)
    assert sum(t["accepted"] for t in result["producers"].values()) >= 40
    assert all(t["false_alarm_files"] == 0 for t in result["producers"].values()), result["producers"]
