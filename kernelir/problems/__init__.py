"""The fifteen problems: JSON IR files plus numpy references (reference.py)."""
from __future__ import annotations

import json
from pathlib import Path

from ..ir import Kernel
from ..load import load_kernel
from .reference import REFERENCES, make_inputs

PROBLEM_DIR = Path(__file__).parent
NAMES = ("scalar_add", "vector_add", "scale_shift", "relu_mul",
         "array_sum", "sum_2p24", "mean", "row_sum",
         "rmsnorm", "row_softmax", "l2norm",
         "matmul_512", "matmul_rect", "attention_d64", "attention_d128")


def problem_path(name: str) -> Path:
    return PROBLEM_DIR / f"{name}.json"


def load_problem(name: str) -> tuple[Kernel, dict]:
    """(kernel, meta) where meta has category, params, test_params, rtol, atol."""
    data = json.loads(problem_path(name).read_text())
    return load_kernel(data), data["problem"]


__all__ = ["NAMES", "REFERENCES", "make_inputs", "load_problem", "problem_path"]
