"""Control flow and CTA barriers: bra, brx.idx, call/ret to device functions (params through
per-lane .param blocks), exit, trap, bar/barrier.{sync,arrive,red}, bar.warp.sync.

Barrier model: barrier `a` completes when the threads arrived reach its count `b` (or, without
`b`, every thread of the CTA that has not exited). A warp counts its non-exited lanes when it
arrives; a warp that arrives with only some of them active is a barrier divergence (reported),
unless its other lanes are on sibling paths that reach the same barrier later (per-thread
barriers, sm_70+: those paths run first and merge at the barrier, _gather_at_barrier).
"""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import ParenList, Symbol

from ..errors import NotEmulated, Trap
from ..operands import constant
from ..program import EXIT, code_branchtargets
from ..sanitizer import thread_name
from ..sync_coverage import coverage_of
from ..types import TYPES
from ..warp import BLOCKED, READY, Frame


# --- branches -----------------------------------------------------------------------------------
def _diverge(w, top, pc, paths, code):
    """Split the warp: the current entry waits at the reconvergence point, one entry per path."""
    reconv = code.ipdom[pc]
    frame = top[3]
    top[0] = reconv
    for target, mask in paths:
        if mask.any():
            w.stack.append([target, reconv, mask, frame])


def _bra(instr, scope):
    code = scope.code
    target = code.label_scopes[id(instr)].get(instr.operands[0].name)
    if target is None:
        raise NotEmulated(f"bra to {instr.operands[0].name} (not a label of {code.name})")

    def run(w, exec_mask, top):
        pc, mask = top[0], top[2]
        if exec_mask is mask or (exec_mask == mask).all():
            top[0] = target
            return
        if not exec_mask.any():
            top[0] = pc + 1
            return
        _diverge(w, top, pc, [(pc + 1, mask & ~exec_mask), (target, exec_mask)], code)
    return run


def _brx(instr, scope):
    code = scope.code
    if ".idx" not in instr.modifiers:
        raise NotEmulated(instr.name)
    labels = code_branchtargets(code).get(instr.operands[1].name)
    if not labels:
        raise NotEmulated(f"brx.idx table {instr.operands[1].name}")
    targets = [code.labels[name] for name in labels]
    index = scope.decoder.reader(instr.operands[0], TYPES[".u32"])

    def run(w, exec_mask, top):
        pc, mask = top[0], top[2]
        idx = np.zeros(32, np.int64)
        idx[exec_mask] = index(w, exec_mask)
        if (idx[exec_mask] >= len(targets)).any():
            raise Trap(f"brx.idx index out of range ({len(targets)} targets)")
        paths = [(pc + 1, mask & ~exec_mask)] + [(t, exec_mask & (idx == k)) for k, t in enumerate(targets)]
        live = [p for p in paths if p[1].any()]
        if len(live) == 1:
            top[0] = live[0][0]
            return
        _diverge(w, top, pc, paths, code)
    return run


# --- calls ----------------------------------------------------------------------------------------
def _names(node) -> list:
    return list(node.items) if isinstance(node, ParenList) else []


def _call(instr, scope):
    ops = list(instr.operands)
    rets = _names(ops.pop(0)) if ops and isinstance(ops[0], ParenList) else []
    target = ops.pop(0)
    args = _names(ops.pop(0)) if ops and isinstance(ops[0], ParenList) else []
    if not isinstance(target, Symbol):
        raise NotEmulated(f"{instr.name} through a register (indirect call)")
    machine = scope.machine
    builtin = BUILTINS.get(target.name)
    if builtin is not None:
        return builtin(instr, scope, rets, args)
    code = machine.program.functions.get(target.name)
    if code is None:
        raise NotEmulated(f"call to {target.name} (no body in this module)")
    callee = machine.scope(code)
    head = code.function.head
    formals = [p for p in (head.params.params if head.params else ())]
    formal_rets = [p for p in (head.returns.params if head.returns else ())]
    if any(p.space != ".param" for p in formals + formal_rets):
        raise NotEmulated(f"call to {target.name} with .reg parameters")
    if any(not isinstance(a, Symbol) for a in args + rets):
        raise NotEmulated(f"call arguments that are not .param names ({instr.name})")
    lay, clay = scope.layout, callee.layout
    # the bytes both sides hold (a call-site slot is as large as the largest call using its name)
    copy_in = [(lay.params[a.name], clay.params[p.name], min(lay.param_sizes[a.name], clay.param_sizes[p.name]))
               for a, p in zip(args, formals)]
    copy_out = [(clay.params[p.name], lay.params[r.name], min(lay.param_sizes[r.name], clay.param_sizes[p.name]))
                for r, p in zip(rets, formal_rets)]

    def run(w, exec_mask, top):
        top[0] += 1
        if not exec_mask.any():
            return
        caller = top[3]
        frame = Frame(code, callee, caller=caller, returns=copy_out)
        w.cta.machine.grow_local(w, frame)
        for src, dst, size in copy_in:
            frame.params[:, dst:dst + size] = caller.params[:, src:src + size]
        w.stack.append([0, EXIT, exec_mask.copy(), frame])
    return run


