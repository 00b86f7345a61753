"""Operand access, decoded once per instruction: readers give the raw bits of a source for the
active lanes (sized to the operand type), writers store a result into a destination register
(zero- or sign-extended to the register's declared width)."""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import (
    Address,
    BinaryExpr,
    Cast,
    FloatLiteral,
    IntLiteral,
    Negation,
    Paren,
    PredPair,
    Register,
    Sink,
    SpecialRegister,
    Symbol,
    UnaryExpr,
    Vector,
)

from .errors import NotEmulated
from .types import TYPES, UINT, PtxType, float_bits, mask_bits, to_container

_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "/": lambda a, b: int(a / b), "%": lambda a, b: a - b * int(a / b), "<<": lambda a, b: a << b,
            ">>": lambda a, b: a >> b, "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b}
_UNARY = {"-": lambda a: -a, "~": lambda a: ~a, "!": lambda a: int(not a)}


def constant(node, symbols=None) -> int | None:
    """The value of a constant integer expression, None if it is not one. ``symbols(name)``
    gives a symbol's address (for `sym+4`)."""
    if isinstance(node, IntLiteral):
        return node.value
    if isinstance(node, Paren):
        return constant(node.inner, symbols)
    if isinstance(node, Cast):
        return constant(node.operand, symbols)
    if isinstance(node, UnaryExpr):
        v = constant(node.operand, symbols)
        return None if v is None else _UNARY[node.op](v)
    if isinstance(node, BinaryExpr) and node.op in _INT_OPS:
        a, b = constant(node.left, symbols), constant(node.right, symbols)
        return None if a is None or b is None else _INT_OPS[node.op](a, b)
    if isinstance(node, Symbol) and symbols is not None and node.component is None:
        return symbols(node.name)
    return None


def immediate_bits(node, ptype: PtxType):
    """A literal as raw bits of `ptype` (the engine's side of the numerics contract)."""
    if ptype.bits == 0:
        return bool(constant(node))
    if isinstance(node, FloatLiteral):
        t = node.text
        if t[:2] in ("0f", "0F") and ptype.bits == 32:
            return UINT[32](int(t[2:], 16))
        if t[:2] in ("0d", "0D") and ptype.bits == 64:
            return UINT[64](int(t[2:], 16))
        if ptype.floating:
            return float_bits(node.value, ptype)
        raise NotEmulated(f"float literal {t} as {ptype.name}")
    if isinstance(node, UnaryExpr) and node.op == "-" and isinstance(node.operand, FloatLiteral):
        if ptype.floating:
            return float_bits(-node.operand.value, ptype)
    value = constant(node)
    if value is None:
        return None
    if ptype.floating and ptype.name in (".f32", ".f64", ".f16"):
        return float_bits(float(value), ptype)
    return UINT[max(ptype.bits, 8) if ptype.bits <= 64 else 64](mask_bits(value, min(ptype.bits, 64)))


