"""Statement execution for the reference interpreter (see interp.py)."""
from __future__ import annotations

import numpy as np

from . import ir
from .dtypes import ITEMSIZE, STORAGE, store, wide
from .interp_expr import FLOAT_TYPES, INT_TYPES, evaluate, evaluate_typed
from .load import IRError


def execute(stmts, ctx, mask, path):
    for i, s in enumerate(stmts):
        if not mask.any():
            return   # nobody is here: nothing to do (and no barrier to miss)
        fn = _EXEC.get(type(s))
        if fn is None:
            raise IRError(f"{path}[{i}]", f"unknown statement kind {type(s).__name__!r}")
        fn(s, ctx, mask, f"{path}[{i}]")


# ---------------------------------------------------------------- helpers
def _set_var(ctx, name, dtype, values, where, path):
    if name in ctx.run.params:
        raise IRError(path, f"cannot assign to param {name!r}")
    slot = ctx.vars.get(name)
    if slot is None:
        slot = ctx.vars[name] = [np.zeros(ctx.L, STORAGE[dtype]), dtype, np.zeros(ctx.L, bool)]
    elif slot[1] != dtype:
        raise IRError(path, f"variable {name!r} is {slot[1]}, cannot assign a {dtype}")
    slot[0] = np.where(where, values, slot[0]).astype(STORAGE[dtype], copy=False)
    slot[2] = slot[2] | where


def _get_var(ctx, name, mask, path):
    slot = ctx.vars.get(name)
    if slot is None:
        raise IRError(path, f"variable {name!r} is not defined")
    if (mask & ~slot[2]).any():
        raise IRError(path, f"variable {name!r} is unassigned for {ctx.who(mask & ~slot[2])}")
    return slot


def _accum(op, x, y, dt):
    if dt == "pred":
        raise ValueError
    x, y = wide(x, dt), wide(y, dt)
    fmin, fmax = (np.fmin, np.fmax) if dt in FLOAT_TYPES else (np.minimum, np.maximum)
    with np.errstate(all="ignore"):
        r = {"add": np.add, "mul": np.multiply, "min": fmin, "max": fmax}[op](x, y)
    return store(r, dt)


def _buffer(ctx, name, path, writing=False):
    """(dtype, is_shared) of a global buffer or shared array."""
    if name in ctx.shared:
        return ctx.shared[name].dtype, True
    if name not in ctx.run.bufs:
        raise IRError(path, f"unknown buffer {name!r}")
    if writing and ctx.run.roles[name] == "input":
        raise IRError(path, f"write to input buffer {name!r}")
    return ctx.run.dtypes[name], False


def _size(ctx, name, shared):
    return ctx.shared[name].vals.shape[1] if shared else ctx.run.bufs[name].size


def _bounds(ctx, name, shared, idx, lanes, path, what, span=1):
    idx = np.broadcast_to(idx, (ctx.L,))
    bad = lanes & ((idx < 0) | (idx + span > _size(ctx, name, shared)))
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        raise IRError(path, f"out-of-bounds {what} {name}[{int(idx[lane])}] (size "
                            f"{_size(ctx, name, shared)}) by {ctx.who(lane)}, not covered by a guard")
    return np.where(lanes, idx, 0).astype(np.int64)


def _race(ctx, name, lanes, other, path, what):
    bad = lanes & (other >= 0) & (other != ctx.lane_tid) | lanes & (other == -2)
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        who = "several threads" if other[lane] == -2 else f"thread {int(other[lane])}"
        raise IRError(path, f"shared-memory race on {name}: {what} {who} with no Sync "
                            f"in between, by {ctx.who(lane)}")


def _note_reads(ctx, sh, idx, lanes):
    """Record readers of shared elements; several lanes on one element -> -2."""
    blk, ix, tid = ctx.lane_block[lanes], idx[lanes], ctx.lane_tid[lanes]
    key = blk * sh.vals.shape[1] + ix
    uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    tid_u = np.empty(uniq.size, np.int32)
    tid_u[inv] = tid
    new = np.where(cnt > 1, -2, tid_u)
    cur = sh.reader.reshape(-1)[uniq]
    sh.reader.reshape(-1)[uniq] = np.where((cur == -1) | (cur == new), new, -2)


