"""atom / red: read-modify-write on global or shared memory, in a deterministic lane order
(the schedule's: ascending lanes for inorder, descending for reverse, a seeded permutation for
random). Lanes are applied in rounds: each round takes, per address, the next lane in that
order, so a round has distinct addresses and runs vectorised."""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import Address

from .. import memory as M
from ..errors import NotEmulated
from ..types import TYPES
from .common import resolve_param_space, space_of

_OPS = (".add", ".min", ".max", ".and", ".or", ".xor", ".exch", ".cas", ".inc", ".dec")


def _numeric(op, ptype, mods):
    """new = f(old, b) for ops whose values are arithmetic: through emulate.numerics."""
    from .alu import _numerics

    ALU, _ = _numerics()
    name = {"and": "and", "or": "or", "xor": "xor", "add": "add", "min": "min", "max": "max"}[op]
    fn = ALU.get(name)
    if fn is None:
        raise NotEmulated(f"atom.{op}{ptype.name}")
    tname = ptype.name
    if op in ("and", "or", "xor"):
        tname = f".b{ptype.bits}"
    mods = frozenset({tname} | ({".rn"} if ptype.floating else set())
                     | ({".ftz"} if ptype.name == ".f32" else set()))
    return lambda old, b, c: fn(mods, (tname,), old, b)


def _combine(op, ptype, mods):
    if op in ("add", "min", "max", "and", "or", "xor"):
        return _numeric(op, ptype, mods)
    if op == "exch":
        return lambda old, b, c: b
    if op == "cas":
        return lambda old, b, c: np.where(old == b, c, old)
    if op == "inc":
        return lambda old, b, c: np.where(old >= b, 0, old + 1).astype(old.dtype)
    if op == "dec":
        return lambda old, b, c: np.where((old == 0) | (old > b), b, old - 1).astype(old.dtype)
    raise NotEmulated(f"atom.{op}")


def _lane_order(machine, lanes):
    spec = machine.schedule.spec
    if spec == "reverse":
        return lanes[::-1]
    if spec == "inorder":
        return lanes
    perm = list(lanes)
    machine.schedule.rng.shuffle(perm)
    return np.array(perm, dtype=lanes.dtype)


def _atomic(instr, scope, returns: bool):
    mods = instr.modifiers
    op = next((m[1:] for m in mods if m in _OPS), None)
    types = [m for m in mods if m in TYPES]
    if op is None or not types:
        raise NotEmulated(instr.name)
    if any(m.startswith(".v") and m[2:].isdigit() for m in mods):
        raise NotEmulated(f"{instr.name} (vector atomics)")
    ptype = TYPES[types[-1]]
    if ptype.bits not in (16, 32, 64):
        raise NotEmulated(instr.name)
    ops = list(instr.operands)
    if ".L2::cache_hint" in mods:
        ops = ops[:-1]
    dest = ops.pop(0) if returns else None
    addr_node = ops.pop(0)
    if not isinstance(addr_node, Address):
        raise NotEmulated(instr.name)
    dec = scope.decoder
    address = dec.address(addr_node)
    rb = dec.reader(ops[0], ptype)
    rc = dec.reader(ops[1], ptype) if len(ops) > 1 else None
    wd = dec.writer(dest, ptype) if dest is not None else None
    combine = _combine(op, ptype, mods)
    space = space_of(mods)
    machine = scope.machine
    nbytes = ptype.nbytes
    container = ptype.container

    def rounds(w, sp, lanes, addrs, b, c, old_out):
        pos = {int(lane): k for k, lane in enumerate(lanes)}
        pending = list(_lane_order(machine, lanes))
        while pending:
            seen, this, rest = set(), [], []
            for lane in pending:
                a = int(addrs[pos[int(lane)]])
                (rest if a in seen else this).append(int(lane))
                seen.add(a)
            pending = rest
            this.sort()                                   # machine.load/store take lanes ascending
            k = np.array([pos[lane] for lane in this])
            sub = np.zeros(32, bool)
            sub[this] = True
            old = M.from_bytes(machine.load(w, sub, sp, addrs[k], nbytes), container)
            new = np.asarray(combine(old, b[k], c[k])).astype(container)
            machine.store(w, sub, sp, addrs[k], M.bytes_of(new, nbytes))
            old_out[k] = old

    def run(w, m):
        addrs, sym_space = address(w, m)
        sp = resolve_param_space(space, sym_space, scope)
        lanes = np.flatnonzero(m)
        b = rb(w, m)
        c = rc(w, m) if rc is not None else b
        old_out = np.zeros(len(lanes), container)
        machine.in_atomic = True
        try:
            rounds(w, sp, lanes, addrs, b, c, old_out)
        finally:
            machine.in_atomic = False
        if wd is not None:
            wd(w, m, old_out)
    return run


HANDLERS = {"atom": lambda i, s: _atomic(i, s, True), "red": lambda i, s: _atomic(i, s, False)}
