"""A warp: 32 lanes, registers as numpy arrays across the lanes, the SIMT reconvergence stack
and the call frames.

SIMT model (documented choice): a reconvergence stack per warp, pre-Volta style. Each entry is
[pc, reconvergence pc, active mask, frame]. A divergent branch sets the current entry's pc to the
branch's immediate post-dominator (program.py) and pushes the not-taken and the taken paths, both
ending there; an entry is popped when its pc reaches its reconvergence pc or its mask empties.
Lanes that `exit` leave every entry; lanes that `ret` from a device function leave the callee's
entries and wait at the caller's entry (already advanced past the `call`).
"""

from __future__ import annotations

import numpy as np

from .types import PtxType

WARP = 32
READY, BLOCKED, DONE = "ready", "blocked", "done"


class Frame:
    """One activation of a function: its registers, its per-lane `.param` block (call-site and
    formal params), where the caller wants the return values, and where its `.local` frame
    starts in the thread's local memory (a call stack: a callee's frame lies above its
    caller's, so a local address the caller passes stays valid in the callee)."""

    __slots__ = ("code", "scope", "regs", "init", "params", "ops", "returns", "caller", "local_base", "depth")

    def __init__(self, code, scope, caller=None, returns=()):
        self.code = code
        self.scope = scope
        self.regs: dict[str, np.ndarray] = {}
        self.init: dict[str, np.ndarray] = {}
        self.params = np.zeros((WARP, scope.param_size), np.uint8)
        self.ops = scope.ops
        self.caller = caller
        self.returns = returns        # (callee param name, caller param name) pairs
        self.local_base = 0 if caller is None else \
            caller.local_base + (caller.scope.layout.local_size + 15) // 16 * 16
        self.depth = 0 if caller is None else caller.depth + 1      # calls nested (the watchdog's limit)


class Warp:
    def __init__(self, cta, index: int, nthreads: int, entry_frame_factory):
        self.cta = cta
        self.sanitizer = cta.machine.sanitizer
        self.index = index
        self.lane = np.arange(WARP, dtype=np.uint32)
        self.tid_linear = self.lane + np.uint32(index * WARP)
        self.valid = self.tid_linear < nthreads
        self.exited = ~self.valid
        self.cc = np.zeros(WARP, bool)
        self.state = READY
        self.waiting = None           # what a blocked warp waits for (for deadlock reports)
        self.frame = entry_frame_factory(self)
        self.stack = [[0, -1, self.valid.copy(), self.frame]]
        self.local = None             # (WARP, local bytes), made by the CTA
        self.async_groups = None      # cp.async groups (asyncops.CpAsyncGroups)
        self.steps = 0
        self.dirty = False            # some stack entry lost lanes: drop the empty ones
        self.sync_epoch = 0           # warp-synchronising instructions run so far (race model)
        self.pending_regs = None      # register -> async op that will write it (wgmma accumulators)

    # --- registers ----------------------------------------------------------------------------
    def read(self, name: str, rtype: PtxType, mask):
        if self.pending_regs and name in self.pending_regs:
            self.pending_regs[name].early_access(self, name, "read")
        frame = self.stack[-1][3]
        arr = frame.regs.get(name)
        san = self.sanitizer
        if arr is None:
            if san.uninit_regs:
                san.uninit_register(self, name, mask)
            return np.zeros(int(mask.sum()), rtype.container)
        if san.uninit_regs:
            init = frame.init.get(name)      # None once every lane has been written
            if init is not None and not init[mask].all():
                san.uninit_register(self, name, mask & ~init)
        return arr[mask]

    def write(self, name: str, rtype: PtxType, mask, values) -> None:
        if self.pending_regs and name in self.pending_regs:
            self.pending_regs[name].early_access(self, name, "write")
        frame = self.stack[-1][3]
        arr = frame.regs.get(name)
        if arr is None:
            arr = frame.regs[name] = np.zeros(WARP, rtype.container)
            frame.init[name] = np.zeros(WARP, bool)
        arr[mask] = values
        init = frame.init.get(name)
        if init is not None:
            init[mask] = True
            if init.all():
                frame.init[name] = None

    # --- lanes ----------------------------------------------------------------------------------
    def retire(self, mask) -> None:
        """Lanes in mask exit: they leave every stack entry."""
        self.exited |= mask
        self.dirty = True
        for entry in self.stack:
            entry[2] = entry[2] & ~mask

    @property
    def live(self):
        return ~self.exited
