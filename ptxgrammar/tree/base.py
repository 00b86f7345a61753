"""The node protocol shared by every tree class.

A node lists its own tokens and its children, in source order, through
``_parts()``: a ``str`` part is a token the node owns, any other part is a child
node. ``trivia`` holds the whitespace and comments written before each of the
node's own tokens, one string per ``str`` part, so a node owns its whitespace
(as in LibCST) and printing is a walk over ``_parts()``.

``trivia=None`` marks a node built by hand (the DSL, a sugar pass, a user edit
that adds a statement): it prints with the module's inferred style instead.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # typing has it from Python 3.11 on; the checker's stubs have it for 3.10 too
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_):
        return lambda decorator: decorator


class Node:
    """Base of every tree node. Subclasses are slotted dataclasses."""

    __slots__ = ()
    trivia: tuple[str, ...] | None

    def _parts(self) -> tuple:
        raise NotImplementedError

    def with_changes(self, **changes) -> "Node":
        """A copy with some fields replaced (the tree is edited by copying)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]  # subclasses are dataclasses (@node)

    def tokens(self) -> list[str]:
        """The node's own tokens, in order (children excluded)."""
        return [p for p in self._parts() if isinstance(p, str)]

    def children(self) -> list["Node"]:
        return [p for p in self._parts() if not isinstance(p, str)]

    def walk(self) -> Iterator["Node"]:
        """This node and every node below it, in source order."""
        stack = [self]          # not recursion: expression trees can be thousands deep
        while stack:
            node = stack.pop()
            yield node
            stack.extend(p for p in reversed(node._parts()) if not isinstance(p, str))

    @property
    def leading(self) -> str:
        """The trivia before the node's first token (blank lines, comments, indent)."""
        first = self._parts()[0] if self._parts() else ""
        if isinstance(first, str):
            return self.trivia[0] if self.trivia else ""
        return first.leading


    @property
    def comments(self):
        """The comments written before the node's first token (typed, see trivia.py)."""
        from .trivia import comments

        return comments(self.leading)


@dataclass_transform(eq_default=True)  # type checkers see the dataclass fields and __init__
def node(cls):
    """Decorator: a slotted dataclass node that compares by value."""
    return dataclasses.dataclass(slots=True, eq=True, repr=True)(cls)


def joined(items, sep: str = ",") -> list:
    """Items with `sep` tokens between them: the shape of every PTX list."""
    out: list = []
    for i, item in enumerate(items):
        if i:
            out.append(sep)
        out.append(item)
    return out
