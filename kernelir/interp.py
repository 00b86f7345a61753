"""Reference interpreter: runs a Kernel on the CPU with GPU semantics.

Execution is vectorised: a chunk of whole blocks is one set of "lanes" (one per
thread), every statement runs for all lanes at once under an active mask, and
control flow narrows the mask. Lanes of a block are therefore in lock-step, so
a Sync only has to check that every thread of the block (or none) reached it.
Anything undefined on a GPU raises ``IRError`` naming the node path.
"""
from __future__ import annotations

import numpy as np

from . import ir
from .dtypes import STORAGE, convert, lit_value
from .interp_expr import INT_TYPES, evaluate
from .interp_stmt import execute
from .load import IRError

LANES_PER_CHUNK = 1 << 16


class _Shared:
    def __init__(self, decl: ir.Shared, nblocks: int):
        self.dtype = decl.dtype
        self.vals = np.zeros((nblocks, decl.size), STORAGE[decl.dtype])
        self.init = np.zeros((nblocks, decl.size), bool)
        # Race tracking since the last barrier: the writing tid, and the reading
        # tid (-1 none, -2 several). Lock-step execution would hide races otherwise.
        self.writer = np.full((nblocks, decl.size), -1, np.int32)
        self.reader = np.full((nblocks, decl.size), -1, np.int32)


class _Ctx:
    """State of one chunk of blocks (or, with L == 1, of launch-shape evaluation)."""

    def __init__(self, run, L, T=1, block0=0, builtins=None):
        self.run, self.L, self.T, self.block0 = run, L, T, block0
        self.builtins = builtins or {}
        self.vars: dict[str, list] = {}   # name -> [values, dtype, assigned]
        self.lane_block = np.arange(L) // T
        self.lane_tid = np.arange(L) % T
        nb = L // T
        self.shared = {s.name: _Shared(s, nb) for s in run.kernel.shared}
        self.cp_pending: list = []
        self.cp_groups: list = []

    def who(self, lanes) -> str:
        lane = int(np.flatnonzero(lanes)[0]) if np.ndim(lanes) else int(lanes)
        return f"thread {lane % self.T} of block {self.block0 + lane // self.T}"


class _Run:
    """Kernel-wide state shared by all chunks: params, global buffers."""

    def __init__(self, kernel: ir.Kernel, inputs: dict, params: dict):
        self.kernel = kernel
        self.params = {}
        declared = {p.name: p for p in kernel.params}
        for name in params:
            if name not in declared:
                raise IRError("params", f"unknown param {name!r}")
        for p in kernel.params:
            if p.name not in params:
                raise IRError("params", f"missing value for param {p.name!r}")
            self.params[p.name] = (lit_value(params[p.name], p.dtype), p.dtype)
        self.shapes, self.bufs, self.ginit, self.roles, self.dtypes = {}, {}, {}, {}, {}
        for i, b in enumerate(kernel.buffers):
            shape = tuple(self._size(d, f"buffers[{i}].shape") for d in b.shape)
            self.shapes[b.name], self.roles[b.name], self.dtypes[b.name] = shape, b.role, b.dtype
            if b.role == "output":
                self.bufs[b.name] = np.zeros(int(np.prod(shape)), STORAGE[b.dtype])
                self.ginit[b.name] = np.zeros(self.bufs[b.name].size, bool)
                continue
            if b.name not in inputs:
                raise IRError(f"buffers[{i}]", f"no input array for buffer {b.name!r}")
            arr = np.asarray(inputs[b.name])
            if arr.shape != shape:
                raise IRError(f"buffers[{i}]", f"{b.name!r} has shape {arr.shape}, kernel says {shape}")
            src = "f32" if arr.dtype.kind == "f" else ("pred" if arr.dtype.kind == "b" else "s32")
            flat = convert(arr.reshape(-1).astype(STORAGE[src]) if src != "s32"
                           else arr.reshape(-1), src, b.dtype)
            self.bufs[b.name] = np.array(flat, STORAGE[b.dtype])
        for s in kernel.shared:
            self.shapes[s.name] = (s.size,)
            self.dtypes[s.name] = s.dtype
        self.swizzles: dict[str, ir.Swizzle] = {}

    def _size(self, d, path):
        if isinstance(d, int):
            return d
        if d not in self.params or self.params[d][1] not in INT_TYPES:
            raise IRError(path, f"size {d!r} is not an integer param")
        return int(self.params[d][0])


def eval_scalar(run: _Run, e, path):
    """Evaluate a launch-time expression (params and buffer sizes only)."""
    ctx = _Ctx(run, 1)
    v, dt = evaluate(e, ctx, np.ones(1, bool), path)
    if dt not in INT_TYPES:
        raise IRError(path, f"launch dimension must be an integer, got {dt}")
    return int(np.asarray(v).reshape(-1)[0])


def run_kernel(kernel: ir.Kernel, inputs: dict, params: dict) -> dict:
    """Run every block and thread of ``kernel``; return the output/inout buffers."""
    run = _Run(kernel, inputs, params)
    dims = {}
    for what in ("grid", "block"):
        vals = getattr(kernel.launch, what)
        dims[what] = [v if isinstance(v, int) else
                      eval_scalar(run, v, f"launch.{what}[{i}]") for i, v in enumerate(vals)]
        if any(d < 1 for d in dims[what]):
            raise IRError(f"launch.{what}", f"non-positive launch dimension {dims[what]}")
    (gx, gy, gz), (bx, by, bz) = dims["grid"], dims["block"]
    T, nblocks = bx * by * bz, gx * gy * gz
    if T > 1024:
        raise IRError("launch.block", f"{T} threads per block exceeds 1024")
    per_chunk = max(1, LANES_PER_CHUNK // T)
    for b0 in range(0, nblocks, per_chunk):
        nb = min(per_chunk, nblocks - b0)
        lane = np.arange(nb * T)
        t, blk = lane % T, b0 + lane // T
        i32 = lambda v: np.asarray(v, np.int32)  # noqa: E731
        builtins = {
            "tid.x": i32(t % bx), "tid.y": i32(t // bx % by), "tid.z": i32(t // (bx * by)),
            "ctaid.x": i32(blk % gx), "ctaid.y": i32(blk // gx % gy),
            "ctaid.z": i32(blk // (gx * gy)),
            "ntid.x": np.int32(bx), "ntid.y": np.int32(by), "ntid.z": np.int32(bz),
            "nctaid.x": np.int32(gx), "nctaid.y": np.int32(gy), "nctaid.z": np.int32(gz),
            "laneid": i32(t % 32), "warpid": i32(t // 32)}
        ctx = _Ctx(run, nb * T, T, b0, builtins)
        execute(kernel.body, ctx, np.ones(nb * T, bool), "body")
        if ctx.cp_pending or ctx.cp_groups:
            raise IRError("body", "cp.async copies were never waited for (CpAsyncWait)")
    out = {}
    for i, b in enumerate(kernel.buffers):
        if b.role == "output" and not run.ginit[b.name].all():
            first = int(np.flatnonzero(~run.ginit[b.name])[0])
            raise IRError(f"buffers[{i}]", f"output {b.name!r} element {first} was never written")
        if b.role != "input":
            out[b.name] = run.bufs[b.name].reshape(run.shapes[b.name]).copy()
    return out
