"""Where each variable lives: module `.global`/`.const` data (with initialisers), the CTA's
shared layout (static, then dynamic), each function's `.local` and `.param` offsets, and the
kernel parameter block."""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import FloatLiteral, InitList, IntLiteral, UnaryExpr

from .errors import NotEmulated
from .operands import constant, immediate_bits
from .types import TYPES


def decl_size(decl, declarator) -> tuple[int, int]:
    """(bytes, alignment) of one declarator; a `[]` dimension is 0 bytes (dynamic shared)."""
    ptype = TYPES.get(decl.type or ".b8")
    if ptype is None:
        raise NotEmulated(f"variable type {decl.type}")
    elem = ptype.nbytes * (int(decl.vector[2:]) if decl.vector else 1)
    count = 1
    for d in declarator.dims:
        count *= int(d, 0) if d else 0
    align = decl.align or elem
    return elem * count, align


def _align(off: int, a: int) -> int:
    return (off + a - 1) // a * a


def init_bytes(decl, declarator, size: int) -> np.ndarray:
    """The initial bytes of a variable (zeros where no initialiser)."""
    out = np.zeros(size, np.uint8)
    if declarator.init is None:
        return out
    ptype = TYPES[decl.type]
    values = []

    def flat(node):
        if isinstance(node, InitList):
            for item in node.items:
                flat(item)
        else:
            values.append(node)
    flat(declarator.init)
    if ptype.bits == 0 or ptype.bits > 64:
        raise NotEmulated(f"initialiser of {decl.type}")
    bits = []
    for v in values:
        if not isinstance(v, (IntLiteral, FloatLiteral, UnaryExpr)) and constant(v) is None:
            raise NotEmulated(f"initialiser {type(v).__name__} (addresses in data)")
        bits.append(immediate_bits(v, ptype))
    arr = np.array(bits, ptype.container).view(np.uint8)
    out[: min(arr.size, size)] = arr[:size]
    return out


class SharedLayout:
    """Offsets of every `.shared` variable of the module and its functions; dynamic (`[]`)
    arrays start after the static ones, at the largest alignment they ask for."""

    def __init__(self, program):
        self.offsets: dict[str, int] = {}
        self.dynamic: list[str] = []
        off, dyn_align = 0, 16
        decls = [d for d in program.module_vars if d.space == ".shared"]
        for code in program.functions.values():
            decls += [d for d in code.variables if d.space == ".shared"]
        for decl in decls:
            for dd in decl.declarators:
                size, align = decl_size(decl, dd)
                if "" in dd.dims:
                    self.dynamic.append(dd.name)
                    dyn_align = max(dyn_align, align)
                    continue
                off = _align(off, align)
                self.offsets[dd.name] = off
                off += size
        self.static_size = off
        self.dynamic_offset = _align(off, dyn_align)
        for name in self.dynamic:
            self.offsets[name] = self.dynamic_offset


class FrameLayout:
    """A function's `.param` block (formal params first, then call-site params) and `.local`
    offsets, both per lane."""

    def __init__(self, code, kernel_params: bool):
        self.params: dict[str, int] = {}
        self.param_sizes: dict[str, int] = {}
        self.locals: dict[str, int] = {}
        off = 0
        head = code.function.head
        formals = []
        if not kernel_params:
            for plist in (head.params, head.returns):
                for p in (plist.params if plist else ()):
                    if p.space == ".param":
                        formals.append(p)
        for p in formals:
            ptype = TYPES.get(p.type or ".b8")
            elem = ptype.nbytes if ptype else 1
            size = elem * (int(p.dim, 0) if p.dim else 1)
            aligns = [int(a.value, 0) for a in p.attrs if type(a).__name__ == "Align"]
            off = _align(off, aligns[0] if aligns else elem)
            self.params[p.name] = off
            self.param_sizes[p.name] = size
            off += size
        slots: dict[str, tuple[int, int]] = {}
        for decl in code.variables:         # call-site params: one slot per name, as large as its
            if decl.space != ".param":      # largest declaration (each call's { } block declares
                continue                    # its own retval0, of the size that call returns)
            for dd in decl.declarators:
                size, align = decl_size(decl, dd)
                old = slots.get(dd.name, (0, 1))
                slots[dd.name] = (max(size, old[0]), max(align, old[1]))
        for name, (size, align) in slots.items():
            off = _align(off, align)
            self.params[name] = off
            self.param_sizes[name] = size
            off += size
        self.param_size = max(off, 8)
        loff = 0
        for decl in code.variables:
            if decl.space != ".local":
                continue
            for dd in decl.declarators:
                size, align = decl_size(decl, dd)
                loff = _align(loff, align)
                self.locals[dd.name] = loff
                loff += size
        self.local_size = loff


def kernel_param_layout(code) -> tuple[dict[str, int], dict[str, tuple[str, int]], int]:
    """name -> offset, name -> (type, bytes), block size of an entry's parameters (the same
    packing rule as launch.plan.param_layout)."""
    offsets, kinds, off = {}, {}, 0
    for p in (code.function.head.params.params if code.function.head.params else ()):
        ptype = TYPES.get(p.type or ".b8")
        elem = ptype.nbytes if ptype else 1
        size = elem * (int(p.dim, 0) if p.dim else 1)
        aligns = [int(a.value, 0) for a in p.attrs if type(a).__name__ == "Align"]
        align = aligns[0] if aligns and p.dim is not None else elem
        off = _align(off, align)
        offsets[p.name] = off
        kinds[p.name] = (p.type, size)
        off += size
    return offsets, kinds, off
