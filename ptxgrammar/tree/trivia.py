"""Typed trivia: the whitespace, comments and cpp line markers a node owns.

Nodes store the trivia before each token as a string (cheap to keep and to
print). `split_trivia` gives the typed view: runs of whitespace, line and block
comments, and line markers, whose texts join back to the string exactly.

    for part in split_trivia(instruction.leading):
        if isinstance(part, Comment): print(part.body)
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Whitespace:
    text: str

    @property
    def newlines(self) -> int:
        """Line ends in the run (CRLF counts once)."""
        return self.text.count("\n") + self.text.count("\r") - self.text.count("\r\n")


@dataclass(frozen=True, slots=True)
class Comment:
    """`// text` or `/* text */`; ``body`` is the text without the delimiters."""

    text: str

    @property
    def block(self) -> bool:
        return self.text.startswith("/*")

    @property
    def body(self) -> str:
        return self.text[2:-2] if self.block else self.text[2:]


@dataclass(frozen=True, slots=True)
class LineMarker:
    """A cpp line marker such as `# 12 "kernel.cu"`."""

    text: str


_PART = re.compile(r"(?P<ws>[ \t\r\n\f]+)|(?P<comment>//[^\n\r]*|/\*.*?\*/)|(?P<marker>#[^\n\r]*)", re.S)
_KINDS = {"ws": Whitespace, "comment": Comment, "marker": LineMarker}


def split_trivia(text: str) -> list:
    """The typed parts of a trivia string, in order."""
    parts, pos = [], 0
    for m in _PART.finditer(text):
        if m.start() != pos:
            raise ValueError(f"not trivia: {text[pos:m.start()]!r}")
        parts.append(_KINDS[m.lastgroup](m.group()))  # type: ignore[index]  # every alternative is a named group
        pos = m.end()
    if pos != len(text):
        raise ValueError(f"not trivia: {text[pos:]!r}")
    return parts


def comments(text: str) -> list[Comment]:
    return [p for p in split_trivia(text) if isinstance(p, Comment)]
