"""Warp-level matrix instructions of sm_80: ldmatrix (shared -> fragments) and mma.sync.

Fragment layouts follow the PTX ISA, "Matrix fragments for mma.m16n8k*" (9.7.14.5) and
"ldmatrix" (9.7.14.5.15): lane l has groupID g = l >> 2 and thread-in-group t = l & 3.

mma.sync accumulation (documented choice): every product is exact (f16/bf16/tf32/e4m3 inputs
are exact in float64), D = C + sum_k A[m,k]·B[k,n] is summed in float64 in k order and rounded
once to f32 (round to nearest even). Hardware accumulates with at least f32 precision in an
unspecified order, so results can differ from a GPU's in the last bits; compare with a
tolerance of a few f32 ulps times K.
"""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import Address, Vector

from ..errors import NotEmulated
from ..types import TYPES
from .common import space_of

LANE = np.arange(32)
G, T = LANE >> 2, LANE & 3
B32 = TYPES[".b32"]


# --- ldmatrix ---------------------------------------------------------------------------------------
def _m8n8_form(instr, scope, regs, addr_node):
    """(matrices, .trans, the register items, the address reader, the state space) of an
    ldmatrix/stmatrix `.m8n8.x1/.x2/.x4{.trans}.b16`; any other form is refused."""
    mods = set(instr.modifiers)
    num = next((n for m, n in ((".x1", 1), (".x2", 2), (".x4", 4)) if m in mods), None)
    if ".m8n8" not in mods or ".b16" not in mods or num is None:
        raise NotEmulated(instr.name)
    items = regs.items if isinstance(regs, Vector) else (regs,)
    if len(items) != num or not isinstance(addr_node, Address):
        raise NotEmulated(instr.name)
    space = space_of(instr.modifiers)
    return num, ".trans" in mods, items, scope.decoder.address(addr_node), "shared" if space == "generic" else space


def _ldmatrix(instr, scope):
    dest, addr_node = instr.operands
    num, trans, items, address, space = _m8n8_form(instr, scope, dest, addr_node)
    writers = [scope.decoder.writer(item, B32) for item in items]
    machine = scope.machine

    def run(w, m):
        if not m.all():
            raise NotEmulated(f"{instr.name} with inactive lanes (.aligned needs the whole warp)")
        addrs, _ = address(w, m)
        providers = np.zeros(32, bool)
        providers[: 8 * num] = True
        rows = machine.load(w, providers, space, addrs[: 8 * num], 16).reshape(num, 8, 16)
        for i, wr in enumerate(writers):
            mat = rows[i]                                       # 8 rows x 16 bytes (8 b16 each)
            if not trans:                                       # row g, elements 2t, 2t+1
                word = mat[G[:, None], 4 * T[:, None] + np.arange(4)]
            else:                                               # column g, rows 2t, 2t+1
                word = np.stack([mat[2 * T, 2 * G], mat[2 * T, 2 * G + 1],
                                 mat[2 * T + 1, 2 * G], mat[2 * T + 1, 2 * G + 1]], axis=1)
            wr(w, m, np.ascontiguousarray(word).view(np.uint32).reshape(-1))
    return run


def _stmatrix(instr, scope):
    """stmatrix.sync.aligned.m8n8.x1/x2/x4{.trans}.shared.b16 [addr], {r...}: the inverse of
    ldmatrix (PTX ISA, "stmatrix"): lanes 8i..8i+7 give the row addresses of matrix i."""
    addr_node, src = instr.operands
    num, trans, items, address, space = _m8n8_form(instr, scope, src, addr_node)
    readers = [scope.decoder.reader(item, B32) for item in items]
    machine = scope.machine

    def run(w, m):
        if not m.all():
            raise NotEmulated(f"{instr.name} with inactive lanes (.aligned needs the whole warp)")
        addrs, _ = address(w, m)
        rows = np.zeros((num, 8, 16), np.uint8)
        for i, rd in enumerate(readers):
            word = np.ascontiguousarray(rd(w, m).astype(np.uint32)).view(np.uint8).reshape(32, 4)
            if not trans:
                rows[i][G[:, None], 4 * T[:, None] + np.arange(4)] = word
            else:
                rows[i][2 * T, 2 * G], rows[i][2 * T, 2 * G + 1] = word[:, 0], word[:, 1]
                rows[i][2 * T + 1, 2 * G], rows[i][2 * T + 1, 2 * G + 1] = word[:, 2], word[:, 3]
        providers = np.zeros(32, bool)
        providers[: 8 * num] = True
        machine.store(w, providers, space, addrs[: 8 * num], rows.reshape(8 * num, 16))
    return run


# --- mma.sync ---------------------------------------------------------------------------------------
def _layout_m16n8k16():
    """(A (row, col) per element, B (k, n), elements per register) for 16-bit inputs."""
    ia, ib = np.arange(8), np.arange(4)
    a = (G[:, None] + 8 * ((ia >> 1) & 1), 2 * T[:, None] + (ia & 1) + 8 * (ia >> 2))
    b = (2 * T[:, None] + (ib & 1) + 8 * (ib >> 1), np.broadcast_to(G[:, None], (32, 4)))
    return a, b


