"""TMA and bulk copies (sm_90): cp.async.bulk.tensor 1d-5d tile loads (global -> shared,
completing through an mbarrier's complete_tx) and stores (shared -> global, bulk groups),
cp.async.bulk (non-tensor) loads and stores, cp.async.bulk.commit_group / wait_group(.read),
fence.proxy.async, prefetch.tensor (no effect: data.py's prefetch).

Late completion: a load reads global memory at issue and lands in shared memory when a wait
observes the mbarrier phase it completes (mbarrier.py); a store reads shared memory and writes
global memory at the cp.async.bulk.wait_group that covers its group. The async proxy: shared
bytes written through the generic proxy (st, stmatrix...) and then read by a TMA store, or
overwritten by a TMA load, with no fence.proxy.async after the write are an `async-proxy` report
(the two proxies' accesses are unordered without it: PTX ISA, memory consistency model, proxies).
"""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import Address, Vector

from .. import memory as M
from ..asyncops import AsyncOp, CommitGroups, SharedWrite
from ..errors import NotEmulated
from ..operands import constant
from ..sync_coverage import coverage_of
from ..tensormaps import tensor_maps_of
from ..types import TYPES
from . import cp_async, mbarrier, sites
from .cluster import LOCAL_MASK, multicast_targets
from .common import space_of

U32, U64, S32 = TYPES[".u32"], TYPES[".u64"], TYPES[".s32"]


# --- the async proxy ------------------------------------------------------------------------------------
class AsyncSharedWrite(SharedWrite):
    """Shared bytes written through the async proxy (a TMA load): they become initialised and
    carry no generic writer (the mbarrier wait, not a bar.sync, orders them)."""

    proxy = "async"

    def __init__(self, registry, warp, lanes, where, offsets, rows, kind):
        self.kind = kind
        super().__init__(registry, warp, lanes, where, offsets, rows)

    def apply(self) -> None:
        cta = self.warp.cta
        sh = cta.shadow
        idx = (self.offsets[:, None] + np.arange(self.rows.shape[1])).reshape(-1)
        sh.pending[idx[sh.pending[idx] == self.id]] = -1
        sh.init[idx] = True
        sh.w_warp[idx] = -1
        unfenced = getattr(sh, "unfenced", None)
        if unfenced is not None:
            unfenced[idx] = False
        M.scatter(cta.shared, self.offsets, self.rows)


def async_read(cta, warp, idx: np.ndarray, what: str, where: str) -> np.ndarray:
    """Shared bytes at idx read through the async proxy (a TMA store's source, a wgmma operand):
    bytes an async write has not landed in yet are an `async-read` report."""
    machine = cta.machine
    san = machine.sanitizer
    idx = np.asarray(idx, np.int64)
    ok = (idx >= 0) & (idx < cta.shared.size)
    if not ok.all():
        san.report("oob", f"{what} reads shared offset {int(idx[~ok][0]):#x} outside the "
                   f"{cta.shared.size}-byte shared space", where, key=("async-oob", where))
        idx = np.where(ok, idx, 0)
    if san.on["async-read"]:
        pend = cta.shadow.pending[idx]
        if (pend >= 0).any():
            k = int(np.flatnonzero(pend >= 0)[0])
            op = machine.async_op(int(pend[k]))
            san.report("async-read", f"{what} reads shared offset {int(idx[k]):#x} before the wait for "
                       f"the {op.kind} that writes it ({op.where})", where, key=("async", op.where))
    return cta.shared[idx]


def hold_reads(cta, op, idx) -> None:
    """Mark shared bytes a pending async op will read (a write to them before it completes races)."""
    cta.shadow.readers[idx] = op.id


def release_reads(cta, op, idx) -> None:
    rd = cta.shadow.readers
    rd[idx[rd[idx] == op.id]] = -1


