"""Module-level directives and the module itself (PTX ISA 11.1, 11.2, 11.5)."""

from __future__ import annotations

from .base import Node, joined, node
from .statements import Statement


@node
class Version(Statement):
    number: str
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (".version", self.number)


@node
class Target(Statement):
    targets: tuple[str, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (".target", *joined(self.targets))


@node
class AddressSize(Statement):
    size: str
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (".address_size", self.size)


@node
class File(Statement):
    """`.file 1 "path"[, mtime[, size]]`; ``path`` keeps its quotes."""

    index: str
    path: str
    extra: tuple[str, ...] = ()
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        parts = [".file", self.index, self.path]
        for value in self.extra:
            parts += [",", value]
        return tuple(parts)


@node
class Alias(Statement):
    name: str
    target: str
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (".alias", self.name, ",", self.target, ";")


@node
class SectionRef(Node):
    """A section name used as a data value: `.b32 .debug_abbrev`, `.b32 .debug_loc+197`."""

    name: str
    op: str | None = None
    offset: str | None = None
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.name,) if self.op is None else (self.name, self.op, self.offset)


@node
class SectionData(Statement):
    """`.b8 135,64,0` or `.b32 $L__end-$L__start` inside a `.section`."""

    directive: str
    values: tuple[Node, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (self.directive, *joined(self.values))


@node
class Section(Statement):
    """`.section .debug_info { ... }`: debug data lines and labels."""

    name: str
    items: tuple[Node, ...]
    trivia: tuple[str, ...] | None = None

    def _parts(self):
        return (".section", self.name, "{", *self.items, "}")


@node
class Module(Node):
    """A whole PTX file: its items and the trivia after the last token."""

    items: tuple[Node, ...]
    trailing: str = ""
    trivia: tuple[str, ...] | None = ()

    def _parts(self):
        return self.items

    @property
    def functions(self):
        from .declarations import Function

        return [i for i in self.items if isinstance(i, Function)]
