"""kernelir: a small kernel IR (JSON), its loader/schema, fifteen problems with
numpy references, and a CPU reference interpreter with GPU semantics."""
from . import ir
from .interp import run_kernel
from .ir import Expr, Kernel, Stmt
from .load import IRError, SCHEMA_PATH, dump_kernel, load_kernel, schema
from .problems import NAMES as PROBLEM_NAMES, REFERENCES, load_problem, make_inputs

__all__ = ["ir", "Kernel", "Expr", "Stmt", "IRError", "load_kernel", "dump_kernel",
           "schema", "SCHEMA_PATH", "run_kernel", "PROBLEM_NAMES", "REFERENCES",
           "load_problem", "make_inputs"]
