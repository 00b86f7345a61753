"""The CUDA driver module of cuda-python, for the packages that run kernels on a GPU
(verify.gpu_run, kernelir.gpu_check): a lower layer than both, so neither imports the other."""

from __future__ import annotations

import importlib
import os


def driver_module():
    """`cuda.bindings.driver` (cuda-python 12.6+), the older `cuda.cuda`, or None without cuda-python.
    PTX2PY_CUDA_DRIVER names a module to use instead (the tests' stand-in driver, in child processes)."""
    stand_in = os.environ.get("PTX2PY_CUDA_DRIVER")
    if stand_in:
        return importlib.import_module(stand_in)
    try:
        from cuda.bindings import driver as cu
        return cu
    except ImportError:
        pass
    try:
        from cuda import cuda as cu  # type: ignore
        return cu
    except ImportError:
        return None