class OperandDecoder:
    """Builds readers and writers for one function's operands. ``engine`` gives special
    registers and symbol addresses."""

    def __init__(self, code, engine):
        self.code = code
        self.engine = engine

    # --- sources ---------------------------------------------------------------------------
    def _as_register(self, node):
        """`r0` in inline asm (`{ .reg .s32 r0; ... }`) is a register without a `%`."""
        if isinstance(node, Symbol) and node.component is None and self.code.reg_decl(node.name) is not None:
            return Register(node.name)
        return node

    def reader(self, node, ptype: PtxType):
        """f(warp, mask) -> bits of `ptype` for the lanes in mask (bool for .pred)."""
        node = self._as_register(node)
        if isinstance(node, SpecialRegister):
            special = self.engine.special_register(node)
            bits, signed = ptype.bits, ptype.signed
            return lambda w, m: _resize(special(w)[m], bits, signed)
        if isinstance(node, Register) and node.component is None and not isinstance(node, SpecialRegister):
            return self._register_reader(node.name, ptype)
        if isinstance(node, Negation):
            inner = self.reader(node.operand, ptype)
            return lambda w, m: ~inner(w, m)
        if isinstance(node, Vector):
            return self._vector_reader(node, ptype)
        if isinstance(node, (Symbol, BinaryExpr)) and self._is_symbolic(node):
            value = constant(node, self.engine.symbol_value)
            if value is not None:
                lanes = np.full(32, UINT[ptype.bits](mask_bits(value, ptype.bits)))
                return lambda w, m: lanes[m]
        if isinstance(node, Register):
            raise NotEmulated(f"vector register component {node.name}{node.component}")
        imm = immediate_bits(node, ptype)
        if imm is None:
            raise NotEmulated(f"operand {type(node).__name__}")
        lanes = np.full(32, imm, dtype=bool if ptype.bits == 0 else ptype.container)
        return lambda w, m: lanes[m]      # a fresh array per call (boolean indexing copies)

    def _is_symbolic(self, node) -> bool:
        return any(isinstance(n, Symbol) for n in node.walk())

    def _register_reader(self, name: str, ptype: PtxType):
        decl = self.code.reg_decl(name)
        if decl is None:
            raise NotEmulated(f"undeclared register {name}")
        rtype = TYPES[decl.type]
        bits, signed = ptype.bits, ptype.signed
        if rtype.bits == 0 or bits == 0:
            return lambda w, m: w.read(name, rtype, m).astype(bool)
        if rtype.bits == bits:
            return lambda w, m: w.read(name, rtype, m)
        # a wider register is truncated; a narrower one is extended by the register's own type
        rsigned = rtype.signed
        return lambda w, m: to_container(w.read(name, rtype, m), bits, rsigned and signed)

    def _vector_reader(self, node: Vector, ptype: PtxType):
        """`{%r1, %r2}` as one wide value (mov.b64 %rd, {%r1, %r2}): element 0 in the low bits."""
        n = len(node.items)
        part = TYPES[f".b{ptype.bits // n}"]
        parts = [self.reader(item, part) for item in node.items]
        shift = part.bits
        container = UINT[ptype.bits]

        def read(w, m):
            out = np.zeros(int(m.sum()), container)
            for k, p in enumerate(parts):
                out |= p(w, m).astype(container) << container(shift * k)
            return out
        return read

    # --- destinations ------------------------------------------------------------------------
    def writer(self, node, ptype: PtxType):
        """f(warp, mask, values): store bits (a value per active lane)."""
        node = self._as_register(node)
        if isinstance(node, Sink):
            return lambda w, m, v: None
        if isinstance(node, Vector):
            n = len(node.items)
            part = TYPES[f".b{ptype.bits // n}"]
            writers = [self.writer(item, part) for item in node.items]
            pc, shift = UINT[part.bits], part.bits

            def write_parts(w, m, v):
                for k, wr in enumerate(writers):
                    wr(w, m, (v >> v.dtype.type(shift * k)).astype(pc))
            return write_parts
        if isinstance(node, Register) and node.component is None and not isinstance(node, SpecialRegister):
            decl = self.code.reg_decl(node.name)
            if decl is None:
                raise NotEmulated(f"undeclared register {node.name}")
            rtype = TYPES[decl.type]
            name, signed = node.name, ptype.signed
            if rtype.bits == 0:
                return lambda w, m, v: w.write(name, rtype, m, np.asarray(v, bool))
            bits = rtype.bits
            return lambda w, m, v: w.write(name, rtype, m, _resize(v, bits, signed))
        raise NotEmulated(f"destination {type(node).__name__}")

    def pair_writer(self, node, ptype: PtxType):
        """`%p|%q`: writes (value, complement) for setp-like results."""
        if isinstance(node, PredPair):
            first, second = self.writer(node.first, ptype), self.writer(node.second, ptype)

            def write(w, m, v, v2=None):
                first(w, m, v)
                second(w, m, ~v if v2 is None else v2)
            return write
        single = self.writer(node, ptype)
        return lambda w, m, v, v2=None: single(w, m, v)

    # --- addresses ------------------------------------------------------------------------------
    def address(self, node: Address):
        """f(warp, mask) -> (uint64 addresses, symbol space or None). A symbol's space decides
        the space of `[sym+off]` in a generic access; a register base is generic."""
        if len(node.items) != 1:
            raise NotEmulated("address with several items (tensor coordinates)")
        base, off = self._as_register(node.base), node.offset
        offset = 0
        if off is not None:
            offset = constant(off, self.engine.symbol_value)
            if offset is None:
                raise NotEmulated("non-constant address offset")
        if isinstance(base, Register) and not isinstance(base, SpecialRegister):
            read = self._register_reader(base.name, TYPES[".u64"])
            o = np.uint64(mask_bits(offset, 64))
            return lambda w, m: (read(w, m) + o, None)
        value = constant(base, self.engine.symbol_value)
        if value is None:
            raise NotEmulated(f"address base {type(base).__name__}")
        space = self.engine.symbol_space(base.name) if isinstance(base, Symbol) else None
        addr = np.uint64(mask_bits(value + offset, 64))
        return lambda w, m: (np.full(int(m.sum()), addr), space)


def _resize(values, bits, signed):
    values = np.asarray(values)
    if values.dtype == np.bool_:
        return values.astype(UINT[bits])
    if values.dtype.itemsize * 8 == bits:
        return values if values.dtype == UINT[bits] else values.view(UINT[bits])
    return to_container(values, bits, signed)
