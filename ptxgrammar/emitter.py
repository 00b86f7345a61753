"""The one printer: a tree back to PTX text, from structure alone."""

from __future__ import annotations

from .tree.base import Node


def emit(node: Node) -> str:
    """PTX text of a module or of any node (with the node's own trivia)."""
    out: list[str] = []
    _emit_into(node, out)
    if hasattr(node, "trailing"):
        out.append(node.trailing)
    return "".join(out)


def _emit_into(node, out: list) -> None:
    trivia = node.trivia
    if trivia is None:
        trivia = default_trivia(node)
    i = 0
    for part in node._parts():
        if part.__class__ is str:
            out.append(trivia[i])
            out.append(part)
            i += 1
        else:
            _emit_into(part, out)


def default_trivia(node) -> tuple[str, ...]:
    """Spacing for a hand-built node: one space between words, none around punctuation."""
    from .style import DEFAULT_STYLE

    return DEFAULT_STYLE.trivia_for(node)
