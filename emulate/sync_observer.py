"""Which synchronisation instructions order anything in one run: the observability side of the
mutation test (scripts/emulate_mutations.py). Deleting or weakening a synchronisation can only
change a result when, at this launch, it orders something:

* a CTA barrier (`bar.sync`, `barrier.sync`, `bar.red`) *orders* a pair of conflicting accesses
  (same shared or global byte, different threads of one CTA, one a write, atomics not conflicting
  with atomics) when every barrier completion between the two accesses was one of that
  instruction's (so without it nothing orders the pair). Completions are numbered along the run
  (each CTA's own; accesses of two CTAs are never ordered by a barrier, and CTAs may interleave). Per byte the shadow
  keeps, for plain writes, plain accesses and atomics, the latest
  access and the latest by another thread, so the closest conflicting earlier access (the one the
  fewest completions separate) is found in one vectorised step. An asynchronous copy writes its
  destination at its issue and at its landing, whatever the value (it may change the bytes any
  time in between: reading them then is an error).
* a `cp.async.wait_group N` / `wait_all` *orders* a copy it completes when the copy's bytes are
  accessed before the next wait of that warp that would complete the copy if this one were gone
  (or before the CTA ends): the copy would land late.
* a warp operation's member mask: `lanes` records the union of the lanes that ran it, so a
  weakened mask matters only when a lane it drops is active there.

Sites are `(function name, instruction index)`; `ordering_ids()` turns them into the id() of the
instructions (what `Result.executed` holds).
"""

from __future__ import annotations

import numpy as np

# tracks of the byte shadow: plain writes, plain reads and writes, atomics
_TRACKS = ("write", "any", "atomic")


class _Track:
    """Per byte: the latest access (thread, CTA completions before it, its warp's synchronisations
    before it), and the latest by another thread."""

    FIELDS = ("t1", "e1", "s1", "t2", "e2", "s2")

    def __init__(self, size: int):
        for name in self.FIELDS:
            setattr(self, name, np.full(size, -1, np.int64))

    def grow(self, size: int) -> None:
        for name in self.FIELDS:
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.full(size - old.size, -1, np.int64)]))

    def latest_other(self, idx, thread):
        """(thread, completions, warp syncs) of the latest access by a thread other than `thread`."""
        other = self.t1[idx] != thread
        return (np.where(other, self.t1[idx], self.t2[idx]), np.where(other, self.e1[idx], self.e2[idx]),
                np.where(other, self.s1[idx], self.s2[idx]))

    def record(self, idx, thread, epoch: int, wsync: int) -> None:
        moved = idx[self.t1[idx] != thread]
        self.t2[moved], self.e2[moved], self.s2[moved] = self.t1[moved], self.e1[moved], self.s1[moved]
        self.t1[idx], self.e1[idx], self.s1[idx] = thread, epoch, wsync


