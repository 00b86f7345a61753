"""Operands and constant expressions (PTX ISA 4.6, 6.4).

Names are typed by their spelling: ``%``-names are registers (special
registers by the table in ``isa/special_registers.py``), other names are symbols
(labels, variables, functions, params, and ``%``-less register names).
Literals keep their exact spelling in ``text``.
"""

from __future__ import annotations

from .base import Node, joined, node


class Operand(Node):
    __slots__ = ()


# --- names -------------------------------------------------------------------

@node
class Register(Operand):
    """`%r5`, or `%v1.x` with a vector component."""

    name: str
    component: str | None = None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.name,) if self.component is None else (self.name, self.component)


@node
class SpecialRegister(Register):
    """`%tid.x`, `%laneid`, `%clock64`: a register the hardware defines."""


@node
class Symbol(Operand):
    """A label, variable, function or parameter name; `.x` only for `%`-less registers."""

    name: str
    component: str | None = None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.name,) if self.component is None else (self.name, self.component)


@node
class Sink(Operand):
    """`_`: a result that is discarded."""

    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("_",)


# --- literals ------------------------------------------------------------------

@node
class IntLiteral(Operand):
    """`42`, `0x1F`, `017`, `0b101`, `10U`: the spelling is kept."""

    text: str
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.text,)

    @property
    def value(self) -> int:
        t = self.text.rstrip("U")
        if t[:2] in ("0b", "0B"):
            return int(t[2:], 2)
        if t[:2] in ("0x", "0X"):
            return int(t[2:], 16)
        if len(t) > 1 and t[0] == "0":
            return int(t[1:], 8)
        return int(t)


@node
class FloatLiteral(Operand):
    """`0f3F800000`, `0d3FF0000000000000`, `1.5e3`: the spelling is kept."""

    text: str
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.text,)

    @property
    def value(self) -> float:
        import struct

        t = self.text
        if t[:2] in ("0f", "0F"):
            return struct.unpack(">f", bytes.fromhex(t[2:]))[0]
        if t[:2] in ("0d", "0D"):
            return struct.unpack(">d", bytes.fromhex(t[2:]))[0]
        return float(t)


# --- expressions -----------------------------------------------------------------

@node
class UnaryExpr(Operand):
    """`-5`, `~0`, `!0`."""

    op: str
    operand: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.op, self.operand)


@node
class Negation(Operand):
    """`!%p`: a negated predicate source."""

    operand: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("!", self.operand)


@node
class BinaryExpr(Operand):
    left: Operand
    op: str
    right: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.left, self.op, self.right)


@node
class Conditional(Operand):
    """`c ? a : b`."""

    condition: Operand
    then: Operand
    otherwise: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.condition, "?", self.then, ":", self.otherwise)


@node
class Cast(Operand):
    """`(.s64) expr`; `type` keeps its dot."""

    type: str
    operand: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("(", self.type, ")", self.operand)


@node
class Paren(Operand):
    inner: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("(", self.inner, ")")


@node
class Indexed(Operand):
    """`gv[1]`: a symbol with a constant element index."""

    name: str
    index: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.name, "[", self.index, "]")


@node
class Applied(Operand):
    """`generic(sym)` or a byte mask `0xFF(sym)` in an initializer."""

    function: str
    argument: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.function, "(", self.argument, ")")


# --- composite operands ---------------------------------------------------------

@node
class PredPair(Operand):
    """`%p|%q` (also `_|%p`, `{..}|%p`): two results of one instruction."""

    first: Operand
    second: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.first, "|", self.second)


@node
class Vector(Operand):
    """`{%r1, _, %r2}`: vector operand, sinks allowed in results."""

    items: tuple[Operand, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("{", *joined(self.items), "}")


@node
class Address(Operand):
    """`[%rd1+-4]`, `[sym]`, `[tmap, {c0, c1}]`, with an optional `.unified` suffix.

    ``items`` holds the comma-separated parts; an offset form is one
    ``BinaryExpr`` with op ``+``, exposed as ``base`` and ``offset``.
    """

    items: tuple[Operand, ...]
    suffix: str | None = None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        parts = ("[", *joined(self.items), "]")
        return parts if self.suffix is None else (*parts, self.suffix)

    @property
    def base(self) -> Operand:
        first = self.items[0]
        return first.left if isinstance(first, BinaryExpr) and first.op == "+" else first

    @property
    def offset(self) -> Operand | None:
        first = self.items[0]
        return first.right if isinstance(first, BinaryExpr) and first.op == "+" else None


@node
class ParenList(Operand):
    """`(retval0)`, `(param0, param1)`, `()`: call results and arguments."""

    items: tuple[Operand, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("(", *joined(self.items), ")")
