"""Warp-wide operations: shfl.sync, vote(.sync), match.sync, redux.sync, elect.sync, activemask.
Every lane that takes part must be active and named in the member mask; a lane that reads
another lane's value needs that lane active (else the synccheck `shfl` report)."""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import PredPair

from ..errors import NotEmulated
from ..sanitizer import thread_name
from ..types import TYPES

LANES = np.arange(32, dtype=np.int64)
LANE_BITS = np.uint64(1) << LANES.astype(np.uint64)
U32, PRED = TYPES[".u32"], TYPES[".pred"]


def _bits(mask) -> int:
    return int(np.dot(mask.astype(np.uint64), LANE_BITS))


def _lanes_of(bits: int):
    return (LANE_BITS & np.uint64(bits)) != 0


def _check_members(w, exec_mask, member_bits, name):
    """Active lanes outside the member mask, or members that are not active: undefined."""
    san = w.cta.machine.sanitizer
    if w.cta.machine.observer is not None:
        w.cta.machine.observer.warp_op(w, exec_mask)
    if not san.on["shfl"]:
        return
    members = _lanes_of(member_bits)
    bad = (exec_mask & ~members) | (members & ~exec_mask & w.live)
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        why = "is not in the member mask" if exec_mask[lane] else "is named in the member mask but does not take part"
        san.report("shfl", f"{name} with member mask {member_bits:#010x}: {thread_name(w.cta, w, lane)} {why}",
                   w.cta.machine.where_now(w), thread=thread_name(w.cta, w, lane), mask=member_bits)


def _member_reader(dec, node):
    """The member mask; reading it is the point where the warp synchronises (race model)."""
    read = dec.reader(node, U32)

    def member(w, m):
        if w.cta.machine.observer is not None:
            w.cta.machine.observer.warp_sync(w)
        w.sync_epoch += 1
        return int(read(w, m)[0]) if m.any() else 0
    return member


def _shfl(instr, scope):
    mods = instr.modifiers
    mode = next((m for m in (".up", ".down", ".bfly", ".idx") if m in mods), None)
    if mode is None:
        raise NotEmulated(instr.name)
    sync = ".sync" in mods
    dest, a, b, c, *rest = instr.operands
    dec = scope.decoder
    ptype = TYPES[".b32"]
    ra, rb, rc = dec.reader(a, ptype), dec.reader(b, U32), dec.reader(c, U32)
    member = _member_reader(dec, rest[0]) if sync else (lambda w, m: 0xFFFFFFFF)
    if isinstance(dest, PredPair):
        wd, wp = dec.writer(dest.first, ptype), dec.writer(dest.second, PRED)
    else:
        wd, wp = dec.writer(dest, ptype), None
    name = instr.name

    def run(w, m):
        full = np.zeros(32, np.uint32)
        full[m] = ra(w, m)
        lane = LANES[m]
        bval = rb(w, m).astype(np.int64) & 31
        cv = rc(w, m).astype(np.int64)
        cval, seg = cv & 31, (cv >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg)
        min_lane = lane & seg
        if mode == ".up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == ".down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == ".bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        if sync:
            _check_members(w, m, member(w, m), name)
        inactive = ~m[j]
        if inactive.any() and w.cta.machine.sanitizer.on["shfl"]:
            k = int(np.flatnonzero(inactive)[0])
            w.cta.machine.sanitizer.report(
                "shfl", f"{name}: {thread_name(w.cta, w, int(lane[k]))} reads lane {int(j[k])}, which does "
                "not take part", w.cta.machine.where_now(w), thread=thread_name(w.cta, w, int(lane[k])))
        wd(w, m, full[j])
        if wp is not None:
            wp(w, m, ok)
    return run


def _vote(instr, scope):
    mods = instr.modifiers
    mode = next((m for m in (".all", ".any", ".uni", ".ballot") if m in mods), None)
    if mode is None:
        raise NotEmulated(instr.name)
    dest, a, *rest = instr.operands
    dec = scope.decoder
    ra = dec.reader(a, PRED)
    sync = ".sync" in mods
    member = _member_reader(dec, rest[0]) if sync and rest else None
    wd = dec.writer(dest, TYPES[".b32"] if mode == ".ballot" else PRED)
    name = instr.name

    def run(w, m):
        n = int(m.sum())
        vals = np.zeros(32, bool)
        vals[m] = ra(w, m)
        members = m
        if member is not None:
            bits = member(w, m)
            _check_members(w, m, bits, name)
            members = m & _lanes_of(bits)
        sel = vals[members]
        if mode == ".ballot":
            wd(w, m, np.full(n, _bits(vals & members), np.uint32))
        elif mode == ".all":
            wd(w, m, np.full(n, bool(sel.all())))
        elif mode == ".any":
            wd(w, m, np.full(n, bool(sel.any())))
        else:
            wd(w, m, np.full(n, bool(sel.all() or not sel.any())))
    return run


