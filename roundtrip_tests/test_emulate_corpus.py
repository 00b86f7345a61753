"""Corpus kernels with launch sidecars (nvcc, numba, clang, llvm, Triton, Pallas; sm_80) at a reduced
launch on the CPU engine: no sanitizer report, the same outputs under the inorder, reverse and
random schedules, and the result of an independent reference (the stored Triton-interpreter and
Pallas-interpret references of corpus/refs/, the numpy references of corpus_refs.py). A small
fast set here; scripts/emulate_corpus.py sweeps them all."""

from pathlib import Path

import pytest
from corpus_check import ROOT, cases, run_case

FAST = [
    ("corpus/ptx/nvcc/elementwise.sm_80.ptx", "vector_add"),
    ("corpus/ptx/nvcc/reduce.sm_80.ptx", "shared_tree_max"),
    ("corpus/ptx/nvcc/reduce.sm_80.ptx", "dot_double"),
    ("corpus/ptx/triton/add_fp32_sm80.ptx", "add_kernel"),
    ("corpus/ptx/triton/cumsum_fp32_b1024_sm80.ptx", "cumsum_kernel"),
    ("corpus/ptx/pallas/add_f32_sm80.ptx", "_add_kernel"),
    ("corpus/ptx/nvcc/scan_softmax.sm_80.G.ptx", "rmsnorm_half"),   # -G: call blocks reuse retval0
    ("corpus/ptx/clang/elementwise.sm_80.O0.ptx", "_ZN6corpus4map2IfNS_4AxpyIfEEEEvT0_PKT_PS4_i"),  # this in a frame
    ("corpus/ptx/clang/device_calls.sm_80.O0.ptx", "device_calls"),      # cvta.const, calls
    ("corpus/ptx/llvm/saxpy_loop.sm_80.O0.ptx", "daxpy"),
    ("corpus/ptx/numba/local_array_sort.sm_80.ptx", None),              # local memory
    ("corpus/ptx/numba/block_sum.sm_80.debug.ptx", None),               # numba debug: calls, params
]


def _spec(ptx, kernel):
    for producer, path, spec in cases({"sm_80"}, Path(ptx).name.split(".")[0]):
        if str(path.relative_to(ROOT)) == ptx and kernel in (None, spec["kernel"]):
            return path, spec
    raise AssertionError(f"no sidecar for {ptx}::{kernel}")


@pytest.mark.parametrize("ptx,kernel", FAST)
def test_corpus_kernel_matches_an_independent_reference(ptx, kernel):
    path, spec = _spec(ptx, kernel)
    result = run_case(path, spec, ctas=2, max_steps=400_000)
    assert result["status"] == "match", result
    assert result["references"], result
    assert result["thread_instructions"] > 0


def test_nvcc_histogram_matches_numpy(tmp_path):
    """`ptx2py run` with a reduced launch: histogram256 (shared atomics) against np.bincount."""
    import numpy as np

    from ptx2py.cli import ptx2py_main

    out = tmp_path / "out.npz"
    code = ptx2py_main(["run", str(ROOT / "corpus/ptx/nvcc/reduce.sm_80.ptx"), "--launch",
                        str(ROOT / "corpus/launch/nvcc/reduce.sm_80.json"), "--kernel", "histogram256",
                        "--max-ctas", "2", "--max-elements", "2048", "-o", str(out)])
    assert code == 0
    with np.load(out) as data:
        assert (data["hist"] == np.bincount(data["data"][:2048], minlength=256)).all()
