"""Warpgroup MMA (sm_90a): wgmma.mma_async, wgmma.fence, wgmma.commit_group, wgmma.wait_group.

Each warp of a warpgroup computes its own 16 rows of the m64nNk* product: warp w % 4 holds rows
16*(w % 4) .. +16 of D (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts" for
wgmma: lane l has g = l >> 2, t = l & 3; accumulator i of a lane is D[g + 8*((i >> 1) & 1),
8*(i >> 2) + 2*t + (i & 1)]). A comes from registers (the mma.m16n8k16 A fragment per warp) or
from a shared-memory matrix descriptor, B from a descriptor.

Matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29
leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4, 49-51 base offset,
62-63 swizzle (0 none/interleave, 1 128B, 2 64B, 3 32B). K-major and (imm-trans = 1) MN-major
layouts as in descriptor_addresses, swizzled on the address (tensormaps.swizzle, the same pattern
TMA writes).

Late completion: the operation reads its shared operands and writes its accumulator registers at
the wgmma.wait_group that covers its group. Reading or writing those registers before that is a
`wgmma` report (except as the accumulator of a following wgmma.mma_async, which the hardware
chains). Accumulation (documented choice): each product is exact in float64, the K products of
one instruction and C are summed in float64 and rounded once to f32 (round to nearest even). A
GPU rounds at least as often in an unspecified order, so per instruction the results may differ
by ~1 f32 ulp of the partial sums; over a K loop of K/k steps the difference is bounded by
(K/k) * 2**-24 * sum_k |a*b| (compare with that tolerance).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ptx2py.ptxgrammar.tree import Register, Vector

from ..asyncops import AsyncOp, CommitGroups
from ..errors import NotEmulated
from ..operands import constant
from ..sync_coverage import coverage_of
from ..tensormaps import swizzle
from ..types import TYPES
from . import sites
from .matrix import _decode, _layout_int, _layout_m16n8k16, int_elements, s32_result
from .tma import async_read, check_fenced, hold_reads, release_reads

LANE = np.arange(32)
G, T = LANE >> 2, LANE & 3
B32, U64, PRED, F32 = TYPES[".b32"], TYPES[".u64"], TYPES[".pred"], TYPES[".f32"]
DESC_SWIZZLE = {0: (0, 16), 1: (3, 128), 2: (2, 64), 3: (1, 32)}   # descriptor code -> (tensor map code, span)
INPUTS = {".f16": (2, 16), ".bf16": (2, 16), ".tf32": (4, 8), ".e4m3": (1, 32), ".e5m2": (1, 32),
          ".s8": (1, 32), ".u8": (1, 32)}  # -> (bytes, K)
INTEGER = {".s8": np.int8, ".u8": np.uint8}
(A_ROW, A_COL), _ = _layout_m16n8k16()
(A8_ROW, A8_COL), _ = _layout_int(32, 4)     # an 8-bit A from registers: mma.m16n8k32's A fragment


@lru_cache(maxsize=4096)
def descriptor_addresses(desc: int, rows: int, k: int, esize: int, mn_major: bool = False) -> np.ndarray:
    """(Read-only, cached: a K loop steps through a few descriptor values, every warp and CTA
    the same ones.) Shared byte addresses (rows, k*esize) of the operand described by `desc`: row = the M (or
    N) index, columns = the bytes of K elements. Canonical layouts (PTX ISA "Shared Memory Matrix
    Layout"; CUTLASS's GmmaDescriptor), W the swizzle span (16 B without swizzle):
      K-major:  start + (r % 8)*W + (r // 8)*SBO + kb % W + (kb // W)*LBO
      MN-major: start + (mn*es) % W + (mn*es // W)*LBO + (k % 8)*W + (k // 8)*SBO, swizzled;
                without swizzle LBO and SBO swap roles (SBO steps 16-byte MN chunks, LBO K groups).
    """
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    if (desc >> 49) & 7:
        raise NotEmulated("wgmma descriptor with a non-zero base offset")
    code, span = DESC_SWIZZLE[(desc >> 62) & 3]
    r = np.arange(rows, dtype=np.int64)[:, None]
    if not mn_major:
        kb = np.arange(k * esize, dtype=np.int64)[None, :]
        addr = start + (r // 8) * sbo + (kb // span) * lbo + (r % 8) * span + kb % span
        return _frozen(swizzle(addr, code))
    kk = np.arange(k, dtype=np.int64)[None, :]
    mb = r * esize
    mn_step, k_step = (sbo, lbo) if code == 0 else (lbo, sbo)
    base = start + mb % span + (mb // span) * mn_step + (kk % 8) * span + (kk // 8) * k_step
    addr = (base[:, :, None] + np.arange(esize)).reshape(rows, k * esize)
    return _frozen(swizzle(addr, code))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _values(raw: np.ndarray, ty: str) -> np.ndarray:
    if ty == ".f16":
        return raw.view(np.float16).astype(np.float64)
    if ty == ".bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return (raw.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)


_FP8: dict = {}


def element_values(raw: np.ndarray, ty: str) -> np.ndarray:
    """Bytes (..., esize) of elements of `ty` -> float64 (...); fp8 through the numerics' cvt
    (a 256-entry table)."""
    if ty in INTEGER:
        return raw[..., 0].view(INTEGER[ty]).astype(np.float64)
    if ty in (".e4m3", ".e5m2"):
        if ty not in _FP8:
            words = (np.arange(256, dtype=np.uint32) * 0x10001)[:, None]     # the byte in both halves
            _FP8[ty] = _decode(words, ty)[:, 0]
        return _FP8[ty][raw[..., 0]]
    return _values(np.ascontiguousarray(raw).reshape(-1), ty).reshape(raw.shape[:-1])


class WgmmaState:
    def __init__(self):
        self.groups = CommitGroups()
        self.commit_ids: list = []     # id of the commit_group that closed each group (sites.py)
        self.watches: list = []


class Watch:
    """While sites.recording: a group the last wgmma.wait_group completed. A consumer of its
    accumulators other than a following wgmma.mma_async, or a TMA write over its shared operands,
    before the warp's next wait_group marks that wait (its raised depth would leave the group
    pending) and the commit that closed the group (deleted, the group would join the next one)
    as observable."""

    def __init__(self, ids, regs, cta, reads):
        self.ids = ids
        self.regs = regs
        self.cta = cta
        self.reads = reads

    def early_access(self, w, name: str, verb: str) -> None:
        sites.note_ids(self.ids)


def _clear_watches(w, state) -> None:
    pend = w.pending_regs or {}
    for watch in state.watches:
        for r in watch.regs:
            if pend.get(r) is watch:
                del pend[r]
    state.watches = []


def _watch(w, state, ops, ids) -> None:
    if w.pending_regs is None:
        w.pending_regs = {}
    for op in ops:
        watch = Watch(ids, [r for r in op.regs if r not in w.pending_regs], w.cta, op.reads)
        for r in watch.regs:
            w.pending_regs[r] = watch
        state.watches.append(watch)


def state_of(w) -> WgmmaState:
    s = getattr(w, "wgmma", None)
    if s is None:
        s = w.wgmma = WgmmaState()
    return s


class Wgmma(AsyncOp):
    kind = "wgmma.mma_async"
    proxy = "async"

    def __init__(self, registry, warp, where, compute, regs, writers, frame):
        super().__init__(registry, warp, np.arange(32), where)
        self.compute = compute         # () -> float32 (32, nregs)
        self.regs = regs
        self.writers = writers
        self.frame = frame
        self.result = None
        self.reads = np.zeros(0, np.int64)

    def value(self) -> np.ndarray:
        if self.result is None:
            self.result = self.compute()
            release_reads(self.warp.cta, self, self.reads)
        return self.result

    def apply(self) -> None:
        w = self.warp
        out = self.value()
        pend = w.pending_regs or {}
        mine = [n for n in self.regs if pend.get(n) is self]
        for n in mine:
            del pend[n]
        if not mine or not w.stack or w.stack[-1][3] is not self.frame:
            return                     # a later wgmma owns the registers (chained) / warp gone
        full = np.ones(32, bool)
        mine = set(mine)
        columns = np.ascontiguousarray(out.T).view(np.uint32)      # one row per accumulator register
        for i, (name, wr) in enumerate(zip(self.regs, self.writers)):
            if name in mine:
                wr(w, full, columns[i])

    def early_access(self, w, name: str, verb: str) -> None:
        m = w.cta.machine
        m.sanitizer.report("wgmma", f"{verb} of accumulator register {name} of the wgmma.mma_async at "
                           f"{self.where} before the wgmma.wait_group that covers it", m.where_now(w),
                           key=(verb, self.where), register=name, other=self.where)


def _mma_async(instr, scope):
    mods = instr.modifiers
    if ".sp" in mods:
        raise NotEmulated(instr.name)
    shape = next((x for x in mods if x.startswith(".m64n")), None)
    types = [x for x in mods if x in TYPES]
    if shape is None or len(types) != 3:
        raise NotEmulated(instr.name)
    dtype, atype, btype = types
    integer = atype in INTEGER       # .s32 += s8/u8 (mixed signedness), exact, wrapped or .satfinite
    if integer:
        ok = dtype == ".s32" and btype in INTEGER
    else:
        ok = dtype == ".f32" and atype == btype and atype in INPUTS and ".satfinite" not in mods
    if not ok:
        raise NotEmulated(instr.name)
    sat = ".satfinite" in mods
    esize, k = INPUTS[atype]
    n = int(shape[5:shape.index("k")])
    if shape != f".m64n{n}k{k}":
        raise NotEmulated(instr.name)
    d, a, b, scale_d, *imms = instr.operands
    a_regs = isinstance(a, Vector)
    imm = [constant(x) for x in imms]
    transposable = atype in (".f16", ".bf16")       # only these have imm-trans operands
    if None in imm or len(imm) != (0 if integer else 2) + transposable * (1 if a_regs else 2):
        raise NotEmulated(f"{instr.name}: scale/transpose operands must be immediates")
    scale_a, scale_b = (1, 1) if integer else (imm[0], imm[1])
    trans_a, trans_b = ((0, imm[2]) if a_regs else (imm[2], imm[3])) if transposable else (0, 0)
    if not isinstance(d, Vector) or len(d.items) != n // 2:
        raise NotEmulated(f"{instr.name}: expected {n // 2} accumulator registers")
    dec = scope.decoder
    regs = [x.name for x in d.items]
    if not all(isinstance(x, Register) for x in d.items):
        raise NotEmulated(instr.name)
    readers = [dec.reader(x, F32) for x in d.items]
    writers = [dec.writer(x, F32) for x in d.items]
    read_b = dec.reader(b, U64)
    read_a = [dec.reader(x, B32) for x in a.items] if a_regs else dec.reader(a, U64)
    if a_regs and (atype not in (".f16", ".bf16", ".s8", ".u8") or len(a.items) != 4):
        raise NotEmulated(instr.name)
    sd = constant(scale_d)
    read_sd = None if sd is not None else dec.reader(scale_d, PRED)
    machine = scope.machine
    col = 8 * (np.arange(n // 2) >> 2)[None, :] + 2 * T[:, None] + (np.arange(n // 2) & 1)[None, :]
    row = G[:, None] + 8 * ((np.arange(n // 2) >> 1) & 1)[None, :]

    def one_lane(values, what, w):
        if not len(values) or (values != values[0]).any():
            raise NotEmulated(f"{instr.name} with a {what} descriptor that differs across lanes")
        return int(values[0])

    def run(w, m):
        if not m.all():
            raise NotEmulated(f"{instr.name} with inactive lanes (.aligned needs the whole warp)")
        cta = w.cta
        where = machine.where_now(w)
        part = w.index % 4
        bdesc = one_lane(read_b(w, m), "B", w)
        b_idx = descriptor_addresses(bdesc, n, k, esize, bool(trans_b))   # (n, k*esize)
        check_fenced(cta, w, b_idx.reshape(-1), instr.name)
        if a_regs:
            words = np.stack([r(w, m) for r in read_a], 1)
            A = np.zeros((16, k))
            if integer:
                A[A8_ROW, A8_COL] = int_elements(words, atype)
            else:
                A[A_ROW, A_COL] = _decode(words, atype)
            a_idx = None
        else:
            adesc = one_lane(read_a(w, m), "A", w)
            a_idx = descriptor_addresses(adesc, 64, k, esize, bool(trans_a))[16 * part: 16 * part + 16]
            check_fenced(cta, w, a_idx.reshape(-1), instr.name)
        use_c = bool(sd) if sd is not None else bool(read_sd(w, m)[0])
        pend = w.pending_regs or {}
        for r in regs:                   # a following wgmma is no consumer a watch looks for
            if isinstance(pend.get(r), Watch):
                del pend[r]
        owners = {pend.get(r) for r in regs}
        if owners == {None}:
            c_now = np.stack([r(w, m) for r in readers], 1).view(np.int32 if integer else np.float32) \
                if use_c else None
            chained = None
        elif len(owners) == 1:
            chained, c_now = owners.pop(), None
        else:
            raise NotEmulated(f"{instr.name}: accumulators partly owned by different pending wgmma")

        def compute(A=None if not a_regs else A, a_idx=a_idx, b_idx=b_idx, chained=chained,
                    c_now=c_now, where=where):
            with np.errstate(all="ignore"):
                if A is None:
                    A = element_values(async_read(cta, w, a_idx.reshape(-1), instr.name, where)
                                       .reshape(16, k, esize), atype)
                Bt = element_values(async_read(cta, w, b_idx.reshape(-1), instr.name, where)
                                    .reshape(n, k, esize), btype)                     # (n, k)
                D = (A * scale_a) @ (Bt.T * scale_b)                                  # (16, n)
                frag = D[row, col]
                if use_c:
                    c = chained.value() if chained is not None else c_now
                    frag = frag + c.astype(np.float64)
                if integer:          # every product and sum is an integer below 2^53: exact in float64
                    return s32_result(frag.astype(np.int64), sat).view(np.int32)
                return frag.astype(np.float32)

        op = machine.asyncs.issue(Wgmma(machine.asyncs, w, where, compute, regs, writers, w.stack[-1][3]))
        op.reads = b_idx.reshape(-1) if a_idx is None else np.concatenate([a_idx.reshape(-1), b_idx.reshape(-1)])
        hold_reads(cta, op, op.reads)
        if w.pending_regs is None:
            w.pending_regs = {}
        for r in regs:
            w.pending_regs[r] = op
        state_of(w).groups.open.append(op)
    return run


def _fence(instr, scope):
    return lambda w, m: None


def _commit(instr, scope):
    def run(w, m):
        state = state_of(w)
        state.groups.commit()
        state.commit_ids.append(id(instr))
    return run


def _wait(instr, scope):
    keep = constant(instr.operands[0])
    if keep is None:
        raise NotEmulated(f"{instr.name} with a register count")
    machine = scope.machine

    def run(w, m):
        state = state_of(w)
        groups = state.groups
        coverage_of(machine).wait(machine.where_now(w), instr.name, keep, len(groups.groups))
        done = max(len(groups.groups) - keep, 0)
        watched = []
        if sites.active():
            _clear_watches(w, state)
            if done:                     # the group a depth of keep+1 would leave pending
                watched = [op for op in groups.groups[done - 1] if not op.done]
                ids = (id(instr), state.commit_ids[done - 1])
        groups.wait(machine.asyncs, keep)
        state.commit_ids = state.commit_ids[done:]
        if watched:
            _watch(w, state, watched, ids)
    return run


_FORMS = {".mma_async": _mma_async, ".fence": _fence, ".commit_group": _commit, ".wait_group": _wait}


def _wgmma(instr, scope):
    factory = _FORMS.get(instr.modifiers[0] if instr.modifiers else "")
    if factory is None:
        raise NotEmulated(instr.name)
    return factory(instr, scope)


def _setmaxnreg(instr, scope):
    """setmaxnreg.inc/dec.sync.aligned.u32 N (warpgroup register reallocation): N checked as the
    ISA requires (a multiple of 8 in [24, 256]); no effect on the engine's registers."""
    n = constant(instr.operands[0]) if instr.operands else None
    if n is None or n % 8 or not 24 <= n <= 256 or not {".inc", ".dec"} & set(instr.modifiers):
        raise NotEmulated(f"{instr.name} with register count {n}")
    return lambda w, m: None


HANDLERS = {"wgmma": _wgmma, "setmaxnreg": _setmaxnreg}
