"""The expression evaluator of the reference interpreter: one function per expression node
(`EVALUATE`), each returning the lanes' values and their dtype; shared by the launch-shape
evaluation (interp.py) and the statements (interp_stmt.py)."""
from __future__ import annotations

import numpy as np

from . import ir
from .dtypes import STORAGE, convert, lit_value, store, wide
from .load import IRError

INT_TYPES = ("s32", "u32")
FLOAT_TYPES = ("f32", "f16", "bf16")


def evaluate(e, ctx, mask, path):
    return EVALUATE[type(e)](e, ctx, mask, path)


def evaluate_typed(e, ctx, mask, path, allowed, what):
    v, dt = evaluate(e, ctx, mask, path)
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
    if dt not in FLOAT_TYPES:
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
        if dt in INT_TYPES:
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
    x, dt = evaluate(e.a, ctx, mask, path + ".a")
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
        if da not in INT_TYPES or db not in INT_TYPES:
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
        if da not in INT_TYPES + ("pred",):
            raise IRError(path, f"{op} needs int or pred operands, got {da}")
        f = {"bitand": np.bitwise_and, "bitor": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return f(a, b), da
    if da == "pred":
        raise IRError(path, f"{op} is undefined on pred")
    if op == "mod" and da in FLOAT_TYPES:
        raise IRError(path, "float modulo is undefined in the IR")
    x, y = wide(a, da), wide(b, db)
    if da in INT_TYPES and op in ("div", "mod"):
        return store(_int_divmod(op, x, y, mask, ctx, path), da), da
    with np.errstate(all="ignore"):
        r = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
             "min": np.fmin if da in FLOAT_TYPES else np.minimum,
             "max": np.fmax if da in FLOAT_TYPES else np.maximum}[op](x, y)
    return store(r, da), da


def _ev_binary(e, ctx, mask, path):
    a, da = evaluate(e.a, ctx, mask, path + ".a")
    b, db = evaluate(e.b, ctx, mask, path + ".b")
    return _binary(e.op, a, da, b, db, ctx, mask, path)


def _ev_ternary(e, ctx, mask, path):
    c, _ = evaluate_typed(e.cond, ctx, mask, path + ".cond", ("pred",), "select condition")
    a, da = evaluate(e.a, ctx, mask, path + ".a")
    b, db = evaluate(e.b, ctx, mask, path + ".b")
    if da != db:
        raise IRError(path, f"select arms differ ({da} vs {db})")
    return np.where(c, a, b).astype(STORAGE[da]), da


def _ev_cast(e, ctx, mask, path):
    x, dt = evaluate(e.a, ctx, mask, path + ".a")
    return convert(x, dt, e.dtype), e.dtype


def _ev_index(e, ctx, mask, path):
    shape = ctx.run.shapes.get(e.buffer)
    if shape is None:
        raise IRError(path, f"unknown buffer {e.buffer!r}")
    if len(e.indices) != len(shape):
        raise IRError(path, f"{e.buffer!r} has rank {len(shape)}, got {len(e.indices)} indices")
    flat = np.int64(0)
    for k, (ix, extent) in enumerate(zip(e.indices, shape)):
        v, _ = evaluate_typed(ix, ctx, mask, f"{path}.indices[{k}]", INT_TYPES, "index")
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
    vals = [evaluate(a, ctx, mask, f"{path}.args[{i}]") for i, a in enumerate(e.args)]
    if e.fn in ("max", "min"):
        (a, da), (b, db) = vals
        return _binary(e.fn, a, da, b, db, ctx, mask, path)
    if e.fn == "fma":
        dts = {dt for _, dt in vals}
        if len(dts) != 1 or next(iter(dts)) not in FLOAT_TYPES:
            raise IRError(path, f"fma needs three operands of one float dtype, got {sorted(dts)}")
        a, b, c = (np.asarray(v, np.float64) for v, _ in vals)
        dt = vals[0][1]
        return store((a * b + c).astype(np.float32), dt), dt
    (x, dt), = vals
    return _unary(e.fn, x, dt, path), dt


EVALUATE = {ir.Lit: _ev_lit, ir.Var: _ev_var, ir.Unary: _ev_unary, ir.Binary: _ev_binary,
         ir.Ternary: _ev_ternary, ir.Cast: _ev_cast, ir.Index: _ev_index,
         ir.Dim: _ev_dim, ir.Builtin: _ev_builtin, ir.Call: _ev_call}
