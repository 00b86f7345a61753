"""A recorded statement's line as text, and a `//` comment after it at a column (LLVM's
`// file:line:col` after a `.loc`, a data row's note)."""

from __future__ import annotations

from ..style import flatten
from . import recorder


def line_text(stmt) -> str:
    """The text of a recorded statement's own line (from its indent to its last token)."""
    flat = flatten(stmt, [])
    node, i, _, tok = flat[0]
    parts = [node.trivia[i].rsplit("\n", 1)[-1], tok]
    for node, i, _, tok in flat[1:]:
        parts.append(node.trivia[i])
        parts.append(tok)
    return "".join(parts)


def pad_to(line: str, column: int) -> str:
    """The spaces LLVM puts between a statement and its `//` comment."""
    return " " * (column - len(line)) if len(line) < column else " "


def note_after(stmt, column: int, text: str) -> None:
    """`//text` after the statement just recorded, its `//` at `column` (one space past a longer line)."""
    recorder.current().tail += pad_to(line_text(stmt), column) + "//" + text