def _barrier(ctx, full):
    """A barrier completed for the ``full`` blocks: earlier accesses are ordered."""
    for sh in ctx.shared.values():
        sh.writer[full] = -1
        sh.reader[full] = -1


def _gather(ctx, name, shared, idx, lanes, path):
    """Values at idx for every lane (lanes outside ``lanes`` read index 0)."""
    if shared:
        sh = ctx.shared[name]
        _race(ctx, name, lanes, sh.writer[ctx.lane_block, idx], path,
              "read of a value written by")
        _note_reads(ctx, sh, idx, lanes)
        vals, init = sh.vals[ctx.lane_block, idx], sh.init[ctx.lane_block, idx]
    else:
        vals = ctx.run.bufs[name][idx]
        init = ctx.run.ginit[name][idx] if name in ctx.run.ginit else True
    if not np.all(init | ~lanes):
        lane = int(np.flatnonzero(lanes & ~init)[0])
        raise IRError(path, f"read of never-written {name}[{int(idx[lane])}] by {ctx.who(lane)}")
    return vals


def _scatter(ctx, name, shared, idx, vals, lanes, path):
    vals = np.broadcast_to(vals, (ctx.L,))
    if shared:
        sh = ctx.shared[name]
        _race(ctx, name, lanes, sh.writer[ctx.lane_block, idx], path, "overwrite of a value written by")
        _race(ctx, name, lanes, sh.reader[ctx.lane_block, idx], path, "overwrite of a value read by")
        sh.writer[ctx.lane_block[lanes], idx[lanes]] = ctx.lane_tid[lanes]
        sh.vals[ctx.lane_block[lanes], idx[lanes]] = vals[lanes]
        sh.init[ctx.lane_block[lanes], idx[lanes]] = True
    else:
        ctx.run.bufs[name][idx[lanes]] = vals[lanes]
        if name in ctx.run.ginit:
            ctx.run.ginit[name][idx[lanes]] = True


def _guard(ctx, s, mask, path):
    if s.guard is None:
        return mask
    g, _ = evaluate_typed(s.guard, ctx, mask, path + ".guard", ("pred",), "guard")
    return mask & g


def _collective(ctx, mask, path, what):
    """All threads of a block or none must be here; returns the full blocks."""
    cnt = mask.reshape(-1, ctx.T).sum(1)
    bad = np.flatnonzero((cnt > 0) & (cnt < ctx.T))
    if bad.size:
        b = int(bad[0])
        raise IRError(path, f"divergent barrier: {what} reached by {int(cnt[b])} of "
                            f"{ctx.T} threads of block {ctx.block0 + b}")
    return cnt == ctx.T


# ---------------------------------------------------------------- statements
def _load(s, ctx, mask, path):
    dt, shared = _buffer(ctx, s.buffer, path)
    idx, _ = evaluate_typed(s.index, ctx, mask, path + ".index", INT_TYPES, "index")
    eff = _guard(ctx, s, mask, path)
    idx = _bounds(ctx, s.buffer, shared, wide(idx, "s32"), eff, path + ".index", "load of")
    vals = _gather(ctx, s.buffer, shared, idx, eff, path)
    _set_var(ctx, s.dest, dt, vals, eff, path)
    if s.fallback is not None:
        fb, fdt = evaluate(s.fallback, ctx, mask, path + ".fallback")
        if fdt != dt:
            raise IRError(path + ".fallback", f"fallback is {fdt}, buffer is {dt}")
        _set_var(ctx, s.dest, dt, fb, mask & ~eff, path)