def _fenced_by(shadow) -> np.ndarray:
    """Per shared byte: id of the fence.proxy.async that last fenced a generic write to it."""
    fb = getattr(shadow, "fenced_by", None)
    if fb is None:
        fb = shadow.fenced_by = np.full(shadow.init.size, -1, np.int64)
    return fb


def check_fenced(cta, warp, idx: np.ndarray, what: str, access: str = "reads") -> None:
    """Generic-proxy writes to bytes an async-proxy operation reads, or writes (a TMA load into
    a buffer first written with st.shared: the two writes are unordered across the proxies, PTX
    ISA memory consistency model, proxies), need fence.proxy.async between them."""
    unfenced = getattr(cta.shadow, "unfenced", None)
    if unfenced is None:
        return
    if sites.active():
        fences = np.unique(_fenced_by(cta.shadow)[np.clip(idx, 0, unfenced.size - 1)])
        sites.note_ids(fences[fences >= 0])
    if not unfenced.any():          # the common case (no generic write since the last fence): no gather
        return
    hit = unfenced[np.clip(idx, 0, unfenced.size - 1)]
    if hit.any():
        k = int(np.asarray(idx)[np.flatnonzero(hit)[0]])
        m = cta.machine
        site = int(cta.shadow.w_pc[k])
        writer = cta.shadow.w_warp[k]
        at = m.where_of(cta.warps[int(writer)], site) if writer >= 0 else "an earlier write"
        m.sanitizer.report("async-proxy", f"{what} {access} shared offset {k:#x} written through the "
                           f"generic proxy at {at} with no fence.proxy.async after the write",
                           m.where_now(warp), key=("proxy", at), other=at)


def _fence(instr, scope):
    """fence.proxy.async orders the generic-proxy writes before it against async-proxy accesses
    after it (the other fences order nothing the engine reorders)."""
    mods = set(instr.modifiers)
    if ".proxy" in mods and (".async" in mods or any(m.startswith(".async::") for m in mods)
                             or ".async.shared::cta" in mods):
        def run(w, m):
            unfenced = getattr(w.cta.shadow, "unfenced", None)
            if unfenced is not None:
                if sites.active():     # a byte fenced twice since its write needs neither alone
                    fb = _fenced_by(w.cta.shadow)
                    fb[~unfenced & (fb >= 0) & (fb != id(instr))] = -2   # (every warp runs it)
                    fb[unfenced] = id(instr)
                unfenced[:] = False
        return run
    if ".proxy" in mods and ".tensormap::generic" in mods and ".acquire" in mods:
        return _tensormap_acquire(instr, scope)
    return lambda w, m: None


def _tensormap_acquire(instr, scope):
    """fence.proxy.tensormap::generic.acquire [map], 128: a tensor map written through the generic
    proxy (tensormap.cp_fenceproxy) may now be used by TMA."""
    read = scope.decoder.address(instr.operands[0])
    machine = scope.machine

    def run(w, m):
        a, _ = read(w, m)
        for addr in np.unique(a.astype(np.uint64)):
            if int(addr) in unacquired_maps(machine):
                unacquired_maps(machine).discard(int(addr))
                if sites.active():       # the mutation test: a TMA use of this map needs it
                    _acquired_by(machine)[int(addr)] = id(instr)
    return run


def _acquired_by(machine) -> dict:
    d = getattr(machine, "tensormap_acquired_by", None)
    if d is None:
        d = machine.tensormap_acquired_by = {}
    return d


def unacquired_maps(machine) -> set:
    s = getattr(machine, "unacquired_tensormaps", None)
    if s is None:
        s = machine.unacquired_tensormaps = set()
    return s


# --- operands ---------------------------------------------------------------------------------------------
def _shared_addr(scope, node, mods):
    if not isinstance(node, Address):
        raise NotEmulated("bulk copy operand is not an address")
    return mbarrier.shared_offsets(scope.decoder.address(node), "shared" if _has_shared(mods) else "generic")


def _has_shared(mods):
    return any(m.startswith(".shared") for m in mods)


