"""The fifteen IR problems, compiled for sm_80 and sm_90a, run on the CPU engine FROM THEIR PTX at
their (ragged) test sizes: the outputs match the numpy references within each problem's
tolerances, and agree with the IR interpreter; no sanitizer report. The matmul/attention
problems take tens of seconds each and are marked slow."""

import numpy as np
import pytest

from ptx2py.kernelir import PROBLEM_NAMES, REFERENCES, load_problem, make_inputs, run_kernel
from ptx2py.kernelir.run_cpu import run_ir

SLOW = {"matmul_512", "matmul_rect", "attention_d64", "attention_d128"}
CASES = [pytest.param(name, target, marks=[pytest.mark.slow] if name in SLOW else [])
         for name in PROBLEM_NAMES for target in ("sm_80", "sm_90a")]


@pytest.mark.parametrize("name,target", CASES)
def test_problem_runs_from_its_ptx(name, target):
    kernel, meta = load_problem(name)
    params = {**meta["params"], **meta["test_params"]}
    inputs = make_inputs(name, params)
    result = run_ir(kernel, params, inputs, target)
    assert result.reports == [], [r.render() for r in result.reports]
    interp = run_kernel(kernel, inputs, params)
    for key, want in REFERENCES[name](inputs, params).items():
        got = np.asarray(result.outputs[key], np.float64).reshape(np.shape(want))
        assert np.allclose(got, np.asarray(want, np.float64), rtol=meta["rtol"], atol=meta["atol"]), key
        other = np.asarray(interp[key], np.float64).reshape(np.shape(want))
        assert np.allclose(got, other, rtol=meta["rtol"], atol=meta["atol"]), f"{key}: engine vs interpreter"


def test_problem_ptx_really_ran():
    kernel, meta = load_problem("vector_add")
    params = {**meta["params"], **meta["test_params"]}
    result = run_ir(kernel, params, make_inputs("vector_add", params), "sm_80")
    assert result.stats["thread_instructions"] > 0 and ".entry" in result.stats["ptx"]
