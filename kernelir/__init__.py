"""kernelir: a small kernel IR (JSON), its loader/schema, fifteen problems with
numpy references, a CPU reference interpreter with GPU semantics, and a
one-pass compiler to PTX (compiler.py)."""
from . import ir
from .compiler import CompileError, compile_kernel, compile_module, kernel_arguments
from .interp import run_kernel
from .ir import Expr, Kernel, Stmt
from .load import SCHEMA_PATH, IRError, dump_kernel, load_kernel, schema
from .problems import NAMES as PROBLEM_NAMES
from .problems import REFERENCES, load_problem, make_inputs

__all__ = ["ir", "Kernel", "Expr", "Stmt", "IRError", "load_kernel", "dump_kernel",
           "schema", "SCHEMA_PATH", "run_kernel", "PROBLEM_NAMES", "REFERENCES",
           "load_problem", "make_inputs", "CompileError", "compile_kernel",
           "compile_module", "kernel_arguments"]