def _tensor_operand(scope, node, rank):
    """[tensorMap, {c0, ...}] -> f(w, m) -> (map addresses, signed coords (n, rank)); the ISA
    declares the coordinates .s32."""
    if not isinstance(node, Address) or len(node.items) != 2 or not isinstance(node.items[1], Vector):
        raise NotEmulated("tensor operand is not [tensorMap, {coordinates}]")
    base, coords = node.items
    read_base = scope.decoder.reader(base, U64)
    if len(coords.items) != rank:
        raise NotEmulated(f"{len(coords.items)} coordinates for a {rank}d tensor copy")
    read_coords = [scope.decoder.reader(c, S32) for c in coords.items]

    def read(w, m):      # raw u32 bits -> signed: a box may start before the tensor (padding)
        return read_base(w, m), np.stack([r(w, m).view(np.int32).astype(np.int64) for r in read_coords], 1)
    return read


def _tensor_map(machine, w, lane, addr):
    mask = np.zeros(32, bool)
    mask[lane] = True
    if sites.active() and int(addr) in _acquired_by(machine):
        sites.note_ids([_acquired_by(machine).pop(int(addr))])
    if int(addr) in unacquired_maps(machine):
        machine.sanitizer.report("async-proxy", f"TMA uses the tensor map at {int(addr):#x}, written by "
                                 "tensormap.cp_fenceproxy, with no fence.proxy.tensormap::generic.acquire of it",
                                 machine.where_now(w), key=("tensormap", int(addr)))
    raw = np.concatenate([machine.load(w, mask, "generic", np.array([addr + 16 * i], np.uint64), 16)[0]
                          for i in range(8)])     # 16-byte pieces: a map is 64-byte aligned
    tmap = tensor_maps_of(machine).from_bytes(raw, machine.globals)
    if tmap is None:
        raise NotEmulated(f"cp.async.bulk.tensor with a tensor map at {int(addr):#x} that the launch did "
                          "not build (only sidecar tensor maps are emulated)")
    return tmap


def _drop_hint(mods, rest):
    return rest[:-1] if ".L2::cache_hint" in mods and rest else rest


def _rank(mods):
    return next((int(m[1]) for m in mods if len(m) == 3 and m[0] == "." and m[2] == "d" and m[1] in "12345"), None)


# --- loads ----------------------------------------------------------------------------------------------
def _tensor_load(instr, scope):
    mods = set(instr.modifiers)
    rank = _rank(mods)
    multicast = ".multicast::cluster" in mods
    if rank is None or ".im2col" in mods or any(m.startswith(".multicast") for m in mods) and not multicast \
            or any(m.startswith(".im2col") or m.startswith(".tile::") or m.startswith(".cta_group") for m in mods):
        raise NotEmulated(instr.name)
    dst, src, bar, *rest = instr.operands
    rest = _drop_hint(mods, rest)
    if multicast != (len(rest) == 1) or len(rest) > 1:
        raise NotEmulated(f"{instr.name} with operands after the mbarrier other than a multicast ctaMask")
    read_mask = scope.decoder.reader(rest[0], TYPES[".u16"]) if multicast else None
    dst_off = _shared_addr(scope, dst, mods)
    tensor = _tensor_operand(scope, src, rank)
    bar_off = _shared_addr(scope, bar, mods)
    machine = scope.machine

    def run(w, m):
        lanes = np.flatnonzero(m)
        maps, coords = tensor(w, m)
        dsts, bars = dst_off(w, m), bar_off(w, m)
        masks = read_mask(w, m) if multicast else None
        where = machine.where_now(w)
        for i, lane in enumerate(lanes):
            tmap = _tensor_map(machine, w, lane, maps[i])
            raw, oob = tmap.read_box(coords[i])
            if oob:
                machine.sanitizer.report("oob", f"{instr.name}: the tensor map's box at {list(coords[i])} "
                                         "reads outside its global buffer", where, key="tma-oob")
            chunks = tmap.shared_chunks(int(dsts[i]))
            for target in multicast_targets(w, int(masks[i])) if multicast else (w,):
                _land_via_barrier(target, lane, where, chunks, raw.reshape(-1, 16), int(bars[i]),
                                  "cp.async.bulk.tensor", instr.name)
    return run