def _write(s, ctx, mask, path):
    dt, shared = _buffer(ctx, s.buffer, path, writing=True)
    if s.swizzle is not None:
        _check_swizzle(ctx, s, shared, path + ".swizzle")
    idx, _ = evaluate_typed(s.index, ctx, mask, path + ".index", INT_TYPES, "index")
    val, vdt = evaluate(s.value, ctx, mask, path + ".value")
    if vdt != dt:
        raise IRError(path + ".value", f"value is {vdt}, buffer {s.buffer!r} is {dt}; insert a Cast")
    eff = _guard(ctx, s, mask, path)
    idx = _bounds(ctx, s.buffer, shared, wide(idx, "s32"), eff, path + ".index", "write to")
    _scatter(ctx, s.buffer, shared, idx, val, eff, path)


def _check_swizzle(ctx, s, shared, path):
    sw = s.swizzle
    if sw.mode == "xor":
        size = ctx.shared[s.buffer].vals.shape[1] if shared else 0
        if not shared or sw.value < 1 or sw.value & (sw.value - 1) or size % sw.value:
            raise IRError(path, "xor swizzle needs a shared array whose size is a "
                                "multiple of a power-of-two row length")
    elif shared or sw.value < 1:
        raise IRError(path, "block2d swizzle annotates global writes with a group size >= 1")
    prev = ctx.run.swizzles.setdefault(s.buffer, sw)
    if prev != sw:
        raise IRError(path, f"{s.buffer!r} is written with two different swizzles")


def _accum_stmt(s, ctx, mask, path):
    slot = _get_var(ctx, s.var, mask, path)
    val, vdt = evaluate(s.value, ctx, mask, path + ".value")
    if vdt != slot[1] or vdt == "pred":
        raise IRError(path, f"cannot {s.op}-accumulate a {vdt} into {s.var!r} ({slot[1]})")
    _set_var(ctx, s.var, vdt, _accum(s.op, slot[0], val, vdt), mask, path)


def _assign(s, ctx, mask, path):
    val, vdt = evaluate(s.value, ctx, mask, path + ".value")
    if vdt != s.dtype:
        raise IRError(path, f"value is {vdt}, declared {s.dtype}; insert a Cast")
    _set_var(ctx, s.var, vdt, val, mask, path)


def _loop(s, ctx, mask, path):
    start, dt = evaluate_typed(s.start, ctx, mask, path + ".start", INT_TYPES, "loop start")
    stop, _ = evaluate_typed(s.stop, ctx, mask, path + ".stop", INT_TYPES, "loop stop")
    step, _ = evaluate_typed(s.step, ctx, mask, path + ".step", INT_TYPES, "loop step")
    stop, step = wide(stop, dt), np.broadcast_to(wide(step, dt), (ctx.L,))
    if (mask & (step == 0)).any():
        raise IRError(path + ".step", f"zero loop step for {ctx.who(mask & (step == 0))}")
    _set_var(ctx, s.var, dt, start, mask, path)
    up = step > 0

    def going(v):
        v = wide(v, dt)
        return np.where(up, v < stop, v > stop)

    active = mask & going(ctx.vars[s.var][0])
    while active.any():
        execute(s.body, ctx, active, path + ".body")
        nxt = wide(ctx.vars[s.var][0], dt) + step
        _set_var(ctx, s.var, dt, store(nxt, dt), active, path)
        # stop once the counter wraps, as a 32-bit loop would mis-terminate anyway
        active = active & going(ctx.vars[s.var][0]) & (wide(ctx.vars[s.var][0], dt) == nxt)


def _cond(s, ctx, mask, path):
    c, _ = evaluate_typed(s.cond, ctx, mask, path + ".cond", ("pred",), "condition")
    c = np.broadcast_to(c, (ctx.L,))
    execute(s.then, ctx, mask & c, path + ".then")
    execute(s.else_, ctx, mask & ~c, path + ".else")


def _sync(s, ctx, mask, path):
    _barrier(ctx, _collective(ctx, mask, path, "Sync"))


