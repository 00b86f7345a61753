"""Warp-specialised roles (sugar/warproles.py): the producer and consumer branches of an nvcc
warp-specialised kernel are marked by the direction of their `setmaxnreg`, as Python comments
(the PTX is unchanged)."""

from __future__ import annotations

from conftest import ROOT

import ptx2py
from ptx2py import transpile

SAMPLE = ROOT / "corpus" / "ptx" / "nvcc" / "wgmma_tma_sm90.sm_90a.ptx"


def test_producer_and_consumer_are_marked_before_their_setmaxnreg():
    text = SAMPLE.read_text()
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(SAMPLE))
    lines = src.split("\n")
    marks = {}
    for k, line in enumerate(lines):
        if ".setmaxnreg." in line:
            marks[line.strip().split("(")[0].split(".")[2]] = lines[k - 1].strip()
    assert marks == {
        "inc": "# consumer warps from here: setmaxnreg.inc takes registers (232 per thread)",
        "dec": "# producer warps from here: setmaxnreg.dec gives up registers (40 per thread)"}, marks
    assert text.count("setmaxnreg.inc") == 1 and text.count("setmaxnreg.dec") == 1
    assert transpile.python_to_ptx(src) == text