def _watched_overwrite(cta, idx) -> None:
    """A TMA write over shared bytes a completed wgmma group read (wgmma.Watch, while
    sites.recording): the wait and commit behind that group are observable."""
    for w in cta.warps:
        for watch in getattr(getattr(w, "wgmma", None), "watches", ()):
            if np.isin(idx, watch.reads).any():
                sites.note_ids(watch.ids)


def _overwrite_pending_write(w, idx, name, where) -> None:
    """A copy into shared bytes that an earlier asynchronous copy still writes (no wait observed
    its phase): the two land in either order, and a reader of the first may see the second (a
    stage refilled before its consumers released it)."""
    pend = w.cta.shadow.pending[idx]
    if not (pend >= 0).any():
        return
    machine = w.cta.machine
    op = machine.async_op(int(pend[np.flatnonzero(pend >= 0)[0]]))
    if not op.done:
        machine.sanitizer.report("race", f"{name} into shared offset {int(idx[np.flatnonzero(pend >= 0)[0]]):#x} "
                                 f"while the {op.kind} at {op.where} still writes it (no wait observed its "
                                 "completion)", where, key=("waw", op.where), other=op.where)


def _land_via_barrier(w, lane, where, offsets, rows, bar_offset, kind, name):
    machine = w.cta.machine
    if (offsets > LOCAL_MASK).any():
        raise NotEmulated(f"{name} into the shared memory of another CTA of the cluster (only "
                          ".multicast::cluster reaches other CTAs)")
    bar = mbarrier.lookup(w, bar_offset, name)
    if (offsets < 0).any() or (offsets + rows.shape[1] > w.cta.shared.size).any():
        machine.sanitizer.report("oob", f"{name}: destination outside the {w.cta.shared.size}-byte shared "
                                 "space", where, key="tma-dst")
        return
    idx = (offsets[:, None] + np.arange(rows.shape[1])).reshape(-1)
    coverage_of(machine).async_write(w.cta, idx)
    check_fenced(w.cta, w, idx, name, "writes")
    machine.sanitizer.overwrite_pending_read(w.cta, w, idx, f"{name} (issued)")
    _overwrite_pending_write(w, idx, name, where)
    if sites.active():
        _watched_overwrite(w.cta, idx)
    op = machine.asyncs.issue(AsyncSharedWrite(machine.asyncs, w, np.array([lane]), where, offsets, rows, kind))
    if bar is None:
        machine.asyncs.complete(op)
        return
    mbarrier.attach(w.cta, bar, op, rows.size)


def _bulk_load(instr, scope):
    """cp.async.bulk.shared::cta|cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]."""
    mods = set(instr.modifiers)
    if any(m.startswith(".multicast") for m in mods):
        raise NotEmulated(instr.name)
    dst, src, size_node, bar, *rest = instr.operands
    dst_off = _shared_addr(scope, dst, mods)
    src_addr = scope.decoder.address(src)
    size = scope.decoder.reader(size_node, U32)
    bar_off = _shared_addr(scope, bar, mods)
    machine = scope.machine

    def run(w, m):
        lanes = np.flatnonzero(m)
        s, _ = src_addr(w, m)
        n, dsts, bars = size(w, m), dst_off(w, m), bar_off(w, m)
        where = machine.where_now(w)
        for i, lane in enumerate(lanes):
            one = np.zeros(32, bool)
            one[lane] = True
            nb = int(n[i])
            raw = machine.load(w, one, "global", np.array([s[i]], np.uint64), nb)[0] if nb else np.zeros(0, np.uint8)
            _land_via_barrier(w, lane, where, np.array([int(dsts[i])]), raw.reshape(1, -1), int(bars[i]),
                              "cp.async.bulk", instr.name)
    return run