def _warp_shuffle(s, ctx, mask, path):
    w = s.width
    if w < 1 or w > 32 or w & (w - 1):
        raise IRError(path, f"shuffle width {w} must be a power of two <= 32")
    if ctx.T % 32:
        raise IRError(path, f"shuffle in a block of {ctx.T} threads (not whole warps)")
    m = mask.reshape(-1, 32)
    part = m.any(1) & ~m.all(1)
    if part.any():
        warp = int(np.flatnonzero(part)[0])
        raise IRError(path, f"divergent shuffle: only {int(m[warp].sum())} of 32 lanes of "
                            f"{ctx.who(warp * 32)}'s warp are active")
    slot = _get_var(ctx, s.var, mask, path)
    vals, dt = slot[0], slot[1]
    saved = {k: ctx.vars.get(k) for k in ("a", "b")}
    lane = np.arange(ctx.L)
    try:
        off = w // 2
        while off >= 1:
            ctx.vars["a"] = [vals, dt, np.ones(ctx.L, bool)]
            ctx.vars["b"] = [vals[lane ^ off], dt, np.ones(ctx.L, bool)]
            new, ndt = evaluate(s.combine, ctx, mask, path + ".combine")
            if ndt != dt:
                raise IRError(path + ".combine", f"combine gives {ndt}, var is {dt}")
            vals = np.where(mask, new, vals).astype(STORAGE[dt])
            off //= 2
    finally:
        for k, v in saved.items():
            if v is None:
                ctx.vars.pop(k, None)
            else:
                ctx.vars[k] = v
    _set_var(ctx, s.var, dt, vals, mask, path)


