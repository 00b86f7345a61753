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
from .dtypes import STORAGE, convert, lit_value, store, wide
from .load import IRError

LANES_PER_CHUNK = 1 << 16
_INT = ("s32", "u32")
_FLOAT = ("f32", "f16", "bf16")


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
        if d not in self.params or self.params[d][1] not in _INT:
            raise IRError(path, f"size {d!r} is not an integer param")
        return int(self.params[d][0])


# ---------------------------------------------------------------- expressions
def _ev(e, ctx: _Ctx, mask, path):
    return _EVAL[type(e)](e, ctx, mask, path)


def _ev_typed(e, ctx, mask, path, allowed, what):
    v, dt = _ev(e, ctx, mask, path)
    if dt not in allowed:
        raise IRError(path, f"{what} must be {'/'.join(allowed)}, got {dt}")
    return v, dt


def _ev_lit(e, ctx, mask, path):
    try:
        return lit_value(e.value, e.dtype), e.dtype
    except ValueError as exc:
        raise IRError(path, str(exc)) from None


def _ev_var(e, ctx, mask, path):
    slot = ctx.vars.get(e.name)
    if slot is None:
        if e.name in ctx.run.params:
            return ctx.run.params[e.name]
        raise IRError(path, f"read of undefined variable {e.name!r}")
    missing = mask & ~slot[2]
    if missing.any():
        raise IRError(path, f"read of unassigned variable {e.name!r} by {ctx.who(missing)}")
    return slot[0], slot[1]


def _unary_math(op, x, dt, path):
    if dt not in _FLOAT:
        raise IRError(path, f"{op} needs a float operand, got {dt}")
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        r = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "ex2": np.exp2,
             "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
             "floor": np.floor, "ceil": np.ceil,
             "rsqrt": lambda v: 1.0 / np.sqrt(v), "recip": lambda v: 1.0 / v}[op](x)
    return store(r.astype(np.float32), dt)


def _unary(op, x, dt, path):
    if op == "not":
        if dt == "pred":
            return ~np.asarray(x, bool)
        if dt in _INT:
            return store(~wide(x, dt), dt)
        raise IRError(path, f"not needs pred or int, got {dt}")
    if dt == "pred":
        raise IRError(path, f"{op} is undefined on pred")
    if op == "neg":
        return store(-wide(x, dt), dt)
    if op == "abs":
        return store(np.abs(wide(x, dt)), dt)
    return _unary_math(op, x, dt, path)


def _ev_unary(e, ctx, mask, path):
    x, dt = _ev(e.a, ctx, mask, path + ".a")
    return _unary(e.op, x, dt, path), dt


def _int_divmod(op, x, y, mask, ctx, path):
    zero = np.broadcast_to(y == 0, np.broadcast(x, y).shape)
    if np.ndim(zero) and (mask & zero).any() or (not np.ndim(zero) and zero and mask.any()):
        raise IRError(path, f"integer {op} by zero by {ctx.who(mask & zero) if np.ndim(zero) else ctx.who(mask)}")
    y = np.where(y == 0, 1, y)
    q = np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))   # truncates toward 0
    return q if op == "div" else x - q * y


def _binary(op, a, da, b, db, ctx, mask, path):
    if op in ("shl", "shr"):
        if da not in _INT or db not in _INT:
            raise IRError(path, f"{op} needs int operands, got {da}, {db}")
        x, n = wide(a, da), wide(b, db)
        big = (n < 0) | (n >= 32)   # PTX clamps shift amounts
        n = np.clip(n, 0, 31)
        if op == "shl":
            return store(np.where(big, 0, x << n), da), da
        fill = np.where(x < 0, -1, 0) if da == "s32" else 0
        return store(np.where(big, fill, x >> n), da), da
    if da != db:
        raise IRError(path, f"operand dtypes differ ({da} vs {db}); insert a Cast")
    if op in ir.COMPARE_OPS:
        x, y = wide(a, da), wide(b, db)
        return getattr(np, {"lt": "less", "le": "less_equal", "gt": "greater",
                            "ge": "greater_equal", "eq": "equal",
                            "ne": "not_equal"}[op])(x, y), "pred"
    if op in ("and", "or"):
        if da != "pred":
            raise IRError(path, f"{op} needs pred operands, got {da} (use bitand/bitor)")
        return (np.logical_and if op == "and" else np.logical_or)(a, b), "pred"
    if op in ("bitand", "bitor", "xor"):
        if da not in _INT + ("pred",):
            raise IRError(path, f"{op} needs int or pred operands, got {da}")
        f = {"bitand": np.bitwise_and, "bitor": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return f(a, b), da
    if da == "pred":
        raise IRError(path, f"{op} is undefined on pred")
    if op == "mod" and da in _FLOAT:
        raise IRError(path, "float modulo is undefined in the IR")
    x, y = wide(a, da), wide(b, db)
    if da in _INT and op in ("div", "mod"):
        return store(_int_divmod(op, x, y, mask, ctx, path), da), da
    with np.errstate(all="ignore"):
        r = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
             "min": np.fmin if da in _FLOAT else np.minimum,
             "max": np.fmax if da in _FLOAT else np.maximum}[op](x, y)
    return store(r, da), da


