"""Blackwell tensor memory and MMA (sm_100a, cta_group::1): tcgen05.alloc/dealloc/
relinquish_alloc_permit, tcgen05.mma (kind::f16, tf32, f8f6f4 with e4m3/e5m2, i8), tcgen05.commit
(mbarrier::arrive::one), tcgen05.ld/st (32x32b shape), tcgen05.wait::ld/st, tcgen05.fence.

Tensor memory (PTX ISA, "Tensor Memory"): per CTA 128 lanes x 512 columns of 32-bit cells; an
address holds the lane in bits 31-16 and the column in bits 15-0. alloc writes the address of
its first column to shared memory; warp w % 4 may access lanes 32*(w % 4) .. +32. Accesses to
columns not allocated, and a CTA that ends with columns still allocated, are `tmem` reports.

tcgen05.mma: D (f32 in tensor memory) = A x B (+ D when enable-input-d), A and B from shared
memory descriptors (tcgen05 format: start >> 4 at bits 0-13, LBO >> 4 at 16-29, SBO >> 4 at
32-45, version 1 at 46-48, base offset 49-51, swizzle at 61-63: 0 none, 2 128B, 4 64B, 6 32B;
canonical layouts as wgmma.descriptor_addresses), the instruction descriptor decoded as the ISA's
"Instruction descriptor" table (dtype bits 4-5, atype 7-9, btype 10-12, negate A/B 13/14,
transpose A/B 15/16, N >> 3 at 17-22, M >> 4 at 24-28). M = 128: row m is lane m; M = 64: row m
is lane 32*(m // 16) + m % 16. Accumulation as wgmma (float64 sum of exact products, one f32
rounding per instruction).

Late completion: an mma runs when the tcgen05.commit that tracks it completes, i.e. when a
wait observes the mbarrier phase the commit's arrive completes (reading shared memory then;
cells it writes read as stale, with an `async-read` report, before that). tcgen05.ld and
tcgen05.st complete at once: Triton's sm_100 code reads tcgen05.ld destinations before its
tcgen05.wait::ld (ptxas orders the register dependency), so a late register write would flag
correct production kernels; wait::ld/st have no effect.
"""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import Address, Vector

from ..asyncops import CTA_END, AsyncOp
from ..errors import NotEmulated
from ..operands import constant
from ..types import TYPES
from . import mbarrier
from .matrix import s32_result
from .tma import async_read, check_fenced, hold_reads, release_reads
from .wgmma import INPUTS, descriptor_addresses, element_values

LANES, COLUMNS = 128, 512
U32, U64, PRED, B32 = TYPES[".u32"], TYPES[".u64"], TYPES[".pred"], TYPES[".b32"]
TC_SWIZZLE = {0: 0, 2: 1, 4: 2, 6: 3}        # tcgen05 descriptor code -> wgmma descriptor code
KINDS = {"kind::f16": ({0: ".f16", 1: ".bf16"}, 16), "kind::tf32": ({2: ".tf32"}, 8),
         "kind::f8f6f4": ({0: ".e4m3", 1: ".e5m2"}, 32), "kind::i8": ({0: ".u8", 1: ".s8"}, 32)}
D_TYPE = {"kind::i8": 2}         # instruction descriptor bits 4-5: 1 = f32, 2 = s32 (integer kinds)


class TensorMemory:
    def __init__(self):
        self.cells = np.zeros((LANES, COLUMNS), np.uint32)
        self.allocated = np.zeros(COLUMNS, bool)
        self.pending = np.full((LANES, COLUMNS), -1, np.int64)
        self.issued: list = []                     # tcgen05.mma ops not yet performed, in issue order
        self.readers = np.full((LANES, COLUMNS), -1, np.int64)   # a pending mma reads A here
        self.where: dict[int, str] = {}            # first column -> where allocated


