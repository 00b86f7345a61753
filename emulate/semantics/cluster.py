"""Thread-block clusters (sm_90): the CTAs of a cluster run together, `barrier.cluster`,
`mapa` and distributed shared memory (PTX ISA 5.1.7 "Cluster of Cooperative Thread Arrays",
9.7.13.4 "barrier.cluster", 9.7.9.19 "mapa", 5.1.7/6.4.1 the `.shared::cluster` window).

Cluster shape: the entry's `.reqnctapercluster` (or the sidecar's `cluster`); CTA ranks number
the CTAs of a cluster x fastest (%cluster_ctarank). The machine runs all CTAs of one cluster in
one scheduling loop (their warps interleaved in the schedule's order), clusters one after another.

Addresses (the engine's own encoding; the hardware's is opaque): a `.shared::cta` offset is
also the `.shared::cluster` address of the executing CTA's byte; the same byte of the CTA of
rank r is offset + (r + 1) << RANK_SHIFT, which is what `mapa` returns (the generic form adds
the shared window). Loads and stores through such an address reach the other CTA's shared
memory (uninitialised-byte checks apply; DSMEM accesses are not race-tracked).

A DSMEM access to a CTA that has exited is a `race` report (its shared memory is gone).

`getctarank` gives the rank an address names.

`barrier.cluster.arrive` / `.wait` (with `.release`/`.relaxed`/`.acquire`/`.aligned`): a phase
completes when every non-exited thread of the cluster has arrived; a wait blocks its warp until
the phase its lanes arrived in has completed. Completion ends a shared-memory epoch in every
CTA of the cluster, like a CTA barrier.
"""

from __future__ import annotations

import numpy as np

from ..errors import NotEmulated
from ..memory import SHARED_WINDOW
from ..sanitizer import thread_name
from ..types import TYPES
from ..warp import BLOCKED, DONE, READY
from . import sites
from .common import type_of

RANK_SHIFT = 24                       # shared memory per CTA is far below 16 MiB
LOCAL_MASK = (1 << RANK_SHIFT) - 1


def clusters_of(grid, cluster) -> list[list[tuple]]:
    """The grid's CTA ids grouped by cluster, each cluster's CTAs in rank order."""
    gx, gy, gz = grid
    cx, cy, cz = cluster
    out = []
    for z0 in range(0, gz, cz):
        for y0 in range(0, gy, cy):
            for x0 in range(0, gx, cx):
                out.append([(x0 + x, y0 + y, z0 + z) for z in range(cz) for y in range(cy) for x in range(cx)])
    return out


def has_remote(addrs) -> bool:
    return bool((np.asarray(addrs, np.uint64) > np.uint64(LOCAL_MASK)).any())


def split_ranks(w, lanes, addrs, nbytes: int, write: bool):
    """(target CTA, lane selection, local offsets) for `.shared::cluster` addresses; an address
    naming a rank outside the cluster is an `oob` report."""
    addrs = np.asarray(addrs, np.uint64)
    tags = (addrs >> np.uint64(RANK_SHIFT)).astype(np.int64)
    local = addrs & np.uint64(LOCAL_MASK)
    cluster = w.cta.cluster
    for tag in np.unique(tags):
        sel = tags == tag
        if tag == 0:
            yield w.cta, sel, local[sel]
        elif tag - 1 < len(cluster):
            yield cluster[tag - 1], sel, local[sel]
        else:
            w.cta.machine.sanitizer.bad_access(
                "oob", w, lanes[sel], addrs[sel], nbytes, "shared::cluster",
                f"CTA rank {tag - 1} outside the {len(cluster)}-CTA cluster", write)


def _remote_access(w, cta, verb: str) -> None:
    """Every DSMEM access: the target CTA must still run (PTX ISA: a CTA's shared memory is gone
    when it exits, so a cluster barrier must keep it alive until its partners are done)."""
    bar = _state(w.cta)
    if not bar.dsmem:
        bar.dsmem = True
        sites.note_ids(bar.blocked_waits)
    if all(x.state == DONE for x in cta.warps):
        m = w.cta.machine
        m.sanitizer.report("race", f"{verb} of the shared memory of CTA rank {cta.rank} by "
                           f"{thread_name(w.cta, w, 0)} after that CTA exited (no barrier.cluster "
                           "keeps it alive)", m.where_now(w), key=("dsmem-exited", cta.rank))


