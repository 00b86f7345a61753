"""Default spacing for hand-built nodes (trivia=None).

The space before a token depends on the token before it, which may belong to
another node (an operand's first token follows its instruction's `,` or
modifier), so spacing is decided per token with the previous token in hand:
the emitter asks `space(prev, node, i, token)` as it writes the statement.
Statements start on a new line; words are separated by one space, except where
PTX spells them together (an instruction's modifiers, a register's component,
`%r<4>`, `x[4]`, `generic(x)`); no space around punctuation."""

from __future__ import annotations

_TIGHT_BEFORE = frozenset({",", ";", ")", "]", "}", ":", "|", ">"})
_TIGHT_AFTER = frozenset({"(", "[", "{", "@", "!", "|", "<"})


class SimpleStyle:
    statement_indent = "\t"

    def space(self, prev: str | None, node, i: int, tok: str, line_start: bool = False) -> str:
        """The trivia before `tok`, the i-th own token of `node`, after `prev`."""
        if prev is None:
            return ""
        if line_start:
            return "\n"
        if tok in _TIGHT_BEFORE or prev in _TIGHT_AFTER or _glued(node, i, tok):
            return ""
        if node.__class__.__name__ == "Block" and tok == "}":
            return "\n"
        return " "

    def glues_next(self, node, i: int) -> bool:
        """Whether the token after this one is written without a space (`-1`, `(.s64)x`)."""
        cls = node.__class__.__name__
        return (cls in ("UnaryExpr", "Negation") and i == 0) or (cls == "Cast" and i == 2)

    def trivia_for(self, node) -> tuple[str, ...]:
        """The spacing of one node's own tokens on their own (its first token gets "")."""
        out, prev = [], None
        for i, tok in enumerate(node.tokens()):
            out.append(self.space(prev, node, i, tok))
            prev = tok
        return tuple(out)


def _glued(node, i: int, tok: str) -> bool:
    cls = node.__class__.__name__
    if cls == "Instruction":
        g = 0 if node.guard is None else len(node.guard._parts())
        return g < i <= g + len(node.modifiers)
    if cls in ("Register", "SpecialRegister", "Symbol"):
        return i == 1
    if cls == "Declarator":
        return 0 < i <= 3 and node.count is not None or tok == "["
    if tok in ("[", "("):
        return i > 0 and cls in ("Indexed", "Applied", "Attribute", "Param")
    return False


DEFAULT_STYLE = SimpleStyle()