def tmem_of(cta) -> TensorMemory:
    t = getattr(cta, "tmem", None)
    if t is None:
        t = cta.tmem = TensorMemory()
    return t


def _split(addr: int) -> tuple[int, int]:
    return (addr >> 16) & 0xFFFF, addr & 0xFFFF


def _check_columns(w, tm, cols, what) -> bool:
    cols = np.asarray(cols)
    bad = (cols < 0) | (cols >= COLUMNS)
    ok = ~bad
    bad[ok] |= ~tm.allocated[cols[ok]]
    if bad.any():
        m = w.cta.machine
        m.sanitizer.report("tmem", f"{what} accesses tensor memory column {int(cols[bad][0])}, which is "
                           "not allocated", m.where_now(w), key=what)
        return False
    return True


def tc_descriptor_addresses(desc: int, rows: int, k: int, esize: int, mn_major: bool) -> np.ndarray:
    if (desc >> 46) & 7 != 1:
        raise NotEmulated("tcgen05 shared memory descriptor without version 1 at bits 46-48")
    if (desc >> 52) & 1:
        raise NotEmulated("tcgen05 descriptor with the absolute LBO mode")
    code = (desc >> 61) & 7
    if code not in TC_SWIZZLE:
        raise NotEmulated(f"tcgen05 descriptor swizzle mode {code}")
    wg = desc & ~(7 << 61) & ~(7 << 46) | (TC_SWIZZLE[code] << 62)     # the wgmma format
    return descriptor_addresses(wg, rows, k, esize, mn_major)


class TcgenMma(AsyncOp):
    kind = "tcgen05.mma"
    proxy = "async"

    def __init__(self, registry, warp, where, run, reads):
        super().__init__(registry, warp, np.arange(32), where)
        self.run = run
        self.reads = reads

    def apply(self) -> None:
        """tcgen05.mma operations are performed in issue order (PTX ISA "tcgen05 Memory
        Consistency Model": mma -> mma is a pipelined pair), so the earlier ones go first."""
        tm = tmem_of(self.warp.cta)
        idx = next((i for i, op in enumerate(tm.issued) if op is self), None)
        if idx is not None:
            earlier, tm.issued = tm.issued[:idx], tm.issued[idx + 1:]
            for op in earlier:
                self.warp.cta.machine.asyncs.complete(op)
        release_reads(self.warp.cta, self, self.reads)
        self.run()


class TcgenCommit(AsyncOp):
    kind = "tcgen05.commit"
    proxy = "async"

    def __init__(self, registry, warp, where, ops):
        super().__init__(registry, warp, np.arange(32), where)
        self.ops = ops

    def apply(self) -> None:
        for op in self.ops:
            self.warp.cta.machine.asyncs.complete(op)


