"""Statement shapes: parse each distinct statement shape once, then reuse it.

A chunk's *shape* is its text with every run of decimal digits taken out.
Chunks of one shape differ only in those digit runs (register numbers,
immediates, line numbers), so the grammar parses them the same way. The first
time a shape repeats, the span-mode tree of one chunk becomes a builder: Python
code that makes the same nodes with the digit runs filled in. Tokens whose
validity depends on their digits (`08`, `0f` + 8 hex digits) are re-checked
against the grammar's own terminal patterns.
"""

from __future__ import annotations

import bisect
import dataclasses
import re

from lark import Token

from .build import MARKER_CLASSES
from .tree import NODE_CLASSES

DIGITS = re.compile(r"([0-9]+)")     # the group makes split() keep the digit runs
NUMERIC_TERMINALS = ("INT", "FLOAT_DEC", "FLOAT_HEX")
MAX_SHAPE = 100_000      # longer chunks are parsed directly (a builder would not pay off)


class ShapeMismatch(Exception):
    """A cached shape does not fit this chunk (a number token became invalid)."""


class NotAShape(Exception):
    """This tree cannot be turned into a builder (a value not traceable to the text)."""


class BuilderWriter:
    """Writes the Python source of a builder for one span-mode chunk tree."""

    def __init__(self, text: str, terminal_patterns: dict[str, re.Pattern]):
        self.holes = [m.span() for m in DIGITS.finditer(text)]
        self.hole_ends = [he for _, he in self.holes]   # sorted: a token finds its holes by bisection
        self.patterns = terminal_patterns
        self.checks: list[str] = []
        self.names: dict[str, object] = {"ShapeMismatch": ShapeMismatch}

    def source(self, tree) -> str:
        self.lines: list[str] = []
        body = self.expr(tree)
        lines = ["def build(d):"]
        lines += [f"    {c}" for c in self.checks]
        lines += [f"    {c}" for c in self.lines]
        lines.append(f"    return {body}")
        return "\n".join(lines)

    def expr(self, root) -> str:
        """Python for `root`: one assignment per node, children first, so a long or
        deep expression gives a long function, never deeply nested source.
        Walked with an explicit stack (a 5000-term sum is 5000 levels deep)."""
        done: dict[int, str] = {}
        stack = [(root, False)]
        while stack:
            value, ready = stack.pop()
            kids = self.children(value)
            if kids is None:
                done[id(value)] = self.leaf(value)
            elif not ready:
                stack.append((value, True))
                stack.extend((k, False) for k in reversed(kids) if id(k) not in done)
            else:
                done[id(value)] = self.compose(value, [done[id(k)] for k in kids])
        return done[id(root)]

    @staticmethod
    def children(value):
        cls = value.__class__
        if cls is tuple or cls is list:
            return list(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return [getattr(value, f.name) for f in dataclasses.fields(value)]
        return None

    def leaf(self, value) -> str:
        if isinstance(value, Token):
            return self.token_expr(value)
        cls = value.__class__
        if cls is str:
            if DIGITS.search(value):
                raise NotAShape(value)
            return repr(value)
        if value is None or cls is bool:
            return repr(value)
        raise NotAShape(repr(value))

    def compose(self, value, parts: list[str]) -> str:
        cls = value.__class__
        if cls is tuple:
            return "(" + "".join(p + ", " for p in parts) + ")"
        if cls is list:
            return "[" + ", ".join(parts) + "]"
        self.names[cls.__name__] = cls
        var = f"n{len(self.lines)}"
        self.lines.append(f"{var} = {cls.__name__}({', '.join(parts)})")
        return var

    def token_expr(self, tok: Token) -> str:
        start, end = tok.start_pos, tok.end_pos
        pieces, pos = [], start
        holes = self.holes
        first = bisect.bisect_right(self.hole_ends, start)   # the first digit run that ends after start
        for i in range(first, len(holes)):
            hs, he = holes[i]
            if hs >= end:
                break
            if hs < start or he > end:
                raise NotAShape(tok)          # a digit run across a token edge
            if hs > pos:
                pieces.append(repr(str(tok)[pos - start: hs - start]))
            pieces.append(f"d[{i}]")
            pos = he
        if pos < end:
            pieces.append(repr(str(tok)[pos - start:]))
        if not any(p.startswith("d[") for p in pieces):
            return repr(str(tok))
        expr = " + ".join(pieces)
        if tok.type in NUMERIC_TERMINALS:
            var = f"t{len(self.checks)}"
            pat = f"_{tok.type}"
            self.names[pat] = self.patterns[tok.type].fullmatch
            self.checks.append(f"{var} = {expr}")
            self.checks.append(f"if {pat}({var}) is None: raise ShapeMismatch")
            return var
        return expr


def make_builder(text: str, tree, terminal_patterns):
    """A function d -> tree for chunks of ``text``'s shape, or None if it has none."""
    if len(text) > MAX_SHAPE:
        return None
    writer = BuilderWriter(text, terminal_patterns)
    try:
        source = writer.source(tree)
    except NotAShape:
        return None
    namespace = dict(writer.names)
    namespace.update(NODE_CLASSES)
    namespace.update(MARKER_CLASSES)
    try:
        code = compile(source, "<ptx shape>", "exec")
    except (RecursionError, MemoryError, SyntaxError):
        return None      # too big to compile (a 1 MB chunk): it will not repeat either
    exec(code, namespace)
    return namespace["build"]
