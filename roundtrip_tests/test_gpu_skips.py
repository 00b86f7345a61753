"""Defect 11: a GPU check skips only when no GPU or driver is present; any other
failure during set-up fails. Ragged TMA boxes (a box that does not divide the
tensor dimension) are valid launches."""

from __future__ import annotations

import pytest

from ptx2py.verify import gpu_run


class DynamicLibNotFoundError(Exception):
    """Stands in for cuda.bindings' error when libcuda.so is missing."""


@pytest.mark.parametrize("error", [
    gpu_run.CudaError("CUDA error 100 (CUDA_ERROR_NO_DEVICE): no CUDA-capable device is detected"),
    gpu_run.CudaError("CUDA error 35 (CUDA_ERROR_INSUFFICIENT_DRIVER): driver too old"),
    DynamicLibNotFoundError("Failure finding libcuda.so"),
])
def test_no_gpu_or_driver_is_a_skip(monkeypatch, error):
    monkeypatch.setattr(gpu_run, "driver_module", lambda: object())
    monkeypatch.setattr(gpu_run, "get_gpu", lambda: (_ for _ in ()).throw(error))
    assert gpu_run.skip_reason().startswith("no usable GPU")


@pytest.mark.parametrize("error", [
    gpu_run.CudaError("CUDA error 700 (CUDA_ERROR_ILLEGAL_ADDRESS): an illegal memory access"),
    gpu_run.CudaError("CUDA error 999 (CUDA_ERROR_UNKNOWN): unknown error"),
    AttributeError("'NoneType' object has no attribute 'cuInit'"),
])
def test_any_other_set_up_failure_is_raised_not_skipped(monkeypatch, error):
    monkeypatch.setattr(gpu_run, "driver_module", lambda: object())
    monkeypatch.setattr(gpu_run, "get_gpu", lambda: (_ for _ in ()).throw(error))
    with pytest.raises(type(error)):
        gpu_run.skip_reason()


def test_a_ragged_tma_box_is_a_valid_request():
    from ptx2py.launch import plan

    arg = {"name": "a", "dtype": "fp16", "shape": [200, 104], "strides": [104, 1], "block_shape": [64, 32]}
    req = plan.tensor_map_request(arg, {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 32]},
                                  1 << 20)
    assert plan.check_tensor_map_request(req) == []
