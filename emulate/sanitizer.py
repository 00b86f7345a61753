"""The checks compute-sanitizer makes (memcheck, initcheck, racecheck, synccheck), as shadow
state beside the engine's memory. Each check can be turned off (``Sanitizer(disabled={...})``).

Race model: per CTA, an *epoch* counts completed barriers; per warp, a *warp epoch* counts its
warp-synchronising instructions (bar.warp.sync, shfl/vote/match/redux/elect .sync). Every shared
byte remembers its last writer, its last reader and the latest reader that is another thread than
that one (warp, lane, instruction, epoch, warp epoch). Two
accesses to a byte conflict when at least one writes and they fall in the same epoch (no barrier
between them), and either come from different warps, or from different lanes of one warp at
different instructions with no warp synchronisation between them (independent thread scheduling
does not order them, even though the engine runs the lanes in lock step). A write that leaves the
byte's value unchanged conflicts with nothing (replicated same-value stores are benign). Atomics
conflict with plain accesses but not with each other, and are not recorded. A barrier with a thread count orders
everything (no false positives,
possibly missed races between disjoint groups).
"""

from __future__ import annotations

import numpy as np

from .errors import Report

# check names = report kinds; a deadlock always ends the run and is always reported
CHECKS = ("oob", "misaligned", "uninit", "race", "async-read", "barrier-divergence", "shfl",
          "async-proxy", "mbarrier", "wgmma", "tmem")
MAX_REPORTS = 200


