"""How scripts/gpu_suite.py (d) compares the CPU engine's outputs with the GPU's
(verify/engine_gpu.py): bitwise unless a kernel's float results are `.approx` or come from float
atomics (a stated tolerance) or an integer buffer's value depends on the order of its atomics
(checked by the numpy reference). The comparison itself, on a row whose 'GPU' outputs are
perturbed on purpose; without a GPU the suite exits 77 and compares nothing."""

import numpy as np
import pytest

from ptx2py.verify import engine_gpu

PLAIN = "add.f32 %f1, %f2, %f3;"
APPROX = "ex2.approx.ftz.f32 %f1, %f2;"
ATOMIC = "atom.global.add.f32 %f1, [%rd1], %f2;"
INT_RED = "red.global.add.u32 [%rd1], %r2;"

CASES = [
    (PLAIN, "fp32", "y", frozenset(), "bitwise"),
    (PLAIN, "i32", "y", frozenset(), "bitwise"),
    (APPROX, "fp32", "y", frozenset(), "tolerance"),
    (APPROX, "u32", "y", frozenset(), "bitwise"),
    (ATOMIC, "fp32", "out", frozenset(), "tolerance"),
    (INT_RED, "u32", "hist", frozenset(), "bitwise"),
    (PLAIN, "i32", "ints", frozenset({"ints"}), "reference"),
    (PLAIN, "fp64", "sum", frozenset({"sum"}), "tolerance"),
]


@pytest.mark.parametrize("text,dtype,name,order_dependent,want", CASES)
def test_policy(text, dtype, name, order_dependent, want):
    assert engine_gpu.policy(text, dtype, name, order_dependent) == want


VADD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 c)
{
	.reg .b32 %r<4>;
	.reg .f32 %f<4>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [a];
	ld.param.u64 %rd2, [c];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	add.f32 %f2, %f1, %f1;
	st.global.f32 [%rd5], %f2;
	ret;
}
"""
SPEC = {"kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "seed": 1,
        "args": [{"name": "a", "kind": "pointer", "dtype": "fp32", "count": 32, "init": "randn"},
                 {"name": "c", "kind": "pointer", "dtype": "fp32", "count": 32, "init": "zeros"}]}


@pytest.mark.parametrize("ulps,status", [(0, "match"), (1, "mismatch")])
def test_compare_case_is_bitwise_for_exact_float_results(monkeypatch, ulps, status):
    from ptx2py import emulate

    def gpu_outputs(gpu, text, spec, inputs=None):
        out = emulate.run(text, spec, inputs).outputs
        out["c"] = (out["c"].view(np.uint32) + np.uint32(ulps)).view(np.float32)
        return out

    monkeypatch.setattr(engine_gpu, "gpu_outputs", gpu_outputs)
    row = engine_gpu.compare_case(None, "vadd", VADD, SPEC)
    assert row["status"] == status
    assert row["buffers"]["c"]["how"] == "bitwise"
