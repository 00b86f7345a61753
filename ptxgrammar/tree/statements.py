"""Statements of a function body (PTX ISA 9, 11.4, 11.5)."""

from __future__ import annotations

from .base import Node, joined, node
from .operands import Operand


class Statement(Node):
    __slots__ = ()


@node
class Guard:
    """`@%p` or `@!%p`: a value, its tokens belong to the instruction."""

    predicate: str
    negated: bool = False

    def _parts(self):
        return ("@", "!", self.predicate) if self.negated else ("@", self.predicate)


@node
class Instruction(Statement):
    """`[@[!]p] opcode{.mod} operands;` for every opcode, known or not.

    ``modifiers`` keep their dots and their order: `('.global', '.nc', '.v4', '.b32')`.
    """

    guard: Guard | None
    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        head = (self.opcode, *self.modifiers, *joined(self.operands), ";")
        return head if self.guard is None else (*self.guard._parts(), *head)

    @property
    def name(self) -> str:
        """The dotted spelling: `ld.global.nc.v4.b32`."""
        return self.opcode + "".join(self.modifiers)


@node
class Label(Statement):
    name: str
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.name, ":")


@node
class Block(Statement):
    """`{ ... }`: a function body or a nested scope."""

    items: tuple[Node, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("{", *self.items, "}")


@node
class Loc(Statement):
    """`.loc file line column[, function_name L[+n], inlined_at f l c]`."""

    file: str
    line: str
    column: str
    function_name: str | None = None
    function_offset: str | None = None
    inlined_at: tuple[str, str, str] | None = None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        parts = [".loc", self.file, self.line, self.column]
        if self.function_name is not None:
            parts += [",", "function_name", self.function_name]
            if self.function_offset is not None:
                parts += ["+", self.function_offset]
            parts += [",", "inlined_at", *self.inlined_at]
        return tuple(parts)


@node
class Pragma(Statement):
    """`.pragma "nounroll";` (module, function header or body)."""

    strings: tuple[str, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (".pragma", *joined(self.strings), ";")


@node
class CallPrototype(Statement):
    """`.callprototype (.param .b32 _) _ (.param .b32 _);` (after its label)."""

    # ParamLists: declarations.py defines them and imports this module, so the field names the base class
    returns: Node | None
    name: str
    params: Node | None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        parts: list = [".callprototype"]
        if self.returns is not None:
            parts.append(self.returns)
        parts.append(self.name)
        if self.params is not None:
            parts.append(self.params)
        parts.append(";")
        return tuple(parts)


@node
class LabelList(Statement):
    """`.calltargets f1, f2;` or `.branchtargets L1, L2;` (after its label)."""

    directive: str
    labels: tuple[str, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.directive, *joined(self.labels), ";")