def _return(w, exec_mask, top):
    frame = top[3]
    if frame.caller is None:          # ret from the kernel: the lanes are done
        w.retire(exec_mask)
        return
    for src, dst, size in frame.returns:
        frame.caller.params[exec_mask, dst:dst + size] = frame.params[exec_mask, src:src + size]
    w.dirty = True
    for entry in w.stack:
        if entry[3] is frame:
            entry[2] = entry[2] & ~exec_mask


def _ret(instr, scope):
    def run(w, exec_mask, top):
        _return(w, exec_mask, top)
        if top[2].any():
            top[0] += 1
    return run


def implicit_return(w, top) -> None:
    """Falling off the end of a function (or a path whose reconvergence is the exit) returns."""
    _return(w, top[2].copy(), top)


def _exit(instr, scope):
    def run(w, exec_mask, top):
        w.retire(exec_mask)
        if top[2].any():
            top[0] += 1
    return run


def _trap(instr, scope):
    def run(w, exec_mask, top):
        if exec_mask.any():
            lane = int(np.flatnonzero(exec_mask)[0])
            raise Trap(f"trap executed by {thread_name(w.cta, w, lane)}")
        top[0] += 1
    return run


# --- builtins (extern functions the CUDA runtime provides) -------------------------------------------
def _vprintf(instr, scope, rets, args):
    lay = scope.layout
    outs = [lay.params[r.name] for r in rets]

    def run(w, exec_mask, top):
        top[0] += 1
        for off in outs:
            top[3].params[exec_mask, off:off + 4] = 0
    return run


def _assertfail(instr, scope, rets, args):
    def run(w, exec_mask, top):
        if exec_mask.any():
            lane = int(np.flatnonzero(exec_mask)[0])
            raise Trap(f"device assertion failed in {thread_name(w.cta, w, lane)}")
        top[0] += 1
    return run


BUILTINS = {"vprintf": _vprintf, "__assertfail": _assertfail}


# --- barriers -------------------------------------------------------------------------------------------
def _barrier(instr, scope):
    mods = set(instr.modifiers)
    kind = "sync"
    if ".arrive" in mods:
        kind = "arrive"
    elif ".red" in mods:
        kind = "red"
    ops = list(instr.operands)
    dest = ops.pop(0) if kind == "red" else None
    bar_id = constant(ops[0])
    if bar_id is None:
        raise NotEmulated(f"{instr.name} with a barrier id in a register")
    count = None
    pred = None
    if kind == "red":
        pred = ops[-1]
        ops = ops[:-1]
    if len(ops) > 1:
        count = constant(ops[1])
        if count is None:
            raise NotEmulated(f"{instr.name} with a thread count in a register")
    red_op = next((m for m in (".popc", ".and", ".or") if m in mods), None)
    dec = scope.decoder
    read_pred = dec.reader(pred, TYPES[".pred"]) if pred is not None else None
    write = None
    if dest is not None:
        write = dec.writer(dest, TYPES[".pred"] if red_op != ".popc" else TYPES[".u32"])
    label = instr.name + f" {bar_id}"

    def run(w, exec_mask, top):
        cta = w.cta
        if not exec_mask.any():
            top[0] += 1
            return
        if count is None and (exec_mask != w.live).any() and (exec_mask == top[2]).all():
            if _gather_at_barrier(w, top):
                return                      # another path of the warp runs first
            exec_mask = top[2].copy()
        if count is None and (exec_mask != w.live).any() and cta.machine.sanitizer.on["barrier-divergence"]:
            missing = int(np.flatnonzero(w.live & ~exec_mask)[0])
            cta.machine.sanitizer.report(
                "barrier-divergence", f"{label} reached by only part of warp {w.index}: "
                f"{thread_name(cta, w, missing)} does not arrive", cta.machine.where_now(w),
                thread=thread_name(cta, w, missing))
        if count is None:
            coverage_of(cta.machine).barrier_reached(cta.machine.where_now(w), label, cta, w)
        bar = cta.barriers.setdefault(bar_id, {"arrived": 0, "waiting": [], "count": count, "values": []})
        if count is not None:
            bar["count"] = count
        if red_op is not None:
            bar["op"] = red_op[1:]
        bar["arrived"] += int(w.live.sum())
        if read_pred is not None:
            bar["values"].append(read_pred(w, exec_mask))
        pc = top[0]
        top[0] += 1
        if kind == "arrive":
            return
        w.state = BLOCKED
        w.waiting = (label, pc, top[3])
        bar["waiting"].append((w, exec_mask.copy(), write))
    return run