def remote_load(w, cta, lanes, offs, nbytes):
    """Bytes of another CTA's shared memory (its uninitialised bytes are reported)."""
    from .. import memory as M

    _remote_access(w, cta, "read")
    offs = offs.astype(np.int64)
    ok = offs + nbytes <= cta.shared.size
    sanitizer = cta.machine.sanitizer
    if not ok.all():
        sanitizer.bad_access("oob", w, lanes[~ok], offs[~ok], nbytes, "shared::cluster",
                             f"outside the {cta.shared.size}-byte shared space of CTA rank {cta.rank}", False)
    out = np.zeros((len(lanes), nbytes), np.uint8)
    idx = (offs[ok][:, None] + np.arange(nbytes)).reshape(-1)
    if sanitizer.on["uninit"] and len(idx) and not cta.shadow.init[idx].all():
        k = int(idx[np.flatnonzero(~cta.shadow.init[idx])[0]])
        sanitizer.report("uninit", f"read of uninitialised shared offset {k:#x} of CTA rank {cta.rank} by "
                         f"{thread_name(w.cta, w, int(lanes[0]))}", cta.machine.where_now(w), offset=k)
    out[ok] = M.gather(cta.shared, offs[ok], nbytes)
    return out


def remote_store(w, cta, lanes, offs, rows):
    from .. import memory as M

    _remote_access(w, cta, "write")
    offs = offs.astype(np.int64)
    nbytes = rows.shape[1]
    ok = offs + nbytes <= cta.shared.size
    if not ok.all():
        cta.machine.sanitizer.bad_access("oob", w, lanes[~ok], offs[~ok], nbytes, "shared::cluster",
                                         f"outside the {cta.shared.size}-byte shared space of CTA rank "
                                         f"{cta.rank}", True)
    cta.shadow.init[(offs[ok][:, None] + np.arange(nbytes)).reshape(-1)] = True
    M.scatter(cta.shared, offs[ok], rows[ok])


def local_offsets(w, offsets, what: str):
    """Offsets in the executing CTA of `.shared::cluster` operands an async family only handles
    locally (TMA destinations, mbarriers); another CTA's address is refused by name."""
    offsets = np.asarray(offsets, np.int64)
    tags = offsets >> RANK_SHIFT
    mine = (tags == 0) | (tags == w.cta.rank + 1)
    if not mine.all():
        raise NotEmulated(f"{what} on the shared memory of another CTA of the cluster")
    return offsets & LOCAL_MASK


# --- mapa -----------------------------------------------------------------------------------------
def mapa(instr, scope):
    """mapa[.shared::cluster].u32/u64 d, a, rank: a's byte in the CTA of that rank."""
    ptype = type_of(instr)
    generic = ".shared::cluster" not in instr.modifiers
    d, a, rank = instr.operands
    dec = scope.decoder
    read, read_rank, write = dec.reader(a, ptype), dec.reader(rank, TYPES[".u32"]), dec.writer(d, ptype)
    base = np.uint64(SHARED_WINDOW if generic else 0)

    def run(w, m):
        addr = read(w, m).astype(np.uint64)
        ranks = read_rank(w, m).astype(np.uint64)
        if generic and ((addr < base) | (addr >= base + np.uint64(1 << 32))).any():
            raise NotEmulated(f"{instr.name} of a generic address outside shared memory")
        local = (addr - base) & np.uint64(LOCAL_MASK)
        bad = ranks >= np.uint64(len(w.cta.cluster))
        if bad.any():
            lane = int(np.flatnonzero(m)[np.flatnonzero(bad)[0]])
            w.cta.machine.sanitizer.report(
                "oob", f"{instr.name}: CTA rank {int(ranks[bad][0])} outside the {len(w.cta.cluster)}-CTA "
                f"cluster ({thread_name(w.cta, w, lane)})", w.cta.machine.where_now(w))
        out = base + local + ((ranks + np.uint64(1)) << np.uint64(RANK_SHIFT))
        write(w, m, out.astype(ptype.container))
    return run


def getctarank(instr, scope):
    """getctarank[.shared::cluster].u32 d, a: the rank of the CTA whose shared memory a names."""
    generic = ".shared::cluster" not in instr.modifiers
    d, a = instr.operands
    read = scope.decoder.reader(a, TYPES[".u64"])
    write = scope.decoder.writer(d, TYPES[".u32"])
    base = np.uint64(SHARED_WINDOW if generic else 0)

    def run(w, m):
        addr = read(w, m).astype(np.uint64)
        if generic and ((addr < base) | (addr >= base + np.uint64(1 << 32))).any():
            raise NotEmulated(f"{instr.name} of a generic address outside shared memory")
        tag = ((addr - base) >> np.uint64(RANK_SHIFT)).astype(np.int64)
        write(w, m, np.where(tag == 0, w.cta.rank, tag - 1).astype(np.uint32))
    return run


# --- barrier.cluster ------------------------------------------------------------------------------
class ClusterBarrier:
    __slots__ = ("phase", "arrived", "waiters", "dsmem", "blocked_waits")

    def __init__(self):
        self.phase = 0
        self.arrived = 0
        self.waiters: list = []
        self.dsmem = False                 # a CTA of the cluster accessed another's shared memory
        self.blocked_waits: set = set()    # ids of waits that held a warp back


