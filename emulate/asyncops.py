"""Asynchronous operations as first-class objects that complete as late as the program allows.

An AsyncOp is issued by some lanes of a warp, records what it will write (here: shared bytes),
and marks those bytes *pending* in the sanitizer's shadow; its effect is applied only by
``complete()``, which a synchronisation object calls: for cp.async the warp's commit groups
(``cp.async.wait_group N`` completes every group but the newest N). A read of a pending byte is
an `async-read` report and sees the old contents.

The next kinds plug in here: an mbarrier phase completes the TMA loads that signalled it
(complete_tx), a wgmma wait_group completes the accumulator writes of the older wgmma groups,
a bulk-group wait completes TMA stores. Each is an AsyncOp subclass with its own ``apply`` and a
sync object that calls ``registry.complete(op)``.
"""

from __future__ import annotations

import itertools

import numpy as np

from . import memory as M

CTA_END: list = []     # f(cta) run when a CTA ends, after every async op completed (lifetime checks)


class AsyncOp:
    """``proxy`` names the memory proxy the operation accesses through (cp.async: the generic
    proxy; TMA and wgmma: the async proxy, which fence.proxy.async orders against generic writes)."""

    kind = "async"
    proxy = "generic"

    def __init__(self, registry, warp, lanes, where: str):
        self.id = next(registry.ids)
        self.warp = warp
        self.lanes = lanes
        self.where = where
        self.done = False

    def apply(self) -> None:
        raise NotImplementedError


class SharedWrite(AsyncOp):
    """Bytes that land in the CTA's shared memory: rows[i] at offsets[i], issued by lanes[i]."""

    kind = "cp.async"

    def __init__(self, registry, warp, lanes, where, offsets, rows):
        super().__init__(registry, warp, lanes, where)
        self.offsets = offsets
        self.rows = rows
        shadow = warp.cta.shadow
        idx = (offsets[:, None] + np.arange(rows.shape[1])).reshape(-1)
        shadow.pending[idx] = self.id
        observer = warp.cta.machine.observer
        if observer is not None:        # the bytes may change any time from now to the landing
            observer.shared_access(warp.cta, warp, np.repeat(lanes, rows.shape[1]), idx, True, False)

    def apply(self) -> None:
        cta = self.warp.cta
        idx = (self.offsets[:, None] + np.arange(self.rows.shape[1])).reshape(-1)
        cta.shadow.pending[idx[cta.shadow.pending[idx] == self.id]] = -1
        cta.machine.sanitizer.shared_write(cta, self.warp, self.lanes, self.offsets, self.rows.shape[1], rows=self.rows,
                                           landing=True)
        M.scatter(cta.shared, self.offsets, self.rows)


class CommitGroups:
    """One warp's cp.async state: copies not yet committed, then committed groups (oldest first)."""

    def __init__(self):
        self.open: list[AsyncOp] = []
        self.groups: list[list[AsyncOp]] = []
        self.committed = 0            # groups committed so far (numbers them, oldest 0)

    def commit(self) -> None:
        self.committed += 1
        self.groups.append(self.open)
        self.open = []

    def wait(self, registry, keep: int) -> None:
        while len(self.groups) > keep:
            for op in self.groups.pop(0):
                registry.complete(op)


class AsyncRegistry:
    def __init__(self, machine):
        self.machine = machine
        self.ids = itertools.count(1)
        self.ops: dict[int, AsyncOp] = {}
        self.finishing = False

    def issue(self, op: AsyncOp) -> AsyncOp:
        self.ops[op.id] = op
        return op

    def get(self, ident: int) -> AsyncOp:
        return self.ops[ident]

    def complete(self, op: AsyncOp) -> None:
        if not op.done:
            op.done = True
            op.apply()

    def groups(self, warp) -> CommitGroups:
        if warp.async_groups is None:
            warp.async_groups = CommitGroups()
        return warp.async_groups

    def barrier(self, cta) -> None:
        """A CTA barrier completes no asynchronous copy (cp.async needs its own wait)."""

    def finish_cta(self, cta) -> None:
        """Copies never waited for still land when the CTA ends (nothing can read them)."""
        for w in cta.warps:
            g = w.async_groups
            if g is not None:
                g.commit()
                g.wait(self, 0)
        self.finishing = True                       # ops completed now were never waited for
        for ident in sorted(i for i, op in self.ops.items() if op.warp.cta is cta):
            self.complete(self.ops[ident])          # TMA, bulk stores, wgmma: issue order
            del self.ops[ident]
        self.finishing = False
        for hook in CTA_END:
            hook(cta)
