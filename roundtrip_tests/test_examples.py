"""Hand-written DSL kernels in examples/: they emit PTX that ptx2py round-trips,
that the linter accepts, and that ptxas assembles for the module's target."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import PTXAS, ROOT, needs_ptxas

from ptx2py import ptxgrammar
from ptx2py.lint import lint_module
from ptx2py.transpile import ptx_to_python, python_to_ptx

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.fixture(params=EXAMPLES, ids=lambda p: p.stem)
def emitted(request):
    path = request.param
    return path, python_to_ptx(path.read_text(), str(path))


def test_the_four_kernels_are_there():
    assert {"vector_add", "warp_reduce", "tiled_matmul", "wgmma_tile"} <= {p.stem for p in EXAMPLES}


def test_example_round_trips_and_lints_clean(emitted):
    path, ptx = emitted
    module = ptxgrammar.parse(ptx, path.name)
    assert ptxgrammar.emit(module) == ptx
    assert python_to_ptx(ptx_to_python(ptx)) == ptx
    assert lint_module(module, path.name) == []


@needs_ptxas
def test_example_assembles_with_ptxas(emitted, tmp_path):
    path, ptx = emitted
    target = re.search(r"^\.target\s+(sm_\w+)", ptx, re.M).group(1)
    src = tmp_path / f"{path.stem}.ptx"
    src.write_text(ptx)
    proc = subprocess.run([PTXAS, f"-arch={target}", "-o", str(tmp_path / "out.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_wgmma_example_uses_the_tensor_core_pipeline():
    ptx = python_to_ptx((ROOT / "examples" / "wgmma_tile.py").read_text())
    order = [m.group(1) for m in re.finditer(r"\t(wgmma\.\w+)", ptx)]
    assert order == ["wgmma.fence", "wgmma.mma_async", "wgmma.commit_group", "wgmma.wait_group"]
    assert ".target sm_90a" in ptx