def _state(cta) -> ClusterBarrier:
    leader = cta.cluster[0]
    bar = getattr(leader, "cluster_barrier", None)
    if bar is None:
        bar = leader.cluster_barrier = ClusterBarrier()
    return bar


def _arrived_phase(w):
    ph = getattr(w, "cluster_phase", None)
    if ph is None:
        ph = w.cluster_phase = np.full(len(w.lane), -1, np.int64)
    return ph


def barrier_cluster(instr, scope):
    mods = set(instr.modifiers)
    if ".arrive" in mods:
        kind = "arrive"
    elif ".wait" in mods:
        kind = "wait"
    else:
        raise NotEmulated(instr.name)
    name = instr.name

    def run(w, exec_mask, top):
        if not exec_mask.any():
            top[0] += 1
            return
        bar = _state(w.cta)
        phases = _arrived_phase(w)
        m = w.cta.machine
        if kind == "arrive":
            again = exec_mask & (phases >= bar.phase)
            if again.any():
                m.sanitizer.report("barrier-divergence",
                                   f"{name} by {thread_name(w.cta, w, int(np.flatnonzero(again)[0]))}"
                                   " which arrived already and has not waited", m.where_now(w))
            phases[exec_mask] = bar.phase
            bar.arrived += int(exec_mask.sum())
            top[0] += 1
            return
        lanes = phases[exec_mask]
        if (lanes < 0).any():
            m.sanitizer.report("barrier-divergence",
                               f"{name} by {thread_name(w.cta, w, int(np.flatnonzero(exec_mask & (phases < 0))[0]))}"
                               " with no barrier.cluster.arrive before it", m.where_now(w))
        if (lanes < bar.phase).all():
            phases[exec_mask] = -1
            top[0] += 1
            return
        # observable for the mutation test when it holds a warp back in a cluster whose CTAs
        # share memory (the only cross-CTA accesses it orders)
        bar.blocked_waits.add(id(instr))
        if bar.dsmem:
            sites.note(instr)
        w.state = BLOCKED
        w.waiting = (f"{name} (cluster barrier phase {bar.phase}: {bar.arrived} of "
                     f"{sum(c.live_threads() for c in w.cta.cluster)} threads arrived)", top[0], top[3])
        bar.waiters.append(w)
    return run


def check_cluster_barrier(ctas) -> None:
    """Complete the cluster barrier's phase once every live thread of the cluster arrived."""
    bar = getattr(ctas[0], "cluster_barrier", None)
    if bar is None or bar.arrived == 0:
        return
    if bar.arrived < sum(c.live_threads() for c in ctas):
        return
    bar.phase += 1
    bar.arrived = 0
    for w in bar.waiters:
        w.state = READY
        w.waiting = None
    bar.waiters = []
    for cta in ctas:
        cta.epoch += 1
        cta.machine.asyncs.barrier(cta)


# --- asynchronous operations aimed at another CTA of the cluster -----------------------------------
class OnCta:
    """The issuing warp as seen from another CTA of its cluster: what a multicast TMA load or a
    remote mbarrier arrive does there (the target's shared memory, barriers and async ops), with
    the issuer's location for reports."""

    def __init__(self, warp, cta):
        self._warp = warp
        self.cta = cta

    def __getattr__(self, name):
        return getattr(self._warp, name)


def own_local(w, offsets):
    """`.shared::cluster` offsets with the executing CTA's own rank tag made plain offsets."""
    offsets = np.asarray(offsets, np.int64)
    mine = (offsets >> RANK_SHIFT) == w.cta.rank + 1
    return np.where(mine, offsets & LOCAL_MASK, offsets)


def on_rank(w, offset: int):
    """(the warp acting in the CTA an address names, the local offset); None for a rank outside
    the cluster (reported)."""
    tag = int(offset) >> RANK_SHIFT
    if tag == 0:
        return w, int(offset)
    cluster = w.cta.cluster
    if tag - 1 >= len(cluster):
        machine = w.cta.machine
        machine.sanitizer.report("oob", f"shared::cluster address {int(offset):#x} names CTA rank {tag - 1} "
                                 f"outside the {len(cluster)}-CTA cluster", machine.where_now(w))
        return None
    target = cluster[tag - 1]
    local = int(offset) & LOCAL_MASK
    return (w, local) if target is w.cta else (OnCta(w, target), local)


def multicast_targets(w, mask: int) -> list:
    """The warp acting in each CTA of ctaMask (bit r = CTA rank r; PTX ISA cp.async.bulk.tensor
    .multicast::cluster: data and the mbarrier signal go to the same CTA-relative offsets)."""
    cluster = w.cta.cluster
    if mask >> len(cluster):
        machine = w.cta.machine
        machine.sanitizer.report("oob", f"multicast ctaMask {mask:#x} names CTAs outside the {len(cluster)}-CTA "
                                 "cluster", machine.where_now(w))
    return [w if cta is w.cta else OnCta(w, cta) for r, cta in enumerate(cluster) if mask >> r & 1]