def _layout_m16n8k8_16():
    ia, ib = np.arange(4), np.arange(2)
    a = (G[:, None] + 8 * (ia >> 1), 2 * T[:, None] + (ia & 1))
    b = (2 * T[:, None] + ib, np.broadcast_to(G[:, None], (32, 2)))
    return a, b


def _layout_m16n8k8_tf32():
    ia, ib = np.arange(4), np.arange(2)
    a = (G[:, None] + 8 * (ia & 1), T[:, None] + 4 * (ia >> 1))
    b = (T[:, None] + 4 * ib, np.broadcast_to(G[:, None], (32, 2)))
    return a, b


def _layout_m16n8k32_8():
    ia, ib = np.arange(16), np.arange(8)
    a = (G[:, None] + 8 * ((ia >> 2) & 1), 4 * T[:, None] + (ia & 3) + 16 * (ia >> 3))
    b = (4 * T[:, None] + (ib & 3) + 16 * (ib >> 2), np.broadcast_to(G[:, None], (32, 8)))
    return a, b


def _layout_int(k: int, per_reg: int):
    """8-bit (per_reg 4) and 4-bit (per_reg 8) integer inputs of m16n8k16/k32/k64 (PTX ISA,
    "Matrix Fragments for mma.m16n8k16/k32/k64" with .s8/.u8/.s4/.u4): A's element i of a lane
    is row groupID (+8 for the second group of per_reg elements of each 2*per_reg), column
    threadID_in_group*per_reg + i % per_reg (+ 4*per_reg for each further half of K); B's
    element i is row threadID_in_group*per_reg + i % per_reg (+ 4*per_reg per half), column
    groupID."""
    na, nb = k // 2, k // 4                   # A elements per lane (16*k/32), B (8*k/32)
    ia, ib = np.arange(na), np.arange(nb)
    half = 4 * per_reg                        # K columns one group of threads covers
    a = (G[:, None] + 8 * ((ia // per_reg) & 1), per_reg * T[:, None] + ia % per_reg + half * (ia // (2 * per_reg)))
    b = (per_reg * T[:, None] + ib % per_reg + half * (ib // per_reg), np.broadcast_to(G[:, None], (32, nb)))
    return a, b


# (shape, input type) -> (K, layout)
INT_INPUTS = {".s8": (8, True), ".u8": (8, False), ".s4": (4, True), ".u4": (4, False)}   # bits, signed
LAYOUTS = {
    **{(f".m16n8k{k}", t): (k, _layout_int(k, 4)) for k in (16, 32) for t in (".s8", ".u8")},
    **{(f".m16n8k{k}", t): (k, _layout_int(k, 8)) for k in (32, 64) for t in (".s4", ".u4")},
    (".m16n8k16", ".f16"): (16, _layout_m16n8k16()), (".m16n8k16", ".bf16"): (16, _layout_m16n8k16()),
    (".m16n8k8", ".f16"): (8, _layout_m16n8k8_16()), (".m16n8k8", ".bf16"): (8, _layout_m16n8k8_16()),
    (".m16n8k8", ".tf32"): (8, _layout_m16n8k8_tf32()),
    (".m16n8k32", ".e4m3"): (32, _layout_m16n8k32_8()), (".m16n8k32", ".e5m2"): (32, _layout_m16n8k32_8()),
}
_IC = np.arange(4)
C_ROW, C_COL = G[:, None] + 8 * (_IC >> 1), 2 * T[:, None] + (_IC & 1)


def _decode(words, ty):
    """Registers (32, nregs) of packed inputs -> float64 elements (32, nregs * per)."""
    if ty in (".f16", ".bf16"):
        halves = words.astype(np.uint32)[:, :, None] >> np.array([0, 16], np.uint32)
        halves = (halves & 0xFFFF).astype(np.uint16).reshape(len(words), -1)
        if ty == ".f16":
            return halves.view(np.float16).astype(np.float64)
        return (halves.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if ty == ".tf32":
        return (words.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    from .alu import _numerics

    alu, _ = _numerics()
    pairs = (words.astype(np.uint32)[:, :, None] >> np.array([0, 16], np.uint32)) & 0xFFFF
    pairs = pairs.astype(np.uint16).reshape(-1)
    f16x2 = alu["cvt"](frozenset({".rn", ".f16x2", ty + "x2"}), (".f16x2", ty + "x2"), pairs)
    halves = np.asarray(f16x2, np.uint32)[:, None] >> np.array([0, 16], np.uint32)
    return (halves & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64).reshape(len(words), -1)


def _mma(instr, scope):
    mods = instr.modifiers
    shape = next((m for m in mods if m.startswith(".m") and "n" in m and "k" in m), None)
    types = [m for m in mods if m in TYPES or m in INT_INPUTS]      # .s4/.u4 are no register types
    if ".sp" in mods or ".row" not in mods or ".col" not in mods or len(types) != 4:
        raise NotEmulated(instr.name)
    dtype, atype, btype, ctype = types
    integer = atype in INT_INPUTS
    if integer:      # s8/u8 (and s4/u4) may mix signedness; D = C + A·B in s32, wrapped or .satfinite
        ok = dtype == ctype == ".s32" and btype in INT_INPUTS and INT_INPUTS[btype][0] == INT_INPUTS[atype][0]
    else:
        ok = dtype == ".f32" and ctype == ".f32" and atype == btype and ".satfinite" not in mods
    if not ok or (shape, atype) not in LAYOUTS:
        raise NotEmulated(instr.name)
    k, ((a_row, a_col), (b_k, b_n)) = LAYOUTS[(shape, atype)]
    d, a, b, c = instr.operands
    if not all(isinstance(x, Vector) for x in (d, a, b)):
        raise NotEmulated(instr.name)
    dec = scope.decoder
    ra = [dec.reader(x, B32) for x in a.items]
    rb = [dec.reader(x, B32) for x in b.items]
    rc = [dec.reader(x, TYPES[ctype]) for x in (c.items if isinstance(c, Vector) else ())]
    wd = [dec.writer(x, TYPES[dtype]) for x in d.items]
    if len(rc) != 4 or len(wd) != 4 or len(ra) != a_row.shape[1] * _bits(atype) // 32 \
            or len(rb) != b_k.shape[1] * _bits(btype) // 32:
        raise NotEmulated(f"{instr.name}: {len(ra)} A / {len(rb)} B registers do not fit the shape")
    if integer:
        return _mma_int(instr, ra, rb, rc, wd, (a_row, a_col), (b_k, b_n), k, atype, btype)

    def run(w, m):
        if not m.all():
            raise NotEmulated(f"{instr.name} with inactive lanes (.aligned needs the whole warp)")
        with np.errstate(all="ignore"):         # inf/NaN inputs and f32 overflow follow IEEE
            compute(w, m)

    def compute(w, m):
        A = np.zeros((16, k))
        B = np.zeros((k, 8))
        A[a_row, a_col] = _decode(np.stack([r(w, m) for r in ra], 1), atype)
        B[b_k, b_n] = _decode(np.stack([r(w, m) for r in rb], 1), btype)
        C = np.zeros((16, 8))
        C[C_ROW, C_COL] = np.stack([r(w, m) for r in rc], 1).view(np.float32).astype(np.float64)
        D = (C + A @ B).astype(np.float32)
        out = D[C_ROW, C_COL]
        for i, wr in enumerate(wd):
            wr(w, m, np.ascontiguousarray(out[:, i]).view(np.uint32))
    return run


def _bits(ty: str) -> int:
    return INT_INPUTS[ty][0] if ty in INT_INPUTS else TYPES[ty].bits


def int_elements(words: np.ndarray, ty: str) -> np.ndarray:
    """Registers (32, nregs) of packed .s8/.u8/.s4/.u4 -> int64 elements (32, nregs * per),
    element 0 in each register's low bits."""
    bits, signed = INT_INPUTS[ty]
    per = 32 // bits
    v = (words.astype(np.int64)[:, :, None] >> (bits * np.arange(per))) & ((1 << bits) - 1)
    if signed:
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v.reshape(len(words), -1)


def s32_result(acc: np.ndarray, satfinite: bool) -> np.ndarray:
    """Exact int64 sums -> s32 bits: clamped with .satfinite, wrapped modulo 2^32 otherwise."""
    if satfinite:
        acc = np.clip(acc, -(1 << 31), (1 << 31) - 1)
    return (acc & 0xFFFFFFFF).astype(np.uint32)


def _mma_int(instr, ra, rb, rc, wd, a_layout, b_layout, k, atype, btype):
    """Integer mma.sync: every product and sum exact (int64), then s32."""
    sat = ".satfinite" in instr.modifiers

    def run(w, m):
        if not m.all():
            raise NotEmulated(f"{instr.name} with inactive lanes (.aligned needs the whole warp)")
        A = np.zeros((16, k), np.int64)
        B = np.zeros((k, 8), np.int64)
        A[a_layout] = int_elements(np.stack([r(w, m) for r in ra], 1), atype)
        B[b_layout] = int_elements(np.stack([r(w, m) for r in rb], 1), btype)
        C = np.zeros((16, 8), np.int64)
        C[C_ROW, C_COL] = np.stack([r(w, m) for r in rc], 1).astype(np.uint32).view(np.int32)
        out = s32_result(C + A @ B, sat)[C_ROW, C_COL]
        for i, wr in enumerate(wd):
            wr(w, m, np.ascontiguousarray(out[:, i]))
    return run


HANDLERS = {"ldmatrix": _ldmatrix, "stmatrix": _stmatrix, "mma": _mma}
