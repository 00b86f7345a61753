"""Warp-level WMMA (sm_70+; PTX ISA 9.7.14.4): wmma.load.{a,b,c}, wmma.mma, wmma.store.d for the
shapes and types the corpus uses: m16n16k16 with f16 (f16 or f32 accumulators) or bf16 (f32),
and m16n16k8 with tf32 (f32). Every other wmma form (m32n8k16, m8n32k16, m8n8k4 f64, integer and
sub-byte types, .satfinite, b1 .op) is refused with a located `not emulated` error naming it.

Fragment layout (documented choice). The ISA leaves the mapping of matrix elements into a
fragment's registers unspecified (9.7.14.4.1 "Matrix Fragments for WMMA"); a program that only
moves fragments between wmma.load, element-wise arithmetic, wmma.mma and wmma.store cannot tell.
The engine uses the mma.sync fragment layouts of the same element type (9.7.14.5.8 "Matrix
Fragments for mma.m16n8k16", 9.7.14.5.7 "... mma.m16n8k8" for tf32), the 16x16 tile being two
m16n8 tiles side by side: lane l has groupID g = l >> 2, thread-in-group t = l & 3, and
  A 16x16 (16-bit):   element i at (g + 8*((i >> 1) & 1), 2t + (i & 1) + 8*(i >> 2)), i < 8
  A 16x8  (tf32):     element i at (g + 8*(i & 1), t + 4*(i >> 1)), i < 4
  B 16x16 (16-bit):   element i at k = 2t + (i & 1) + 8*((i >> 1) & 1), n = g + 8*(i >> 2), i < 8
  B 8x16  (tf32):     element i at k = t + 4*(i & 1), n = g + 8*(i >> 1), i < 4
  C/D 16x16:          element i at (g + 8*((i >> 1) & 1), 2t + (i & 1) + 8*(i >> 2)), i < 8
16-bit elements pack two a register, the lower index in the low half. An .f16 A or B fragment
has eight registers for eight elements (the ISA's fragment table): registers 4-7 repeat 0-3,
and wmma.mma reads registers 0-3. The layout does not depend on .row/.col, which only say how
the matrix lies in memory (9.7.14.4.2 "Matrix Storage for WMMA"): element (r, c) at
p + (r*stride + c)*size for .row, p + (c*stride + r)*size for .col; the default stride is the
leading dimension. Alignment (a `misaligned` report otherwise): p to the fragment's size in bytes
and the stride to 16 bytes. The ISA (ibid., "Address Alignment") asks every row start to be
aligned to the fragment size (32 bytes for an .f16 A); the CUDA WMMA API (load_matrix_sync: a
256-bit aligned pointer, ldm a multiple of 16 bytes) allows a 16-byte stride, so the engine
checks the weaker rule and reports no valid CUDA program.

Accumulation (documented choice, as mma.sync in matrix.py): products are exact in float64,
D = C + sum_k A[m,k]*B[k,n] is summed in float64 and rounded once to the destination type
(round to nearest even). A GPU rounds at least once per k step in an unspecified order: compare
with a tolerance of (K/16) * 2**-24 * sum_k |a*b| (f32 accumulators).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptx2py.ptxgrammar.tree import Address, Vector

from ..errors import NotEmulated
from ..types import TYPES
from .common import resolve_param_space, space_of
from .matrix import _decode

LANE = np.arange(32)
G, T = LANE >> 2, LANE & 3
B32 = TYPES[".b32"]


def _coords(row_of, col_of, n):
    """(rows, cols), each (32 lanes, n elements), of an element formula."""
    i = np.arange(n)[None, :]
    g, t = G[:, None], T[:, None]
    return (np.broadcast_to(row_of(g, t, i), (32, n)).copy(),
            np.broadcast_to(col_of(g, t, i), (32, n)).copy())


ACC = _coords(lambda g, t, i: g + 8 * ((i >> 1) & 1), lambda g, t, i: 2 * t + (i & 1) + 8 * (i >> 2), 8)
A16 = ACC                                               # same formula on the 16x16 A tile
B16 = _coords(lambda g, t, i: 2 * t + (i & 1) + 8 * ((i >> 1) & 1), lambda g, t, i: g + 8 * (i >> 2), 8)
A_TF32 = _coords(lambda g, t, i: g + 8 * (i & 1), lambda g, t, i: t + 4 * (i >> 1), 4)
B_TF32 = _coords(lambda g, t, i: t + 4 * (i & 1), lambda g, t, i: g + 8 * (i >> 1), 4)


@dataclass(frozen=True)
class Fragment:
    rows: int                  # matrix rows (M for a and c, K for b)
    cols: int                  # matrix columns (K for a, N for b and c)
    coords: tuple              # (rows, cols) of each lane's elements
    size: int                  # bytes of one element in memory
    regs: int                  # registers of the fragment (the ISA's fragment table)

    @property
    def per_reg(self) -> int:
        return 2 if self.size == 2 else 1

    @property
    def used(self) -> int:
        """Registers that carry distinct elements (an .f16 a/b fragment repeats them)."""
        return self.coords[0].shape[1] // self.per_reg


# (shape, matrix, element type) -> fragment; the forms of the corpus (PTX ISA 9.7.14.4.1 table)
FRAGMENTS = {
    (".m16n16k16", "a", ".f16"): Fragment(16, 16, A16, 2, 8),
    (".m16n16k16", "b", ".f16"): Fragment(16, 16, B16, 2, 8),
    (".m16n16k16", "a", ".bf16"): Fragment(16, 16, A16, 2, 4),
    (".m16n16k16", "b", ".bf16"): Fragment(16, 16, B16, 2, 4),
    (".m16n16k16", "c", ".f32"): Fragment(16, 16, ACC, 4, 8),
    (".m16n16k16", "c", ".f16"): Fragment(16, 16, ACC, 2, 4),
    (".m16n16k8", "a", ".tf32"): Fragment(16, 8, A_TF32, 4, 4),
    (".m16n16k8", "b", ".tf32"): Fragment(8, 16, B_TF32, 4, 4),
    (".m16n16k8", "c", ".f32"): Fragment(16, 16, ACC, 4, 8),
}
# wmma.mma: (shape, atype) -> the (dtype, ctype) pairs
MMA_FORMS = {
    (".m16n16k16", ".f16"): {(".f32", ".f32"), (".f16", ".f16"), (".f32", ".f16"), (".f16", ".f32")},
    (".m16n16k16", ".bf16"): {(".f32", ".f32")},
    (".m16n16k8", ".tf32"): {(".f32", ".f32")},
}
SHAPES = {".m16n16k16", ".m16n16k8"}
ELEMENT_TYPES = {".f16", ".bf16", ".tf32", ".f32"}


def _one(instr, choices):
    found = [m for m in instr.modifiers if m in choices]
    if len(found) != 1:
        raise NotEmulated(instr.name)
    return found[0]


def _items(node, count, instr):
    items = node.items if isinstance(node, Vector) else (node,)
    if len(items) != count:
        raise NotEmulated(f"{instr.name} with {len(items)} fragment registers (the form has {count})")
    return items


def _whole_warp(instr, m):
    if not m.all():
        raise NotEmulated(f"{instr.name} with inactive lanes (.aligned needs the whole warp)")


# --- memory <-> fragments -------------------------------------------------------------------------
class _Access:
    """The addresses of one wmma.load/store: per lane and element, from p, the layout and the
    stride (uniform over the warp, as .aligned requires)."""

    def __init__(self, instr, scope, frag, layout, addr_node, stride_node, write):
        if not isinstance(addr_node, Address):
            raise NotEmulated(instr.name)
        self.instr, self.frag, self.scope, self.write = instr, frag, scope, write
        self.space = space_of(instr.modifiers)
        self.address = scope.decoder.address(addr_node)
        lead = frag.cols if layout == ".row" else frag.rows
        self.stride = (scope.decoder.reader(stride_node, TYPES[".u32"]) if stride_node is not None
                       else (lambda w, m, lead=lead: np.full(32, lead, np.uint32)))
        self.row_major = layout == ".row"

    def __call__(self, w, m):
        """(space, addresses (32, n distinct elements)) after the alignment check."""
        addrs, sym_space = self.address(w, m)
        stride = self.stride(w, m).astype(np.int64)
        if len(set(addrs.tolist())) != 1 or len(set(stride.tolist())) != 1:
            raise NotEmulated(f"{self.instr.name} with an address or stride that differs between lanes")
        p, s = np.uint64(addrs[0]), int(stride[0])
        rows, cols = self.frag.coords
        lead, inner = (rows, cols) if self.row_major else (cols, rows)
        space = resolve_param_space(self.space, sym_space, self.scope)
        self._check_alignment(w, space, p, s)
        offs = (lead.astype(np.int64) * s + inner) * self.frag.size
        return space, p + offs.astype(np.uint64)

    def _check_alignment(self, w, space, p, s):
        """p aligned to the fragment's bytes, each further row (column) start to 16 bytes."""
        frag_bytes = 4 * self.frag.regs
        step = s * self.frag.size
        if int(p) % frag_bytes or step % 16:
            self.scope.machine.sanitizer.bad_access(
                "misaligned", w, np.zeros(1, np.int64), np.array([int(p)]), frag_bytes, space,
                f"{self.instr.name}: matrix start not aligned to the fragment's {frag_bytes} bytes or "
                f"stride of {s} elements ({step} bytes) not a multiple of 16 bytes", self.write)


