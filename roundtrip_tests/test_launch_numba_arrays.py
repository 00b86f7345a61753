"""A numba-cuda array argument in a launch sidecar (`kind: array`) expands to the parameters of
numba's array data model, in order: meminfo, parent (null), nitems, itemsize, data, shape[ndim],
strides[ndim] in bytes (C order); launch.plan packs them against the PTX's 8-byte params."""

import json
from pathlib import Path

import pytest

from ptx2py.launch.plan import entry_info, kernel_specs, plan_arguments

ROOT = Path(__file__).resolve().parent.parent

CASES = [   # sidecar, argument, its parameters' (role, value) with the data pointer as "buffer"
    ("numba/saxpy_f32.sm_80", "x", [0, 0, 4096, 4, "buffer", 4096, 4]),
    ("numba/vec_add_2d.sm_80", "c", [0, 0, 4096, 4, "buffer", 64, 64, 256, 4]),
    ("numba/local_array_sort.sm_80", "out", [0, 0, 4096, 4, "buffer", 512, 8, 32, 4]),
    ("numba/stencil_1d.sm_80", "a", [0, 0, 4096, 8, "buffer", 4096, 8]),
]


@pytest.mark.parametrize("sidecar,arg,want", CASES)
def test_numba_array_parameters(sidecar, arg, want):
    side = json.loads((ROOT / "corpus" / "launch" / f"{sidecar}.json").read_text())
    spec = kernel_specs(side)[0]
    text = (ROOT / "corpus" / side["ptx"]).read_text()
    plans = [p for p in plan_arguments(entry_info(text, spec["kernel"]), spec) if p.arg == arg]
    assert [("buffer" if p.role == "buffer" else p.value) for p in plans] == want
    assert all(p.size == 8 for p in plans)
