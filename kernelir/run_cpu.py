"""Kernel IR -> PTX (kernelir's compiler) -> the engine: the compiled PTX runs, never the IR
interpreter. The launch comes from the IR's own grid/block expressions; buffers go in and come
out by their IR names (bf16 as float32 values on the way out)."""

from __future__ import annotations

import zlib

import numpy as np

from ptx2py.emulate.errors import EmulationError
from ptx2py.emulate.frontend import Result, run

_SIDECAR_DTYPE = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "s32": "i32", "u32": "u32"}


def seeded_inputs(kernel, params: dict, given: dict, problem: str | None = None, seed: int = 0) -> dict:
    """`given` completed with every input buffer it lacks: a bundled problem's own inputs (kernelir.problems,
    `problem` its name) where they fit the buffer's shape, else seeded values of the buffer's shape and
    type (floats uniform in [-1, 1), integers in [0, 256)), the same for the same kernel name and seed."""
    from .problems import NAMES, make_inputs

    missing = [b for b in kernel.buffers if b.role != "output" and b.name not in given]
    bundled = make_inputs(problem, params) if missing and problem in NAMES else {}
    rng = np.random.default_rng([seed, zlib.crc32(kernel.name.encode())])
    out = dict(given)
    for b in missing:
        dims = [d if isinstance(d, int) else params.get(d) for d in b.shape]
        if not all(isinstance(d, int) for d in dims):
            continue                                   # a size param without a value: the IR says which
        shape = tuple(dims)
        if b.name in bundled and np.shape(bundled[b.name]) == shape:
            out[b.name] = bundled[b.name]
        elif b.dtype in ("s32", "u32"):
            out[b.name] = rng.integers(0, 256, shape).astype(np.int32)
        else:
            out[b.name] = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    return out


def ir_launch(kernel, params: dict, inputs: dict) -> tuple[dict, dict]:
    """(sidecar-format launch, device-layout inputs by PTX-argument name) for an IR kernel."""
    from .gpu_check import to_device_layout
    from .interp import _Run, eval_scalar

    state = _Run(kernel, inputs, params)
    grid = [v if isinstance(v, int) else eval_scalar(state, v, f"launch.grid[{i}]")
            for i, v in enumerate(kernel.launch.grid)]
    block = [v if isinstance(v, int) else eval_scalar(state, v, f"launch.block[{i}]")
             for i, v in enumerate(kernel.launch.block)]
    args, device_inputs = [], {}
    for b in kernel.buffers:
        n = int(np.prod(state.shapes[b.name]))
        args.append({"name": b.name, "kind": "pointer", "dtype": _SIDECAR_DTYPE[b.dtype], "count": n,
                     "init": "zeros"})
        if b.role != "output":
            if b.name not in inputs:
                raise EmulationError(f"missing input buffer {b.name}")
            device_inputs[b.name] = to_device_layout(np.asarray(inputs[b.name]), b.dtype)
    for p in kernel.params:
        if p.name not in params:
            raise EmulationError(f"missing parameter {p.name}")
        args.append({"name": p.name, "kind": "scalar", "dtype": _SIDECAR_DTYPE[p.dtype], "value": params[p.name]})
    launch = {"kernel": kernel.name, "grid": [int(g) for g in grid], "block": [int(b) for b in block],
              "shared": 0, "args": args}
    return launch, device_inputs


def run_ir(kernel, params: dict, inputs: dict, target: str = "sm_80", **options) -> Result:
    from .compiler import compile_kernel
    from .gpu_check import from_device_layout

    launch, device_inputs = ir_launch(kernel, params, inputs)
    ptx = compile_kernel(kernel, target)
    result = run(ptx, launch, device_inputs, filename=f"{kernel.name}.{target}.ptx", **options)
    shapes = {b.name: b for b in kernel.buffers}
    outputs = {}
    for name, raw in result.outputs.items():
        b = shapes[name]
        outputs[name] = from_device_layout(raw, b.dtype)
    result.outputs = outputs
    result.stats["ptx"] = ptx
    return result