def _pack(elements: np.ndarray, size: int) -> np.ndarray:
    """Elements (32, n) as raw uint16/uint32 -> register words (32, n / per_reg)."""
    if size == 4:
        return elements.astype(np.uint32)
    e = elements.astype(np.uint32)
    return e[:, 0::2] | (e[:, 1::2] << np.uint32(16))


def _unpack(words: np.ndarray, size: int) -> np.ndarray:
    if size == 4:
        return words
    w = words.astype(np.uint32)
    return np.stack([w & 0xFFFF, w >> 16], axis=2).reshape(len(w), -1)


def _frag_form(instr, matrix):
    shape = _one(instr, SHAPES)
    ety = _one(instr, ELEMENT_TYPES)
    layout = _one(instr, {".row", ".col"})
    frag = FRAGMENTS.get((shape, matrix, ety))
    if frag is None:
        raise NotEmulated(instr.name)
    return frag, layout


def _load(instr, scope):
    """wmma.load.{a,b,c}.sync.aligned.layout.shape{.ss}.type r, [p]{, stride}."""
    matrix = _one(instr, {".a", ".b", ".c"})[1:]
    frag, layout = _frag_form(instr, matrix)
    dest, addr_node, *rest = instr.operands
    access = _Access(instr, scope, frag, layout, addr_node, rest[0] if rest else None, False)
    writers = [scope.decoder.writer(x, B32) for x in _items(dest, frag.regs, instr)]
    machine = scope.machine
    container = np.uint16 if frag.size == 2 else np.uint32

    def run(w, m):
        _whole_warp(instr, m)
        space, addrs = access(w, m)
        elems = np.stack([machine.load(w, m, space, addrs[:, i], frag.size).view(container).reshape(32)
                          for i in range(addrs.shape[1])], axis=1)
        words = _pack(elems, frag.size)
        for r, wr in enumerate(writers):
            wr(w, m, np.ascontiguousarray(words[:, r % frag.used]))
    return run