def _lanes_of_rows(m: int) -> np.ndarray:
    r = np.arange(m)
    if m == 128:
        return r
    if m == 64:
        return 32 * (r // 16) + r % 16
    raise NotEmulated(f"tcgen05.mma with M = {m}")


def _mma(instr, scope):
    mods = instr.modifiers
    kind = next((x[1:] for x in mods if x.startswith(".kind::")), None)
    if ".cta_group::1" not in mods or kind not in KINDS or len(instr.operands) != 5 or ".ws" in mods:
        raise NotEmulated(instr.name)
    types, k = KINDS[kind]
    d, a, b, idesc, enable = instr.operands
    if not isinstance(d, Address):
        raise NotEmulated(instr.name)
    a_tmem = isinstance(a, Address)
    dec = scope.decoder
    read_d = dec.address(d)
    a_addr = dec.address(a) if a_tmem else None
    read_a = (lambda w, m: a_addr(w, m)[0]) if a_tmem else dec.reader(a, U64)
    read_b = dec.reader(b, U64)
    read_i = dec.reader(idesc, U32)
    en = constant(enable)
    read_en = None if en is not None else dec.reader(enable, PRED)
    machine = scope.machine

    def run(w, m):
        cta = w.cta
        tm = tmem_of(cta)
        where = machine.where_now(w)
        for i, lane in enumerate(np.flatnonzero(m)):
            daddr, _ = read_d(w, m)
            adesc, bdesc, idw = int(read_a(w, m)[i]), int(read_b(w, m)[i]), int(read_i(w, m)[i])
            use_d = bool(en) if en is not None else bool(read_en(w, m)[i])
            dtype, at, bt = (idw >> 4) & 3, (idw >> 7) & 7, (idw >> 10) & 7
            integer = kind in D_TYPE      # s32 += u8/s8 exactly; descriptor bit 3 saturates
            if dtype != D_TYPE.get(kind, 1) or at not in types or bt not in types or idw & 0b111 \
                    or integer and idw >> 13 & 3:
                raise NotEmulated(f"{instr.name} with instruction descriptor {idw:#x} (f32 or, for kind::i8, "
                                  "s32 accumulators, dense, A/B types of the kind, no negation of integers)")
            sat = bool(idw >> 3 & 1)
            atype, btype = types[at], types[bt]
            neg_a, neg_b = -1.0 if idw >> 13 & 1 else 1.0, -1.0 if idw >> 14 & 1 else 1.0
            ta, tb = bool(idw >> 15 & 1), bool(idw >> 16 & 1)
            n, mm = ((idw >> 17) & 63) * 8, ((idw >> 24) & 31) * 16
            rows = _lanes_of_rows(mm)
            lane0, col0 = _split(int(daddr[i]))
            cols = col0 + np.arange(n)
            if not _check_columns(w, tm, cols, instr.name):
                continue
            ea, eb = INPUTS[atype][0], INPUTS[btype][0]
            b_idx = tc_descriptor_addresses(bdesc, n, k, eb, tb)
            if a_tmem:                   # A (M x K) in tensor memory: 4/ea elements a cell, low first
                _, a_col = _split(adesc)
                a_cells = (rows[:, None], a_col + np.arange(k * ea // 4)[None, :])
                if not _check_columns(w, tm, a_cells[1].reshape(-1), instr.name):
                    continue
                a_idx = None
                reads = b_idx.reshape(-1)
            else:
                a_cells = None
                a_idx = tc_descriptor_addresses(adesc, mm, k, ea, ta)
                reads = np.concatenate([a_idx.reshape(-1), b_idx.reshape(-1)])
            check_fenced(cta, w, reads, instr.name)

            def compute(a_idx=a_idx, b_idx=b_idx, rows=rows, cols=cols, use_d=use_d, atype=atype,
                        btype=btype, neg_a=neg_a, neg_b=neg_b, mm=mm, n=n, ea=ea, eb=eb, where=where,
                        a_cells=a_cells, integer=integer, sat=sat):
                with np.errstate(all="ignore"):
                    if a_cells is not None:
                        raw = np.ascontiguousarray(tm.cells[a_cells]).view(np.uint8).reshape(mm, k, ea)
                    else:
                        raw = async_read(cta, w, a_idx.reshape(-1), instr.name, where).reshape(mm, k, ea)
                    A = element_values(raw, atype) * neg_a
                    B = element_values(async_read(cta, w, b_idx.reshape(-1), instr.name, where)
                                       .reshape(n, k, eb), btype) * neg_b
                    D = A @ B.T
                    if integer:        # integers below 2^53: float64 is exact
                        if use_d:
                            D = D + tm.cells[np.ix_(rows, cols)].view(np.int32)
                        tm.cells[np.ix_(rows, cols)] = s32_result(D.astype(np.int64), sat)
                    else:
                        if use_d:
                            D = D + tm.cells[np.ix_(rows, cols)].view(np.float32)
                        tm.cells[np.ix_(rows, cols)] = D.astype(np.float32).view(np.uint32)
                sub = tm.pending[np.ix_(rows, cols)]
                tm.pending[np.ix_(rows, cols)] = np.where(sub == op_ref[0].id, -1, sub)
                if a_cells is not None:
                    held = tm.readers[a_cells]
                    tm.readers[a_cells] = np.where(held == op_ref[0].id, -1, held)

            op_ref = []
            op = machine.asyncs.issue(TcgenMma(machine.asyncs, w, where, compute, reads))
            op_ref.append(op)
            hold_reads(cta, op, reads)
            tm.pending[np.ix_(rows, cols)] = op.id
            if a_cells is not None:
                tm.readers[a_cells] = op.id
            tm.issued.append(op)
    return run


def _commit(instr, scope):
    mods = instr.modifiers
    if ".cta_group::1" not in mods or ".mbarrier::arrive::one" not in mods or len(instr.operands) != 1:
        raise NotEmulated(instr.name)
    offsets = mbarrier.shared_offsets(scope.decoder.address(instr.operands[0]), "shared")
    machine = scope.machine

    def run(w, m):
        for off in offsets(w, m):
            # the barrier tracks every prior tcgen05.mma of the thread (PTX ISA tcgen05.commit)
            ops = [op for op in tmem_of(w.cta).issued if op.warp is w and not op.done]
            op = machine.asyncs.issue(TcgenCommit(machine.asyncs, w, machine.where_now(w), ops))
            bar = mbarrier.lookup(w, off, instr.name)
            if bar is None:
                machine.asyncs.complete(op)
                continue
            mbarrier.attach(w.cta, bar, op, 0)
            phase = mbarrier.arrive(w.cta, bar, 1)
            if ops:
                mbarrier.record_arrival(bar, phase, instr)
    return run


def _alloc(instr, scope):
    mods = instr.modifiers
    if ".cta_group::1" not in mods:
        raise NotEmulated(instr.name)
    dst, ncols_node = instr.operands
    read_ncols = _column_count(instr, scope, ncols_node)
    offsets = mbarrier.shared_offsets(scope.decoder.address(dst), "shared")
    machine = scope.machine

    def run(w, m):
        ncols = read_ncols(w, m)
        if ncols is None:
            return
        tm = tmem_of(w.cta)
        free = next((c for c in range(0, COLUMNS, ncols) if not tm.allocated[c: c + ncols].any()), None)
        if free is None:
            raise NotEmulated(f"{instr.name}: tensor memory exhausted (the engine does not block)")
        tm.allocated[free: free + ncols] = True
        tm.where[free] = machine.where_now(w)
        lane = int(np.flatnonzero(m)[0])
        one = np.zeros(32, bool)
        one[lane] = True
        at = offsets(w, m)[0]
        machine.store(w, one, "shared", np.array([at], np.uint64),
                      np.array([free], np.uint32).view(np.uint8).reshape(1, 4))
        # The address is written by the tensor-memory allocator, not a generic-proxy store: a TMA
        # load may reuse the word without fence.proxy.async (Triton's sm_100 kernels do).
        unfenced = getattr(getattr(w.cta, "shadow", None), "unfenced", None)
        if unfenced is not None:
            unfenced[int(at): int(at) + 4] = False
    return run


def _column_count(instr, scope, node):
    """f(w, m) -> the column count of alloc/dealloc (an immediate or a register, one value for
    the warp: PTX ISA tcgen05.alloc, a power of 2 in [32, 512]), None after a `tmem` report."""
    value = constant(node)
    read = None if value is not None else scope.decoder.reader(node, U32)

    def count(w, m):
        values = {value} if read is None else {int(v) for v in read(w, m)}
        n = values.pop() if len(values) == 1 else -1
        if n < 32 or n > COLUMNS or n & (n - 1):
            machine = w.cta.machine
            machine.sanitizer.report("tmem", f"{instr.name} of {sorted(values | {n})} columns: the count must "
                                     "be one power of 2 in [32, 512] for the warp", machine.where_now(w))
            return None
        return n
    return count


def _dealloc(instr, scope):
    taddr, ncols_node = instr.operands
    read_ncols = _column_count(instr, scope, ncols_node)
    read = scope.decoder.reader(taddr, U32)

    def run(w, m):
        ncols = read_ncols(w, m)
        if ncols is None:
            return
        tm = tmem_of(w.cta)
        _, col = _split(int(read(w, m)[0]))
        if _check_columns(w, tm, np.arange(col, col + ncols), instr.name):
            tm.allocated[col: col + ncols] = False
            tm.where.pop(col, None)
    return run


def _shape_lanes(instr, w, lane_field, lanes_per_access=32):
    """The first lane an access covers: the warp's sub-partition (32*(w % 4), 32 lanes) must
    hold it, starting at a multiple of the access's lane count."""
    base = 32 * (w.index % 4)
    if lane_field not in range(base, base + 32, lanes_per_access):
        m = w.cta.machine
        m.sanitizer.report("tmem", f"{instr.name} by warp {w.index} addresses lanes from {lane_field}; "
                           f"the warp may only access lanes {base}..{base + 31}, from a multiple of {lanes_per_access}",
                           m.where_now(w), key="lanes")
    return lane_field if base <= lane_field < base + 32 else base


def _ldst_shape(instr, split_at: int):
    """(repetitions, half-split offset or None) of a 32x32b or 16x32bx2 access (the offset is
    operand `split_at`)."""
    mods = instr.modifiers
    reps = next((int(x[2:]) for x in mods if x.startswith(".x") and x[2:].isdigit()), None)
    if reps is None or ".pack::16b" in mods or ".unpack::16b" in mods:
        raise NotEmulated(instr.name)
    if ".32x32b" in mods:
        return reps, None
    if ".16x32bx2" in mods:
        split = constant(instr.operands[split_at]) if len(instr.operands) == 3 else None
        if split is None:
            raise NotEmulated(f"{instr.name} without an immediate half-split offset")
        return reps, split
    raise NotEmulated(instr.name)


def _cells(instr, w, taddr, reps, split):
    """(lanes (32, 1), columns (32, reps)) each thread of the warp accesses: 32x32b: thread i is
    lane i, register j column j; 16x32bx2: threads 0-15 and 16-31 both cover lanes 0-15, the
    second half `split` columns further (PTX ISA "Matrix fragments for tcgen05.ld/st")."""
    lane_field, col = _split(taddr)
    base = _shape_lanes(instr, w, lane_field, 32 if split is None else 16)
    t = np.arange(32)
    if split is None:
        lanes, cols = base + t, np.broadcast_to(col + np.arange(reps), (32, reps))
    else:
        lanes = base + t % 16
        cols = col + (t // 16)[:, None] * split + np.arange(reps)[None, :]
    return lanes[:, None], cols


class TmemLoad(AsyncOp):
    kind = "tcgen05.ld"

    def __init__(self, registry, warp, where, regs, writers, lanes, cols):
        super().__init__(registry, warp, np.arange(32), where)
        self.regs, self.writers, self.lanes, self.cols = regs, writers, lanes, cols

    def apply(self) -> None:
        w = self.warp
        tm = tmem_of(w.cta)
        sub = (self.lanes, self.cols)
        if (tm.pending[sub] >= 0).any():
            op = w.cta.machine.async_op(int(tm.pending[sub][tm.pending[sub] >= 0][0]))
            w.cta.machine.sanitizer.report(
                "async-read", f"tcgen05.ld at {self.where} reads tensor memory the {op.kind} at {op.where} "
                "writes before a wait observed its commit", self.where, key=("tmem", op.where))
        vals = tm.cells[sub]
        full = np.ones(32, bool)
        for j, wr in enumerate(self.writers):
            wr(w, full, vals[:, j].copy())


def _ld(instr, scope):
    reps, split = _ldst_shape(instr, 2)
    dest, addr = instr.operands[:2]
    items = dest.items if isinstance(dest, Vector) else (dest,)
    if len(items) != reps:
        raise NotEmulated(instr.name)
    dec = scope.decoder
    read_addr = dec.address(addr)
    writers = [dec.writer(x, B32) for x in items]
    regs = [x.name for x in items]
    machine = scope.machine

    def run(w, m):
        if not m.all():
            raise NotEmulated(f"{instr.name} with inactive lanes (.aligned needs the whole warp)")
        lanes, cols = _cells(instr, w, int(read_addr(w, m)[0][0]), reps, split)
        if not _check_columns(w, tmem_of(w.cta), cols.reshape(-1), instr.name):
            return
        op = machine.asyncs.issue(TmemLoad(machine.asyncs, w, machine.where_now(w), regs, writers, lanes, cols))
        machine.asyncs.complete(op)     # registers at once (see the module doc)
    return run


def _st(instr, scope):
    reps, split = _ldst_shape(instr, 1)
    addr, src = instr.operands[0], instr.operands[-1]
    items = src.items if isinstance(src, Vector) else (src,)
    if len(items) != reps:
        raise NotEmulated(instr.name)
    dec = scope.decoder
    read_addr = dec.address(addr)
    readers = [dec.reader(x, B32) for x in items]

    def run(w, m):
        if not m.all():
            raise NotEmulated(f"{instr.name} with inactive lanes (.aligned needs the whole warp)")
        lanes, cols = _cells(instr, w, int(read_addr(w, m)[0][0]), reps, split)
        tm = tmem_of(w.cta)
        if _check_columns(w, tm, cols.reshape(-1), instr.name):
            _overwrite_pending(w, tm, lanes, cols, instr.name)
            tm.cells[lanes, cols] = np.stack([r(w, m) for r in readers], 1).astype(np.uint32)
    return run


def _overwrite_pending(w, tm, lanes, cols, name) -> None:
    """tcgen05.st into cells a pending tcgen05.mma still writes (its D) or reads (its A from
    tensor memory): the mma may see, or overwrite, either value."""
    for table, verb in ((tm.pending, "writes"), (tm.readers, "reads")):
        held = table[lanes, cols]
        if (held >= 0).any():
            m = w.cta.machine
            op = m.async_op(int(held[held >= 0][0]))
            if not op.done:
                m.sanitizer.report("race", f"{name} writes tensor memory the {op.kind} at {op.where} still "
                                   f"{verb} (before a wait observed its commit)", m.where_now(w),
                                   key=("tmem-war", op.where), other=op.where)
                return


def _wait(instr, scope):

    return lambda w, m: None


def _nothing(instr, scope):
    return lambda w, m: None


def finish(cta) -> None:
    """A CTA that ends with tensor memory allocated (the ISA requires dealloc before exit)."""
    tm = getattr(cta, "tmem", None)
    if tm is not None and tm.where:
        col, where = next(iter(tm.where.items()))
        cta.machine.sanitizer.report("tmem", f"block {cta.ctaid} ends with tensor memory columns from {col} "
                                     "still allocated (no tcgen05.dealloc)", where, key="leak")


_FORMS = {".alloc": _alloc, ".dealloc": _dealloc, ".relinquish_alloc_permit": _nothing, ".mma": _mma,
          ".commit": _commit, ".ld": _ld, ".st": _st, ".wait::ld": _wait, ".wait::st": _wait,
          ".fence::before_thread_sync": _nothing, ".fence::after_thread_sync": _nothing}


def _tcgen05(instr, scope):
    factory = _FORMS.get(instr.modifiers[0] if instr.modifiers else "")
    if factory is None:
        raise NotEmulated(instr.name)
    return factory(instr, scope)


HANDLERS = {"tcgen05": _tcgen05}
CTA_END.append(finish)