def thread_name(cta, warp, lane: int) -> str:
    ntid = cta.machine.block
    t = warp.index * 32 + int(lane)
    x, y, z = t % ntid[0], (t // ntid[0]) % ntid[1], t // (ntid[0] * ntid[1])
    c = cta.ctaid
    return f"thread ({x},{y},{z}) of block ({c[0]},{c[1]},{c[2]})"


class SharedShadow:
    """Per-byte last writer / reader / init / pending-async state of one CTA's shared memory."""

    def __init__(self, size: int):
        self.init = np.zeros(size, bool)
        self.w_warp = np.full(size, -1, np.int32)
        self.w_lane = np.zeros(size, np.int16)
        self.w_pc = np.zeros(size, np.int32)
        self.w_epoch = np.full(size, -1, np.int32)
        self.w_wep = np.zeros(size, np.int32)
        self.r_warp = np.full(size, -1, np.int32)
        self.r_lane = np.zeros(size, np.int16)
        self.r_pc = np.zeros(size, np.int32)
        self.r_epoch = np.full(size, -1, np.int32)
        self.r_wep = np.zeros(size, np.int32)
        # the latest reader that is another thread than the last reader: a thread that reads its
        # own slot does not hide another warp's earlier read from the write that follows
        self.r2_warp = np.full(size, -1, np.int32)
        self.r2_lane = np.zeros(size, np.int16)
        self.r2_pc = np.zeros(size, np.int32)
        self.r2_epoch = np.full(size, -1, np.int32)
        self.r2_wep = np.zeros(size, np.int32)
        self.pending = np.full(size, -1, np.int64)    # id of the async op that will write it
        self.unfenced = np.zeros(size, bool)          # generic-proxy write not yet fence.proxy.async'd
        self.readers = np.full(size, -1, np.int64)    # id of a pending async op that still reads it


class Sanitizer:
    def __init__(self, enabled: bool = True, disabled=()):
        unknown = set(disabled) - set(CHECKS)
        if unknown:
            raise ValueError(f"unknown sanitizer checks: {', '.join(sorted(unknown))} (known: {', '.join(CHECKS)})")
        self.on = {c: enabled and c not in disabled for c in CHECKS}
        self.reports: list[Report] = []
        self._seen: set = set()
        self.uninit_regs = self.on["uninit"]

    def report(self, kind: str, message: str, where: str, key=None, **details) -> None:
        if kind in self.on and not self.on[kind]:
            return
        key = (kind, where, key)
        if key in self._seen or len(self.reports) >= MAX_REPORTS:
            return
        self._seen.add(key)
        self.reports.append(Report(kind, message, where, details))

    # --- registers --------------------------------------------------------------------------------
    def uninit_register(self, warp, name: str, mask) -> None:
        cta = warp.cta
        lane = int(np.flatnonzero(mask)[0]) if mask.any() else 0
        self.report("uninit", f"read of uninitialised register {name} by {thread_name(cta, warp, lane)}",
                    cta.machine.where_now(warp), key=name, register=name, thread=thread_name(cta, warp, lane))

    # --- bounds -----------------------------------------------------------------------------------
    def bad_access(self, kind, warp, lanes, addrs, nbytes, space, what, write):
        if not self.on[kind] or not len(lanes):
            return
        cta = warp.cta
        lane, addr = int(lanes[0]), int(addrs[0])
        verb = "write" if write else "read"
        self.report(kind, f"{verb} of {nbytes} bytes at {space} address {addr:#x} by "
                    f"{thread_name(cta, warp, lane)}: {what}", cta.machine.where_now(warp),
                    key=space, thread=thread_name(cta, warp, lane), address=addr, space=space,
                    lanes=len(lanes))

    # --- shared memory ------------------------------------------------------------------------------
    def shared_read(self, cta, warp, lanes, offsets, nbytes):
        sh = cta.shadow
        atomic = cta.machine.in_atomic
        idx = (offsets[:, None] + np.arange(nbytes)).reshape(-1)
        lane_of = np.repeat(lanes, nbytes)
        pc = cta.machine.pc_now(warp)
        if cta.machine.observer is not None:
            cta.machine.observer.shared_access(cta, warp, lane_of, idx, False, atomic)
        if self.on["async-read"]:
            pend = sh.pending[idx]
            if (pend >= 0).any():
                k = int(np.flatnonzero(pend >= 0)[0])
                op = cta.machine.async_op(int(pend[k]))
                self.report("async-read", f"read of shared offset {int(idx[k]):#x} by "
                            f"{thread_name(cta, warp, lane_of[k])} before the wait for the "
                            f"{op.kind} that writes it ({op.where})", cta.machine.where_now(warp),
                            key=op.where, other=op.where, thread=thread_name(cta, warp, lane_of[k]))
        if self.on["uninit"]:
            bad = ~sh.init[idx] & (sh.pending[idx] < 0)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                self.report("uninit", f"read of uninitialised shared offset {int(idx[k]):#x} by "
                            f"{thread_name(cta, warp, lane_of[k])}", cta.machine.where_now(warp),
                            thread=thread_name(cta, warp, lane_of[k]), offset=int(idx[k]))
        if self.on["race"]:
            hit = _conflict(sh.w_warp, sh.w_lane, sh.w_pc, sh.w_epoch, sh.w_wep, idx, cta, warp, lane_of, pc)
            if hit.any():
                self._race(cta, warp, "read", lane_of, idx, hit, sh.w_warp, sh.w_lane, sh.w_pc, "write")
            if atomic:               # atomics conflict with plain accesses, never with each other
                return
            moved = idx[(sh.r_warp[idx] != warp.index) | (sh.r_lane[idx] != lane_of)]
            sh.r2_warp[moved], sh.r2_lane[moved], sh.r2_pc[moved] = sh.r_warp[moved], sh.r_lane[moved], sh.r_pc[moved]
            sh.r2_epoch[moved], sh.r2_wep[moved] = sh.r_epoch[moved], sh.r_wep[moved]
            sh.r_warp[idx] = warp.index
            sh.r_lane[idx] = lane_of
            sh.r_pc[idx] = pc
            sh.r_epoch[idx] = cta.epoch
            sh.r_wep[idx] = warp.sync_epoch

    def shared_write(self, cta, warp, lanes, offsets, nbytes, atomic=False, rows=None, landing=False):
        """A write of `rows` (the new bytes, when known): a write that leaves a byte's value
        unchanged does not conflict with earlier accesses (benign, as racecheck's same-value
        filter). `landing`: an asynchronous copy landing (for the sync observer every landed
        byte is written: reading it before its wait is an error whatever the value)."""
        sh = cta.shadow
        idx = (offsets[:, None] + np.arange(nbytes)).reshape(-1)
        lane_of = np.repeat(lanes, nbytes)
        if cta.machine.observer is not None:
            cta.machine.observer.shared_access(cta, warp, lane_of, idx, True, atomic or cta.machine.in_atomic,
                                               None if landing else rows)
        sh.init[idx] = True
        sh.unfenced[idx] = True
        self.overwrite_pending_read(cta, warp, idx, "write")
        atomic = atomic or cta.machine.in_atomic
        if not self.on["race"]:
            return
        pc = cta.machine.pc_now(warp)
        for warps, lns, pcs, epochs, weps, what in (
                (sh.w_warp, sh.w_lane, sh.w_pc, sh.w_epoch, sh.w_wep, "write"),
                (sh.r_warp, sh.r_lane, sh.r_pc, sh.r_epoch, sh.r_wep, "read"),
                (sh.r2_warp, sh.r2_lane, sh.r2_pc, sh.r2_epoch, sh.r2_wep, "read")):
            hit = _conflict(warps, lns, pcs, epochs, weps, idx, cta, warp, lane_of, pc)
            if rows is not None and hit.any():
                hit &= cta.shared[idx] != rows.reshape(-1)
            if hit.any():
                self._race(cta, warp, "write", lane_of, idx, hit, warps, lns, pcs, what)
                break
        if atomic:
            return
        sh.w_warp[idx] = warp.index
        sh.w_lane[idx] = lane_of
        sh.w_pc[idx] = pc
        sh.w_epoch[idx] = cta.epoch
        sh.w_wep[idx] = warp.sync_epoch

    def overwrite_pending_read(self, cta, warp, idx, what: str) -> None:
        """A write to shared bytes that a pending asynchronous operation (wgmma, TMA store)
        still reads: the operation may read the new bytes or the old."""
        rd = cta.shadow.readers[idx]
        if not self.on["race"] or not (rd >= 0).any():
            return
        k = int(np.flatnonzero(rd >= 0)[0])
        m = cta.machine
        op = m.async_op(int(rd[k]))
        if op.done:
            return
        self.report("race", f"{what} of shared offset {int(idx[k]):#x} by {thread_name(cta, warp, 0)} while "
                    f"the {op.kind} at {op.where} still reads it (before the wait that completes it)",
                    m.where_now(warp), key=("war", op.where), other=op.where, offset=int(idx[k]))

    def _race(self, cta, warp, verb, lane_of, idx, hit, warps, lns, pcs, other_verb):
        k = int(np.flatnonzero(hit)[0])
        m = cta.machine
        other_warp = cta.warps[int(warps[idx[k]])]
        other_where = m.where_of(other_warp, int(pcs[idx[k]]))
        me = thread_name(cta, warp, lane_of[k])
        them = thread_name(cta, other_warp, int(lns[idx[k]]))
        self.report("race", f"{verb} of shared offset {int(idx[k]):#x} by {me} conflicts with the "
                    f"{other_verb} by {them} at {other_where} (no barrier between them)",
                    m.where_now(warp), key=other_where, thread=me, other_thread=them,
                    other=other_where, offset=int(idx[k]))


def _conflict(warps, lanes, pcs, epochs, weps, idx, cta, warp, lane_of, pc):
    """Which bytes' recorded access conflicts with this one (see the race model above)."""
    other = warps[idx]
    same_epoch = (epochs[idx] == cta.epoch) & (other >= 0)
    other_warp = other != warp.index
    same_warp_unsynced = (~other_warp & (lanes[idx] != lane_of) & (weps[idx] == warp.sync_epoch)
                          & (pcs[idx] != pc))
    return same_epoch & (other_warp | same_warp_unsynced)