# --- stores ---------------------------------------------------------------------------------------------
class BulkStore(AsyncOp):
    """Shared bytes copied to global memory when the bulk group that holds the copy is waited for."""

    proxy = "async"

    def __init__(self, registry, warp, lanes, where, kind, idx, sink):
        super().__init__(registry, warp, lanes, where)
        self.kind = kind
        self.idx = idx            # shared byte offsets read, in copy order
        self.sink = sink          # f(bytes): writes global memory

    def apply(self) -> None:
        cta = self.warp.cta
        m = cta.machine
        if m.asyncs.finishing:        # shared memory is released when the block ends
            m.sanitizer.report("race", f"block {cta.ctaid} ends while the {self.kind} at {self.where} still "
                               "reads shared memory (no cp.async.bulk.wait_group covers it)", self.where,
                               key=("unwaited", self.where), other=self.where)
        release_reads(cta, self, self.idx)
        self.sink(async_read(cta, self.warp, self.idx, self.kind, self.where))


def _bulk_groups(w) -> CommitGroups:
    g = getattr(w, "bulk_groups", None)
    if g is None:
        g = w.bulk_groups = CommitGroups()
    return g


def _tensor_store(instr, scope):
    mods = set(instr.modifiers)
    rank = _rank(mods)
    if rank is None or ".bulk_group" not in mods or ".im2col" in mods:
        raise NotEmulated(instr.name)
    dst, src, *rest = instr.operands
    tensor = _tensor_operand(scope, dst, rank)
    src_off = _shared_addr(scope, src, mods)
    machine = scope.machine

    def run(w, m):
        lanes = np.flatnonzero(m)
        maps, coords = tensor(w, m)
        srcs = src_off(w, m)
        where = machine.where_now(w)
        for i, lane in enumerate(lanes):
            tmap = _tensor_map(machine, w, lane, maps[i])
            idx = (tmap.shared_chunks(int(srcs[i]))[:, None] + np.arange(16)).reshape(-1)
            check_fenced(w.cta, w, idx, instr.name)
            box = coords[i].copy()

            def sink(raw, tmap=tmap, box=box):
                if tmap.write_box(box, raw):
                    machine.sanitizer.report("oob", f"{instr.name}: the box at {list(box)} writes outside "
                                             "its global buffer", where, key="tma-store-oob")
            op = BulkStore(machine.asyncs, w, np.array([lane]), where, "cp.async.bulk.tensor store", idx, sink)
            hold_reads(w.cta, op, idx)
            _bulk_groups(w).open.append(machine.asyncs.issue(op))
    return run


def _bulk_store(instr, scope):
    """cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size."""
    mods = set(instr.modifiers)
    if ".bulk_group" not in mods:
        raise NotEmulated(instr.name)
    dst, src, size_node, *rest = instr.operands
    dst_addr = scope.decoder.address(dst)
    src_off = _shared_addr(scope, src, mods)
    size = scope.decoder.reader(size_node, U32)
    machine = scope.machine

    def run(w, m):
        lanes = np.flatnonzero(m)
        d, _ = dst_addr(w, m)
        n, srcs = size(w, m), src_off(w, m)
        where = machine.where_now(w)
        for i, lane in enumerate(lanes):
            idx = int(srcs[i]) + np.arange(int(n[i]), dtype=np.int64)
            check_fenced(w.cta, w, idx, instr.name)
            one = np.zeros(32, bool)
            one[lane] = True
            addr = np.array([d[i]], np.uint64)

            def sink(raw, one=one, addr=addr, w=w):
                machine.store(w, one, "global", addr, raw.reshape(1, -1))
            op = BulkStore(machine.asyncs, w, np.array([lane]), where, "cp.async.bulk store", idx, sink)
            hold_reads(w.cta, op, idx)
            _bulk_groups(w).open.append(machine.asyncs.issue(op))
    return run


def _bulk_commit(instr, scope):
    return lambda w, m: _bulk_groups(w).commit()