def _gather_at_barrier(w, top) -> bool:
    """Barriers are per thread from sm_70 on: the lanes of a warp may reach one bar.sync on
    different paths at different times. When other paths of the same divergence (entries just
    below with the same reconvergence point and frame) still hold lanes elsewhere, this path
    waits at the barrier and those run first (True); once every such path stands at this
    barrier they merge into this entry, which then arrives with all their lanes (False). Paths
    that all wait at other barriers cannot meet here: False, the partial arrival is reported."""
    pc = top[0]
    siblings = []
    for e in reversed(w.stack[:-1]):
        if e[1] != top[1] or e[3] is not top[3] or e[0] == top[1]:
            break
        if e[2].any():
            siblings.append(e)
    if not siblings:
        return False
    here = [e for e in siblings if e[0] == pc]
    elsewhere = [e for e in siblings if e[0] != pc]
    code = top[3].code
    if elsewhere:
        if all(0 <= e[0] < len(code.instructions) and code.instructions[e[0]].opcode in ("bar", "barrier")
               for e in elsewhere):
            return False
        w.stack[:] = [x for x in w.stack if x is not top]      # by identity: entries hold arrays
        at = next(i for i, e in enumerate(w.stack) if e is siblings[-1])
        w.stack.insert(at, top)
        return True
    for e in here:
        top[2] |= e[2]
        w.stack[:] = [x for x in w.stack if x is not e]
    return False


def check_barriers(cta) -> None:
    """Release every barrier whose arrivals reached its count (called between warp runs)."""
    for bar_id, bar in list(cta.barriers.items()):
        if not bar["waiting"] and bar["arrived"] == 0:
            continue
        expected = bar["count"] if bar["count"] is not None else cta.live_threads()
        if bar["arrived"] < expected or not bar["waiting"] and bar["count"] is None:
            continue
        values = np.concatenate(bar["values"]) if bar["values"] else np.zeros(0, bool)
        if cta.machine.observer is not None:
            cta.machine.observer.barrier(cta, bar["waiting"])
        for w, mask, write in bar["waiting"]:
            w.state = READY
            w.waiting = None
            if write is not None:
                n = int(mask.sum())
                if bar.get("op") == "popc":
                    write(w, mask, np.full(n, int(values.sum()), np.uint32))
                else:
                    write(w, mask, np.full(n, bool(values.all()) if bar.get("op") == "and" else bool(values.any())))
        cta.epoch += 1
        cta.machine.asyncs.barrier(cta)
        del cta.barriers[bar_id]


def _warp_sync(instr, scope):
    """bar.warp.sync mask: lanes of one warp run in lock-step here; the mask must hold them."""
    def run(w, exec_mask, top):
        if w.cta.machine.observer is not None:
            w.cta.machine.observer.warp_sync(w)
        w.sync_epoch += 1
        top[0] += 1
    return run


def _bar(instr, scope):
    if ".warp" in instr.modifiers:
        return _warp_sync(instr, scope)
    if ".cluster" in instr.modifiers:
        from .cluster import barrier_cluster
        return barrier_cluster(instr, scope)
    return _barrier(instr, scope)


HANDLERS = {"bra": _bra, "brx": _brx, "call": _call, "ret": _ret, "exit": _exit, "trap": _trap,
            "bar": _bar, "barrier": _bar}
CONTROL = set(HANDLERS)