def _store(instr, scope):
    """wmma.store.d.sync.aligned.layout.shape{.ss}.type [p], r{, stride}."""
    if ".d" not in instr.modifiers:
        raise NotEmulated(instr.name)
    frag, layout = _frag_form(instr, "c")
    addr_node, src, *rest = instr.operands
    access = _Access(instr, scope, frag, layout, addr_node, rest[0] if rest else None, True)
    readers = [scope.decoder.reader(x, B32) for x in _items(src, frag.regs, instr)]
    machine = scope.machine

    def run(w, m):
        _whole_warp(instr, m)
        space, addrs = access(w, m)
        elems = _unpack(np.stack([r(w, m).astype(np.uint32) for r in readers], axis=1), frag.size)
        raw = elems.astype(np.uint16 if frag.size == 2 else np.uint32)
        for i in range(addrs.shape[1]):
            machine.store(w, m, space, addrs[:, i], np.ascontiguousarray(raw[:, i]).view(np.uint8).reshape(32, -1))
    return run


# --- wmma.mma ---------------------------------------------------------------------------------------
def _mma_types(instr, shape):
    """(dtype, atype, ctype): `.dtype.ctype` for f16 inputs, `.dtype.atype.btype.ctype` otherwise."""
    types = [m for m in instr.modifiers if m in TYPES]
    if len(types) == 2:
        dtype, atype, btype, ctype = types[0], ".f16", ".f16", types[1]
    elif len(types) == 4:
        dtype, atype, btype, ctype = types
    else:
        raise NotEmulated(instr.name)
    if atype != btype or (dtype, ctype) not in MMA_FORMS.get((shape, atype), ()):
        raise NotEmulated(instr.name)
    return dtype, atype, ctype