def _tree_halve(s, ctx, mask, path):
    if s.shared not in ctx.shared:
        raise IRError(path, f"{s.shared!r} is not a shared array")
    sh, n, segs = ctx.shared[s.shared], s.count, s.segments
    if n < 1 or segs < 1 or n * segs > sh.vals.shape[1] or ctx.T % segs:
        raise IRError(path, f"count {n} x segments {segs} does not fit {s.shared!r} "
                            f"(size {sh.vals.shape[1]}) / {ctx.T} threads")
    p2 = 1 << (n - 1).bit_length()
    if p2 // 2 * segs > ctx.T:
        raise IRError(path, f"{ctx.T} threads cannot run the first halving step")
    full = _collective(ctx, mask, path, "TreeHalve")
    blocks = np.flatnonzero(full)
    region = sh.vals[blocks, :n * segs]
    if not sh.init[blocks, :n * segs].all():
        bad = np.argwhere(~sh.init[blocks, :n * segs])[0]
        raise IRError(path, f"TreeHalve reads never-written {s.shared}[{int(bad[1])}] "
                            f"in block {ctx.block0 + int(blocks[bad[0]])}")
    w = sh.writer[blocks, :n * segs]
    if (w >= 0).any():
        bad = np.argwhere(w >= 0)[0]
        raise IRError(path, f"shared-memory race on {s.shared}: TreeHalve reads "
                            f"{s.shared}[{int(bad[1])}] written by thread {int(w[tuple(bad)])} "
                            f"with no Sync in between (block {ctx.block0 + int(blocks[bad[0]])})")
    r = region.reshape(len(blocks), segs, n).copy()
    half = p2 // 2
    while half >= 1:
        lo = np.arange(min(half, n - half))
        if lo.size:
            r[:, :, lo] = _accum(s.op, r[:, :, lo], r[:, :, lo + half], sh.dtype)
        half //= 2
    sh.vals[blocks, :n * segs] = r.reshape(len(blocks), n * segs)
    pos = np.zeros(ctx.L // ctx.T, np.int64)
    pos[blocks] = np.arange(len(blocks))
    seg = (np.arange(ctx.L) % ctx.T) // (ctx.T // segs)
    result = r[pos[ctx.lane_block], seg, 0] if len(blocks) else np.zeros(ctx.L)
    _set_var(ctx, s.var, sh.dtype, result, mask, path)
    _barrier(ctx, full)   # the trailing barrier lets the array be reused


def _cp_async(s, ctx, mask, path):
    if s.shared not in ctx.shared:
        raise IRError(path, f"cp.async destination {s.shared!r} is not a shared array")
    dt, src_shared = _buffer(ctx, s.src, path)
    if src_shared or dt != ctx.shared[s.shared].dtype:
        raise IRError(path, "cp.async copies a global buffer into a shared array of the same dtype")
    k = s.bytes // ITEMSIZE[dt]
    dst, _ = evaluate_typed(s.dst_index, ctx, mask, path + ".dst_index", INT_TYPES, "index")
    src, _ = evaluate_typed(s.src_index, ctx, mask, path + ".src_index", INT_TYPES, "index")
    dst, src = np.broadcast_to(wide(dst, "s32"), (ctx.L,)), np.broadcast_to(wide(src, "s32"), (ctx.L,))
    eff = _guard(ctx, s, mask, path)
    for name, idx, lanes in (("dst_index", dst, mask), ("src_index", src, eff)):
        if (lanes & (idx % k != 0)).any():
            raise IRError(f"{path}.{name}", f"{s.bytes}-byte cp.async is misaligned for "
                                            f"{ctx.who(lanes & (idx % k != 0))}")
    src = _bounds(ctx, s.src, False, src, eff, path + ".src_index", "cp.async from", k)
    dst = _bounds(ctx, s.shared, True, dst, mask, path + ".dst_index", "cp.async to", k)
    cols = np.arange(k)
    lanes = np.flatnonzero(mask)
    vals = np.zeros((lanes.size, k), STORAGE[dt])
    live = eff[lanes]
    if live.any():
        srcs = src[lanes[live]][:, None] + cols
        if s.src in ctx.run.ginit and not ctx.run.ginit[s.src][srcs].all():
            raise IRError(path, f"cp.async reads never-written {s.src!r}")
        vals[live] = ctx.run.bufs[s.src][srcs]
    ctx.cp_pending.append((s.shared, ctx.lane_block[lanes], dst[lanes][:, None] + cols, vals,
                           ctx.lane_tid[lanes]))


def _cp_commit(s, ctx, mask, path):
    if ctx.cp_pending:
        ctx.cp_groups.append(ctx.cp_pending)
        ctx.cp_pending = []


def _cp_wait(s, ctx, mask, path):
    keep = s.pending
    done = ctx.cp_groups[:max(0, len(ctx.cp_groups) - keep)]
    ctx.cp_groups = ctx.cp_groups[len(done):]
    for group in done:
        for name, blk, dst, vals, tid in group:
            sh = ctx.shared[name]
            rd = sh.reader[blk[:, None], dst]
            if ((rd == -2) | ((rd >= 0) & (rd != tid[:, None]))).any():
                raise IRError(path, f"shared-memory race on {name}: cp.async lands on a value "
                                    f"other threads read with no Sync in between")
            sh.vals[blk[:, None], dst] = vals
            sh.init[blk[:, None], dst] = True
            sh.writer[blk[:, None], dst] = tid[:, None]   # visible to others after a Sync


def _zero_init(s, ctx, mask, path):
    for v in s.vars:
        _set_var(ctx, v, s.dtype, np.zeros((), STORAGE[s.dtype]), mask, path)
    if s.shared is not None:
        if s.shared not in ctx.shared:
            raise IRError(path, f"{s.shared!r} is not a shared array")
        full = _collective(ctx, mask, path, "ZeroInit of a shared array")
        sh = ctx.shared[s.shared]
        sh.vals[full] = 0
        sh.init[full] = True
        # element e is zeroed by thread e % T (strided), so others need a Sync
        sh.writer[full] = (np.arange(sh.vals.shape[1]) % ctx.T).astype(np.int32)


_EXEC = {ir.Load: _load, ir.Write: _write, ir.Accum: _accum_stmt, ir.Assign: _assign,
         ir.StridedLoop: _loop, ir.Loop: _loop, ir.Cond: _cond, ir.Sync: _sync,
         ir.WarpShuffle: _warp_shuffle, ir.TreeHalve: _tree_halve,
         ir.CpAsyncCopy: _cp_async, ir.CpAsyncCommit: _cp_commit,
         ir.CpAsyncWait: _cp_wait, ir.ZeroInit: _zero_init}
