"""Run a corpus kernel's source under its producer's own CPU oracle, on numpy buffers in their
storage dtypes, at a reduced launch: Triton's interpreter for Triton kernels, Pallas interpret
mode for Pallas kernels (make_oracle_refs.py). Import with TRITON_INTERPRET=1 set."""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------------------- Triton
class _Buffer:
    """A host buffer as the interpreter takes a tensor: its address and its Triton dtype."""

    def __init__(self, data: np.ndarray, dtype):
        self.data, self.dtype = data, dtype

    def data_ptr(self) -> int:
        return self.data.ctypes.data


def _host_only_executor():
    """The interpreter copies torch tensors to and from the host around a launch; numpy buffers
    are host memory already."""
    from triton.runtime import interpreter

    interpreter.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))
    interpreter.GridExecutor._restore_args_dev = lambda self, *a: None


@functools.lru_cache(maxsize=1)
def _triton_kernels():
    _host_only_executor()
    return _module(SRC / "triton" / "kernels.py", "corpus_triton_kernels")


def _tl_dtype(name: str):
    import triton.language as tl

    return {"fp32": tl.float32, "fp16": tl.float16, "bf16": tl.bfloat16, "fp8e4nv": tl.float8e4nv,
            "fp8e5": tl.float8e5, "i32": tl.int32, "i64": tl.int64, "i8": tl.int8, "u8": tl.uint8,
            "u32": tl.uint32, "fp64": tl.float64}[name]


def _triton_arg(a: dict, bufs: dict):
    if a["kind"] == "scalar":
        return a["value"]
    buf = _Buffer(bufs[a["name"]], _tl_dtype(a["dtype"]))
    if a["kind"] == "pointer":
        return buf
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor(buf, list(a["shape"]), list(a["strides"]), list(a["block_shape"]))


def run_triton(spec: dict, small: dict, inputs: dict) -> dict:
    fn = getattr(_triton_kernels(), spec["source"].split("::")[-1])
    bufs = {k: v.copy() for k, v in inputs.items()}
    by_name = {a["name"]: a for a in small["args"]}
    args = [_triton_arg(by_name[n], bufs) for n, t in spec["signature"].items() if t != "constexpr"]
    fn[tuple(small["grid"])](*args, **(spec.get("constexprs") or {}))
    return bufs


# ------------------------------------------------------------------------------------- Pallas
@functools.lru_cache(maxsize=1)
def _pallas_kernels():
    return _module(SRC / "pallas" / "kernels.py", "corpus_pallas_kernels")


def _first_ctas(pallas_call, grid_limit, initial_outputs):
    """pallas_call in interpret mode that runs only the programs of the reduced grid (program_id
    d < grid_limit[d], as the engine runs the first CTAs) and starts the outputs from their
    seeded contents (aliased inputs), so what no program writes keeps them."""
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def call(kernel, *, out_shape, grid, in_specs, out_specs, **_):
        outs = list(out_shape) if isinstance(out_shape, (tuple, list)) else [out_shape]
        o_specs = list(out_specs) if isinstance(out_specs, (tuple, list)) else [out_specs]
        n_in, n_out = len(in_specs), len(outs)

        def body(*refs):
            ins, outs_ = refs[:n_in], refs[n_in + n_out:]
            runs = functools.reduce(jnp.logical_and, [pl.program_id(d) < grid_limit[d] for d in range(len(grid))])
            pl.when(runs)(lambda: kernel(*ins, *outs_))

        wrapped = pallas_call(body, out_shape=out_shape, grid=grid, in_specs=list(in_specs) + o_specs,
                              out_specs=out_specs, interpret=True,
                              input_output_aliases={n_in + i: i for i in range(n_out)})
        return lambda *args: wrapped(*args, *[jnp.asarray(o) for o in initial_outputs])
    return call


def _jax_view(data: np.ndarray, a: dict):
    import ml_dtypes

    vt = {"bfloat16": ml_dtypes.bfloat16}.get(a["dtype"])
    return (data.view(vt) if vt is not None else data).reshape(a["shape"])


def run_pallas(spec: dict, small: dict, inputs: dict) -> dict:
    from jax.experimental import pallas as pl

    mod = _pallas_kernels()
    fn, _ = mod.KERNELS[spec["source"].split("::")[-1]]
    args = {a["name"]: a for a in small["args"]}
    ins = [_jax_view(inputs[a["name"]], a) for a in small["args"] if a["name"].startswith("in")]
    outs = [a["name"] for a in small["args"] if a["name"].startswith("out")]
    real = pl.pallas_call
    mod.pl.pallas_call = _first_ctas(real, small["grid"], [_jax_view(inputs[n], args[n]) for n in outs])
    try:
        got = fn(*ins)
    finally:
        mod.pl.pallas_call = real
    got = got if isinstance(got, (tuple, list)) else [got]
    res = {k: v.copy() for k, v in inputs.items()}
    for n, g in zip(outs, got):
        res[n] = np.asarray(g).reshape(-1).view(inputs[n].dtype).copy()
    return res


def _versions() -> dict:
    import jax
    import triton

    return {"triton": ("triton-interpreter", f"triton {triton.__version__}"),
            "pallas": ("pallas-interpret", f"jax {jax.__version__} (CPU, interpret=True)")}


ORACLES = _versions()
RUNNERS = {"triton": run_triton, "pallas": run_pallas}


def run_oracle(producer: str, spec: dict, small: dict, inputs: dict) -> dict:
    return RUNNERS[producer](spec, small, inputs)