def _mma(instr, scope):
    """wmma.mma.sync.aligned.alayout.blayout.shape.types d, a, b, c (no .satfinite)."""
    shape = _one(instr, SHAPES)
    if ".satfinite" in instr.modifiers or sum(m in (".row", ".col") for m in instr.modifiers) != 2:
        raise NotEmulated(instr.name)
    dtype, atype, ctype = _mma_types(instr, shape)
    fa, fb = FRAGMENTS[(shape, "a", atype)], FRAGMENTS[(shape, "b", atype)]
    fc, fd = FRAGMENTS[(shape, "c", ctype)], FRAGMENTS[(shape, "c", dtype)]
    d, a, b, c = instr.operands
    dec = scope.decoder
    ra = [dec.reader(x, B32) for x in _items(a, fa.regs, instr)[: fa.used]]
    rb = [dec.reader(x, B32) for x in _items(b, fb.regs, instr)[: fb.used]]
    rc = [dec.reader(x, B32) for x in _items(c, fc.regs, instr)]
    wd = [dec.writer(x, B32) for x in _items(d, fd.regs, instr)]

    def run(w, m):
        _whole_warp(instr, m)
        with np.errstate(all="ignore"):         # inf/NaN inputs and overflow follow IEEE
            A = np.zeros((fa.rows, fa.cols))
            B = np.zeros((fb.rows, fb.cols))
            C = np.zeros((16, 16))
            A[fa.coords] = _decode(np.stack([r(w, m) for r in ra], 1), atype)
            B[fb.coords] = _decode(np.stack([r(w, m) for r in rb], 1), atype)
            C[fc.coords] = _accumulators(np.stack([r(w, m).astype(np.uint32) for r in rc], 1), ctype)
            D = (C + A @ B)[fd.coords]
            words = _pack(D.astype(np.float32).view(np.uint32) if dtype == ".f32"
                          else D.astype(np.float16).view(np.uint16), fd.size)
        for i, wr in enumerate(wd):
            wr(w, m, np.ascontiguousarray(words[:, i]))
    return run


def _accumulators(words, ctype):
    if ctype == ".f32":
        return words.view(np.float32).astype(np.float64)
    return _unpack(words, 2).astype(np.uint16).view(np.float16).astype(np.float64)


def _wmma(instr, scope):
    op = instr.modifiers[0] if instr.modifiers else ""
    factory = {".load": _load, ".store": _store, ".mma": _mma}.get(op)
    if factory is None:
        raise NotEmulated(instr.name)
    return factory(instr, scope)


HANDLERS = {"wmma": _wmma}