class _Shadow:
    """The tracks of one space, over the CHUNK-byte chunks of it that were touched (a launch's
    buffers can be large; the accesses of a reduced launch touch little of them)."""

    CHUNK = 4096

    def __init__(self, size: int):
        self.slot = np.full((size + self.CHUNK - 1) // self.CHUNK, -1, np.int64)
        self.used = 0
        self.tracks = {name: _Track(0) for name in _TRACKS}

    def compact(self, idx):
        """Indices into the tracks of the bytes idx (chunks seen for the first time get slots)."""
        chunk = idx // self.CHUNK
        new = np.unique(chunk[self.slot[chunk] < 0])
        if len(new):
            self.slot[new] = np.arange(self.used, self.used + len(new))
            self.used += len(new)
            have = self.tracks["any"].t1.size
            if self.used * self.CHUNK > have:
                size = max(self.used * self.CHUNK, 2 * have)
                for tr in self.tracks.values():
                    tr.grow(size)
        return self.slot[chunk] * self.CHUNK + idx % self.CHUNK


class SyncObserver:
    def __init__(self, machine):
        self.machine = machine
        self.owners: dict = {}                # CTA linear index -> [the sites each completion was of]
        self.ordering: set = set()            # barrier and wait sites that ordered something
        self.lanes: dict = {}                 # warp-op site -> union of the lanes that ran it
        self._shared: dict = {}               # CTA id -> _Shadow
        self._global: dict = {}               # region index -> _Shadow
        self._watch: dict = {}                # CTA id -> (site, warp, group) arrays over shared bytes
        self._cache: dict = {}
        self._warp_owners: dict = {}          # global warp id -> the site of each warp synchronisation

    # --- timeline -------------------------------------------------------------------------------
    def cta_start(self, cta) -> None:
        self.owners[self._cta_index(cta)] = []

    def _cta_index(self, cta) -> int:
        gx, gy, _ = self.machine.grid
        x, y, z = cta.ctaid
        return (z * gy + y) * gx + x

    def _warp_id(self, warp) -> int:
        """Launch-wide: CTA linear index * warps a CTA + warp index (thread ids: warp id * 32 + lane)."""
        return self._cta_index(warp.cta) * len(warp.cta.warps) + warp.index

    def warp_sync(self, warp) -> None:
        """A warp-synchronising instruction of `warp` (bar.warp.sync, a .sync warp op) ran."""
        top = warp.stack[-1]
        self._warp_owners.setdefault(self._warp_id(warp), []).append((top[3].code.name, top[0]))

    def barrier(self, cta, waiting) -> None:
        """A barrier completes; `waiting` the (warp, mask, ...) entries released."""
        self.owners[self._cta_index(cta)].append(frozenset((w.waiting[2].code.name, w.waiting[1])
                                                           for w, *_ in waiting))

    def _owners_between(self, cta: int, first: int, last: int) -> frozenset:
        """The sites that own every completion first..last-1 of a CTA (the pair is ordered only by them)."""
        key = (cta, first, last)
        got = self._cache.get(key)
        if got is None:
            got = frozenset.intersection(*self.owners[cta][first:last])
            self._cache[key] = got
        return got

    # --- accesses ---------------------------------------------------------------------------------
    def shared_access(self, cta, warp, lane_of, idx, write: bool, atomic: bool, rows=None) -> None:
        """Bytes idx (lane_of[i] the lane of byte i); rows, for a write, the new bytes: a byte
        written with the value it already holds orders nothing (the same-value filter of the race
        check), unless it was never written (shared memory is not zeroed on hardware)."""
        sh = self._shared.get(cta.ctaid)
        if sh is None:
            sh = self._shared[cta.ctaid] = _Shadow(cta.shared.size)
        threads = lane_of.astype(np.int64) + warp.index * 32
        if write and rows is not None:
            changed = (cta.shared[idx] != rows.reshape(-1)) | ~cta.shadow.init[idx]   # hardware does not zero it
            threads, idx_changed = threads[changed], idx[changed]
        else:
            idx_changed = idx
        threads += (self._warp_id(warp) - warp.index) * 32
        self._access(sh, warp, threads, idx_changed, write, atomic)
        watch = self._watch.get(cta.ctaid)
        if watch is not None:
            hit = watch[0][idx]
            if (hit >= 0).any():
                sites = self.machine._sites
                for s in np.unique(hit[hit >= 0]):
                    code, pc = sites[int(s)]
                    self.ordering.add((code.name, pc))
                watch[0][idx] = -1

    def global_access(self, warp, lanes, region, offsets, nbytes: int, rows=None) -> None:
        """A load (rows None) or store of nbytes at offsets of one global region."""
        sh = self._global.get(id(region))
        if sh is None:
            sh = self._global[id(region)] = _Shadow(region.size)
        idx = (offsets.astype(np.int64)[:, None] + np.arange(nbytes)).reshape(-1)
        threads = np.repeat(lanes.astype(np.int64) + self._warp_id(warp) * 32, nbytes)
        write = rows is not None
        if write:
            changed = region.data[idx] != rows.reshape(-1)
            idx, threads = idx[changed], threads[changed]
        self._access(sh, warp, threads, idx, write, self.machine.in_atomic)

    def _access(self, sh, warp, threads, idx, write, atomic) -> None:
        """One access of bytes idx by threads of `warp` (launch-wide thread ids: warp id * 32 + lane)."""
        wsync = warp.sync_epoch
        cta = self._cta_index(warp.cta)
        per_cta = len(warp.cta.warps) * 32
        t = sh.tracks
        idx = sh.compact(idx)
        if atomic:
            against = (t["any"],)
        elif write:
            against = (t["any"], t["atomic"])
        else:
            against = (t["write"], t["atomic"])
        if not len(idx):
            return
        found = [tr.latest_other(idx, threads) for tr in against]
        pick = np.argmax(np.stack([f[1] for f in found]), axis=0)
        other, first, fsync = (np.choose(pick, [f[i] for f in found]) for i in range(3))
        now = len(self.owners[cta])       # completions so far; owners[a:now] lie between a and now
        same_warp = other // 32 == threads // 32
        same_cta = (other >= 0) & (other // per_cta == threads // per_cta)
        cta_only = same_cta & (first < now) & (~same_warp | (fsync == wsync))
        for a in np.unique(first[cta_only]):
            self.ordering |= self._owners_between(cta, int(a), now)
        warp_only = same_cta & same_warp & (first == now) & (fsync < wsync)
        if warp_only.any():                  # lanes of one warp ordered by warp syncs alone
            warp_id = int(threads[0]) // 32
            owners = self._warp_owners.get(warp_id, [])
            for a in np.unique(fsync[warp_only]):
                between = set(owners[int(a):wsync])
                if len(between) == 1:
                    self.ordering |= between
        if atomic:
            t["atomic"].record(idx, threads, now, wsync)
            return
        t["any"].record(idx, threads, now, wsync)
        if write:
            t["write"].record(idx, threads, now, wsync)

    # --- cp.async waits -----------------------------------------------------------------------------
    def wait(self, warp, groups, keep: int, complete) -> None:
        """`cp.async.wait_group keep` of `warp`: complete() lands the groups older than its newest
        `keep`; their bytes are watched from then on."""
        m = self.machine
        cta = warp.cta
        site = m.pc_now(warp)
        size = cta.shared.size
        watch = self._watch.get(cta.ctaid)
        if watch is None:
            watch = self._watch[cta.ctaid] = (np.full(size, -1, np.int64), np.full(size, -1, np.int64),
                                              np.full(size, -1, np.int64))
        w_site, w_warp, w_group = watch
        covered = groups.committed - keep       # groups numbered below this are complete after the wait
        w_site[(w_warp == warp.index) & (w_group < covered) & (w_site != site) & (w_site >= 0)] = -1
        first = groups.committed - len(groups.groups)
        landing = [(first + k, op) for k, group in enumerate(groups.groups[: max(len(groups.groups) - keep, 0)])
                   for op in group if not op.done]
        complete()
        for number, op in landing:
            idx = (op.offsets[:, None] + np.arange(op.rows.shape[1])).reshape(-1)
            w_site[idx] = site
            w_warp[idx] = warp.index
            w_group[idx] = number

    # --- warp operations -------------------------------------------------------------------------------
    def warp_op(self, warp, exec_mask) -> None:
        top = warp.stack[-1]
        key = (top[3].code.name, top[0])
        bits = int(np.dot(exec_mask.astype(np.uint64), np.uint64(1) << np.arange(32, dtype=np.uint64)))
        self.lanes[key] = self.lanes.get(key, 0) | bits

    # --- results ---------------------------------------------------------------------------------------
    def _ids(self, keys) -> dict:
        out = {}
        for name, pc in keys:
            scope = self.machine.scopes.get(name)
            if scope is not None and 0 <= pc < len(scope.code.instructions):
                out[id(scope.code.instructions[pc])] = (name, pc)
        return out

    def ordering_ids(self) -> set:
        """id() of every barrier / wait instruction that ordered something in this run."""
        return set(self._ids(self.ordering))

    def lanes_by_id(self) -> dict:
        """id() of every warp-op instruction -> the union of the lanes (bits) that ran it."""
        ids = self._ids(self.lanes)
        return {i: self.lanes[key] for i, key in ids.items()}
