"""The worked example executed: the Triton sm_90a fp16 TMA+WGMMA matmul on the CPU engine, its
wait_group 1 -> 0 edit, and the gallery of broken pipeline edits (corpus/scripts/gallery.py), each made
in the sugar Python and caught at the Python line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from gallery import BASE_PTX, EDITS, apply_edit, check_output, matmul_launch, run_case, run_python

from ptx2py.emulate.frontend import run
from ptx2py.verify.report import python_to_ptx_traced as TRACE

ROOT = Path(__file__).resolve().parent.parent
SUGAR = (ROOT / "examples" / "worked_matmul" / "matmul_sugar.py").read_text()


@pytest.mark.parametrize("schedule", ["inorder", pytest.param("reverse", marks=pytest.mark.slow),
                                      pytest.param("random:3", marks=pytest.mark.slow)])
def test_matmul_matches_numpy_with_no_report(schedule):
    res = run(BASE_PTX.read_text(), matmul_launch(256, 256, 128), filename="matmul.ptx", schedule=schedule)
    assert res.clean, res.reports
    check = check_output(res.outputs, 256, 256, 128)
    assert check["ok"], check


def test_the_wait_group_edit_gives_identical_outputs():
    spec = matmul_launch(128, 128, 256)
    base, _ = run_python(SUGAR, spec, TRACE)
    edited, _ = run_python(apply_edit(SUGAR, EDITS["wait-group-0"])[0], spec, TRACE)
    assert base.clean and edited.clean
    for name in base.outputs:
        assert np.array_equal(base.outputs[name].view(np.uint8), edited.outputs[name].view(np.uint8)), name
    assert check_output(base.outputs, 128, 128, 256)["ok"]


WGMMA = re.compile(r"\.wgmma_mma\.m64n128k16")
# plain, typed or the alias
TMA_LOAD = re.compile(r"cp(?:\.async_\.bulk\.tensor|_async_bulk_tensor)\._2d\.shared__cta|^\s*tma_load\(")
TMA_STORE = re.compile(r"cp_async_bulk_tensor\._2d\.global_")
# edit -> (report kind expected or None, the Python statement the report points at, output wrong?)
GALLERY = {
    "no-mbarrier-wait": ("async-read", WGMMA, True),
    "no-wgmma-wait": ("race", TMA_LOAD, True),
    "release-before-wait": ("race", TMA_LOAD, False),
    "tma-coord-off-by-one-tile": (None, None, True),
    "no-epilogue-fence": ("async-proxy", TMA_STORE, False),
}


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_broken_edit_is_caught(name):
    kind, at, wrong = GALLERY[name]
    row = run_case(SUGAR, EDITS[name], TRACE)
    assert row["check"]["ok"] is not wrong, row["check"]
    if kind is None:
        assert not row["reports"]
        return
    hits = [r for r in row["reports"] if f": error: {kind}: " in r]
    assert hits, row["reports"]
    m = re.match(r"matmul_edited\.py:(\d+) \(PTX line \d+\)", hits[0])
    assert m, hits[0]
    edited = apply_edit(SUGAR, EDITS[name])[0].splitlines()
    assert at.search(edited[int(m.group(1)) - 1]), edited[int(m.group(1)) - 1]
