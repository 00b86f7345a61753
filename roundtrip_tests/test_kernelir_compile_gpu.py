"""The compiled problems on a real GPU (kernelir/gpu_check.py) against the numpy
references. Runs with ``-m gpu``; skips cleanly without cuda-python or a GPU."""
import pytest

from ptx2py.kernelir import PROBLEM_NAMES, gpu_check
from ptx2py.verify.gpu_run import gpu_absent


@pytest.fixture(scope="module")
def gpu():
    cu = gpu_check.driver()
    if cu is None:
        pytest.skip("cuda-python is not installed")
    try:
        return gpu_check.GPU(cu)
    except Exception as e:  # noqa: BLE001 - only an absent GPU or driver skips; other errors fail
        if not gpu_absent(e):
            raise
        pytest.skip(f"no usable GPU: {e}")


@pytest.mark.gpu
@pytest.mark.parametrize("sizes", ["test", "full"])
@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_problem_on_gpu(gpu, name, sizes):
    ok, worst, _, _ = gpu_check.run_problem(gpu, name, sizes, gpu.target(), timing=False)
    assert ok, f"{name} [{sizes}] differs from the reference (max abs err {worst:g})"