def _ev_binary(e, ctx, mask, path):
    a, da = _ev(e.a, ctx, mask, path + ".a")
    b, db = _ev(e.b, ctx, mask, path + ".b")
    return _binary(e.op, a, da, b, db, ctx, mask, path)


def _ev_ternary(e, ctx, mask, path):
    c, _ = _ev_typed(e.cond, ctx, mask, path + ".cond", ("pred",), "select condition")
    a, da = _ev(e.a, ctx, mask, path + ".a")
    b, db = _ev(e.b, ctx, mask, path + ".b")
    if da != db:
        raise IRError(path, f"select arms differ ({da} vs {db})")
    return np.where(c, a, b).astype(STORAGE[da]), da


def _ev_cast(e, ctx, mask, path):
    x, dt = _ev(e.a, ctx, mask, path + ".a")
    return convert(x, dt, e.dtype), e.dtype


def _ev_index(e, ctx, mask, path):
    shape = ctx.run.shapes.get(e.buffer)
    if shape is None:
        raise IRError(path, f"unknown buffer {e.buffer!r}")
    if len(e.indices) != len(shape):
        raise IRError(path, f"{e.buffer!r} has rank {len(shape)}, got {len(e.indices)} indices")
    flat = np.int64(0)
    for k, (ix, extent) in enumerate(zip(e.indices, shape)):
        v, _ = _ev_typed(ix, ctx, mask, f"{path}.indices[{k}]", _INT, "index")
        flat = flat * extent + wide(v, "s32")
    return store(flat, "s32"), "s32"


def _ev_dim(e, ctx, mask, path):
    shape = ctx.run.shapes.get(e.buffer)
    if shape is None or not 0 <= e.axis < len(shape):
        raise IRError(path, f"no axis {e.axis} in buffer {e.buffer!r}")
    return np.int32(shape[e.axis]), "s32"


def _ev_builtin(e, ctx, mask, path):
    if e.name not in ctx.builtins:
        raise IRError(path, f"builtin {e.name} is not available here")
    return ctx.builtins[e.name], "s32"


def _ev_call(e, ctx, mask, path):
    vals = [_ev(a, ctx, mask, f"{path}.args[{i}]") for i, a in enumerate(e.args)]
    if e.fn in ("max", "min"):
        (a, da), (b, db) = vals
        return _binary(e.fn, a, da, b, db, ctx, mask, path)
    if e.fn == "fma":
        dts = {dt for _, dt in vals}
        if len(dts) != 1 or next(iter(dts)) not in _FLOAT:
            raise IRError(path, f"fma needs three operands of one float dtype, got {sorted(dts)}")
        a, b, c = (np.asarray(v, np.float64) for v, _ in vals)
        dt = vals[0][1]
        return store((a * b + c).astype(np.float32), dt), dt
    (x, dt), = vals
    return _unary(e.fn, x, dt, path), dt


_EVAL = {ir.Lit: _ev_lit, ir.Var: _ev_var, ir.Unary: _ev_unary, ir.Binary: _ev_binary,
         ir.Ternary: _ev_ternary, ir.Cast: _ev_cast, ir.Index: _ev_index,
         ir.Dim: _ev_dim, ir.Builtin: _ev_builtin, ir.Call: _ev_call}


def eval_scalar(run: _Run, e, path):
    """Evaluate a launch-time expression (params and buffer sizes only)."""
    ctx = _Ctx(run, 1)
    v, dt = _ev(e, ctx, np.ones(1, bool), path)
    if dt not in _INT:
        raise IRError(path, f"launch dimension must be an integer, got {dt}")
    return int(np.asarray(v).reshape(-1)[0])


from .interp_stmt import execute  # noqa: E402  (statements need the evaluator)


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