def _bulk_wait(instr, scope):
    keep = constant(instr.operands[0])
    if keep is None:
        raise NotEmulated(f"{instr.name} with a register count")
    machine = scope.machine

    def run(w, m):
        groups = _bulk_groups(w)
        coverage_of(machine).wait(machine.where_now(w), instr.name, keep, len(groups.groups))
        if any(not op.done for g in groups.groups[:max(len(groups.groups) - keep, 0)] for op in g):
            sites.note(instr)
        groups.wait(machine.asyncs, keep)
    return run


def _cp(instr, scope):
    mods = instr.modifiers
    if mods[:2] != (".async", ".bulk"):
        return cp_async.HANDLERS["cp"](instr, scope)
    mset = set(mods)
    if ".commit_group" in mset:
        return _bulk_commit(instr, scope)
    if ".wait_group" in mset or ".wait_group.read" in mset:
        return _bulk_wait(instr, scope)
    if ".prefetch" in mset:
        return lambda w, m: None
    to_shared = mods[2 + (".tensor" in mset) + (_rank(mset) is not None):][:1]
    loading = bool(to_shared) and to_shared[0].startswith(".shared")
    if ".tensor" in mset:
        return (_tensor_load if loading else _tensor_store)(instr, scope)
    if loading and ".global" in mset:
        return _bulk_load(instr, scope)
    if ".global" in mset and not loading:
        return _bulk_store(instr, scope)
    raise NotEmulated(instr.name)


# --- tensor maps built on the device -----------------------------------------------------------------
def _replace(instr, scope):
    """tensormap.replace.tile.FIELD.space.b1024.bN [map], {ord,} value: one field of a map in
    shared or global memory (tensormaps.FIELDS gives where the engine keeps it)."""
    from ..tensormaps import FIELDS

    mods = instr.modifiers
    field = mods[2][1:] if len(mods) > 2 and mods[:2] == (".replace", ".tile") else None
    if field not in FIELDS:
        raise NotEmulated(instr.name)
    off, size = FIELDS[field]
    addr_node, *rest = instr.operands
    ordinal = constant(rest[0]) if len(rest) == 2 else 0
    if ordinal is None:
        raise NotEmulated(f"{instr.name} with a register ordinal")
    off += ordinal * size
    dec = scope.decoder
    read_addr = dec.address(addr_node)
    read_value = dec.reader(rest[-1], TYPES[f".b{size * 8}"])
    space = space_of(mods)
    machine = scope.machine

    def run(w, m):
        a, _ = read_addr(w, m)
        v = read_value(w, m)
        rows = np.ascontiguousarray(v.astype(np.uint64 if size == 8 else np.uint32)).view(np.uint8).reshape(-1, size)
        machine.store(w, m, space, a + np.uint64(off), rows)
    return run


def _tensormap_cp(instr, scope):
    """tensormap.cp_fenceproxy.global.shared::cta...sync.aligned [dst], [src], 128: copies the map."""
    dst, src, size_node = instr.operands
    size = constant(size_node)
    if size != 128:
        raise NotEmulated(f"{instr.name} of {size_node} bytes")
    dec = scope.decoder
    read_dst, read_src = dec.address(dst), dec.address(src)
    machine = scope.machine

    def run(w, m):
        one = np.zeros(32, bool)
        one[np.flatnonzero(m)[0]] = True         # the warp copies one map
        d, _ = read_dst(w, one)
        s_, _ = read_src(w, one)
        machine.store(w, one, "global", d, machine.load(w, one, "shared", s_, 128))
        unacquired_maps(machine).add(int(d[0]))
    return run


def _tensormap(instr, scope):
    if instr.modifiers[:1] == (".replace",):
        return _replace(instr, scope)
    if instr.modifiers[:1] == (".cp_fenceproxy",):
        return _tensormap_cp(instr, scope)
    raise NotEmulated(instr.name)


HANDLERS = {"cp": _cp, "fence": _fence, "tensormap": _tensormap}