def _match(instr, scope):
    mods = instr.modifiers
    ptype = TYPES[".b64"] if ".b64" in mods else TYPES[".b32"]
    dest, a, member_node = instr.operands
    dec = scope.decoder
    ra, member = dec.reader(a, ptype), _member_reader(dec, member_node)
    if isinstance(dest, PredPair):
        wd, wp = dec.writer(dest.first, U32), dec.writer(dest.second, PRED)
    else:
        wd, wp = dec.writer(dest, U32), None
    is_all = ".all" in mods
    name = instr.name

    def run(w, m):
        bits = member(w, m)
        _check_members(w, m, bits, name)
        members = m & _lanes_of(bits)
        vals = np.zeros(32, ptype.container)
        vals[m] = ra(w, m)
        same = (vals[:, None] == vals[None, :]) & members[None, :]
        if is_all:
            uniform = bool((vals[members] == vals[members][0]).all()) if members.any() else True
            out = np.full(int(m.sum()), _bits(members) if uniform else 0, np.uint32)
            wd(w, m, out)
            if wp is not None:
                wp(w, m, np.full(int(m.sum()), uniform))
            return
        out = (same.astype(np.uint64) << LANES.astype(np.uint64)[None, :]).sum(axis=1).astype(np.uint32)
        wd(w, m, out[m])
    return run


_REDUX = {".add": "add", ".min": "min", ".max": "max", ".and": "and", ".or": "or", ".xor": "xor"}


def _redux(instr, scope):
    mods = instr.modifiers
    op = next((_REDUX[m] for m in mods if m in _REDUX), None)
    ptype = next((TYPES[m] for m in mods if m in TYPES), None)
    if op is None or ptype is None:
        raise NotEmulated(instr.name)
    if ptype.floating:
        return _redux_float(instr, scope, op, ptype)
    dest, a, member_node = instr.operands
    dec = scope.decoder
    ra, member, wd = dec.reader(a, ptype), _member_reader(dec, member_node), dec.writer(dest, ptype)
    name = instr.name
    view = np.int32 if ptype.signed else np.uint32

    def run(w, m):
        bits = member(w, m)
        _check_members(w, m, bits, name)
        vals = ra(w, m).view(view)
        if op == "add":
            r = np.uint32(int(vals.astype(np.int64).sum()) & 0xFFFFFFFF)
        elif op in ("min", "max"):
            r = np.array([vals.min() if op == "min" else vals.max()], view).view(np.uint32)[0]
        else:
            r = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op].reduce(vals.view(np.uint32))
        wd(w, m, np.full(int(m.sum()), r, np.uint32))
    return run


def _redux_float(instr, scope, op, ptype):
    """redux.sync.min/max{.abs}{.NaN}.f32 (sm_100a): the lanes' values folded with the numerics'
    own min/max.f32 (their NaN and signed-zero rules), .abs first clearing the sign bits."""
    from .alu import _numerics

    alu, _ = _numerics()
    if op not in ("min", "max") or ptype.name != ".f32" or op not in alu:
        raise NotEmulated(instr.name)
    fold = alu[op]
    mods = frozenset({".f32"} | ({".NaN"} if ".NaN" in instr.modifiers else set()))
    absolute = ".abs" in instr.modifiers
    dest, a, member_node = instr.operands
    dec = scope.decoder
    ra, member, wd = dec.reader(a, ptype), _member_reader(dec, member_node), dec.writer(dest, ptype)
    name = instr.name

    def run(w, m):
        bits = member(w, m)
        _check_members(w, m, bits, name)
        vals = ra(w, m).astype(np.uint32)
        if absolute:
            vals = vals & np.uint32(0x7FFFFFFF)
        r = vals[:1]
        for v in vals[1:]:
            r = np.asarray(fold(mods, (".f32",), r, np.array([v], np.uint32)), np.uint32)
        wd(w, m, np.full(int(m.sum()), r[0], np.uint32))
    return run


def _elect(instr, scope):
    dest, member_node = instr.operands
    dec = scope.decoder
    member = _member_reader(dec, member_node)
    if isinstance(dest, PredPair):
        wd, wp = dec.writer(dest.first, U32), dec.writer(dest.second, PRED)
    else:
        wd, wp = None, dec.writer(dest, PRED)
    name = instr.name

    def run(w, m):
        bits = member(w, m)
        _check_members(w, m, bits, name)
        members = m & _lanes_of(bits)
        leader = int(np.flatnonzero(members)[0]) if members.any() else -1
        if wd is not None:
            wd(w, m, np.full(int(m.sum()), max(leader, 0), np.uint32))
        wp(w, m, LANES[m] == leader)
    return run


def _activemask(instr, scope):
    wd = scope.decoder.writer(instr.operands[0], TYPES[".b32"])
    return lambda w, m: wd(w, m, np.full(int(m.sum()), _bits(m), np.uint32))


HANDLERS = {"shfl": _shfl, "vote": _vote, "match": _match, "redux": _redux, "elect": _elect,
            "activemask": _activemask}
