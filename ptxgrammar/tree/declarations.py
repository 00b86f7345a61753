"""Variables, parameters and function heads (PTX ISA 5.4, 11.3)."""

from __future__ import annotations

from .base import Node, joined, node
from .operands import Operand
from .statements import Block, Statement


@node
class Align(Node):
    """`.align N` inside a declaration."""

    value: str
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (".align", self.value)


@node
class Attribute(Node):
    """`.attribute(.managed)` or `.attribute(.unified(0x1, 0x2))`."""

    name: str
    args: tuple[str, ...] | None = None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        parts = [".attribute", "(", self.name]
        if self.args is not None:
            parts += ["(", *joined(self.args), ")"]
        parts.append(")")
        return tuple(parts)


def _attribute_value(attrs, cls, default=None):
    for a in attrs:
        if isinstance(a, cls):
            return a
    return default


@node
class InitList(Node):
    """`{1, 2, {3, 4}}`: nested per dimension; `{}` allowed."""

    items: tuple[Node, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("{", *joined(self.items), "}")


@node
class InitField(Node):
    """`filter_mode = linear` inside a sampler or texture initializer."""

    name: str
    value: Operand
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.name, "=", self.value)


@node
class Declarator(Node):
    """`%r<100>`, `buf[4][]`, `x = 3`. ``dims`` holds '' for `[]`."""

    name: str
    count: str | None = None
    dims: tuple[str, ...] = ()
    init: Node | None = None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        parts = [self.name]
        if self.count is not None:
            parts += ["<", self.count, ">"]
        for d in self.dims:
            parts += ["[", d, "]"] if d else ["[", "]"]
        if self.init is not None:
            parts += ["=", self.init]
        return tuple(parts)


@node
class VarDecl(Statement):
    """`[.visible] .global .align 4 .b32 x[4] = {...};` and `.reg .b32 %r<5>;`.

    ``attrs`` keeps the dot-words (`.v4`, `.b32`), ``Align`` and ``Attribute``
    in their written order.
    """

    linkage: tuple[str, ...]
    space: str
    attrs: tuple
    declarators: tuple[Declarator, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (*self.linkage, self.space, *self.attrs, *joined(self.declarators), ";")

    @property
    def type(self) -> str | None:
        words = [a for a in self.attrs if a.__class__ is str and not a.startswith(".v")]
        return words[-1] if words else None

    @property
    def vector(self) -> str | None:
        return next((a for a in self.attrs if a.__class__ is str and a in (".v2", ".v4", ".v8")), None)

    @property
    def align(self) -> int | None:
        a = _attribute_value(self.attrs, Align)
        return int(a.value, 0) if a else None


@node
class Param(Node):
    """`.param .u64 .ptr .global .align 16 p`, `.reg .b32 r`, `.param .align 8 .b8 s[24]`."""

    space: str
    attrs: tuple
    name: str
    dim: str | None = None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        parts = [self.space, *self.attrs, self.name]
        if self.dim is not None:
            parts += ["[", self.dim, "]"] if self.dim else ["[", "]"]
        return tuple(parts)

    @property
    def type(self) -> str | None:
        words = [a for a in self.attrs if a.__class__ is str and a not in (".ptr",
                                                                           ) and not a.startswith((".global",
                                                                                                   ".shared", ".const",
                                                                                                   ".local"))]
        return words[0] if words else None


@node
class ParamList(Node):
    params: tuple[Param, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return ("(", *joined(self.params), ")")


@node
class PerfDirective(Node):
    """`.maxntid 128, 1, 1`, `.noreturn`: any dot-word with a literal list."""

    name: str
    values: tuple[str, ...] = ()
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.name, *joined(self.values))


@node
class FunctionHead(Node):
    """`.visible .entry k(params) .maxntid 128` (everything before the body)."""

    linkage: tuple[str, ...]
    kind: str
    returns: ParamList | None
    name: str
    params: ParamList | None
    directives: tuple[Node, ...] = ()
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        parts: list = [*self.linkage, self.kind]
        if self.returns is not None:
            parts.append(self.returns)
        parts.append(self.name)
        if self.params is not None:
            parts.append(self.params)
        parts.extend(self.directives)
        return tuple(parts)


@node
class Function(Statement):
    """An `.entry` or `.func`: a head, then a body block or `;` (a prototype)."""

    head: FunctionHead
    body: Block | None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.head, self.body) if self.body is not None else (self.head, ";")

    @property
    def name(self) -> str:
        return self.head.name
