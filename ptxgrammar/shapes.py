"""Statement shapes: parse each distinct statement shape once, then reuse it.

A chunk's *shape* is its text with its *holes* taken out: every run of decimal
digits, and the rest of every C++ mangled name after its `_Z`. Chunks of one
shape differ only in those (register numbers, immediates, line numbers, the
kernel's name in its parameter loads), so the grammar parses them the same way:
a name hole must be a whole IDENT token or lie in trivia (a comment), and any
`_Z[A-Za-z0-9_$]+` run there lexes and builds alike (the only terminals that can
match text starting with `_` are IDENT and SINK "_", and no keyword or check of
the tree builder looks at such a name beyond its first character). The first
time a shape is met, the span-mode tree of one chunk becomes a builder: Python
code that makes the same nodes with the holes filled in, compiled once per
*skeleton* (the source with its strings as placeholders, SKELETONS). Tokens whose
validity depends on their digits (`08`, `0f` + 8 hex digits) are re-checked
against the grammar's own terminal patterns (RECHECKED_TERMINALS).
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import functools
import re
import types

from .markers import MARKER_CLASSES
from .tree import NODE_CLASSES


@functools.cache
def _token_class():
    """Lark's Token, imported when a builder is made (after a grammar parse): running stored
    builders never needs Lark."""
    from lark import Token

    return Token

# A name hole is what follows the `_Z` of a name that starts a token (no name character,
# `.`, `%` or `:` before it). The `_Z` stays in the shape, so the shape itself tells a
# name hole from a digit run: whatever follows a token-initial `_Z` is a name hole.
NAME_HOLE = re.compile(r"(?<=(?<![A-Za-z0-9_$.%:])_Z)[A-Za-z0-9_$]+")
HOLES = re.compile(rf"({NAME_HOLE.pattern}|[0-9]+)")     # the group: split() keeps the holes
DIGITS = re.compile(r"([0-9]+)")     # the same split of a chunk without `_Z`, twice as fast
# Number tokens whose validity can change with their digits: `08` is no INT, `0f` takes
# exactly 8 hex digits. FLOAT_DEC is not among them: every digit run in its pattern is
# `[0-9]+` or `[0-9]*`, so any other digits in the same places match too.
RECHECKED_TERMINALS = ("INT", "FLOAT_HEX")
MAX_SHAPE = 100_000      # longer chunks are parsed directly (a builder would not pay off)
# Placeholders for the builder source's string constants: NUL cannot occur in PTX text
# (the parser refuses control bytes), so no real constant looks like one.
_HOLE = "\x00"


class ShapeMismatch(Exception):
    """A cached shape does not fit this chunk (a number token became invalid)."""


class NotAShape(Exception):
    """This tree cannot be turned into a builder (a value not traceable to the text)."""


class BuilderWriter:
    """Writes the Python source of a builder for one span-mode chunk tree."""

    def __init__(self, text: str, terminal_patterns: dict[str, re.Pattern], abstract: bool = True):
        self.abstract = abstract
        self.consts: list[str] = []      # the string constants, in source order
        self.holes = [m.span() for m in HOLES.finditer(text)]
        self.text = text
        self.hole_ends = [end for _, end in self.holes]   # sorted: holes are in text order
        self.patterns = terminal_patterns
        self.checks: list[str] = []
        self.lone: list[int] = []        # holes that are a whole INT token (`d`)
        self.names: dict[str, object] = {}

    def source(self, tree) -> str:
        self.lines: list[str] = []
        body = self.expr(tree)
        lines = ["def build(d):"]
        if len(self.lone) > LONE_INLINE:
            lines.append(f"    if _bad_ints(d, {tuple(self.lone)!r}): raise ShapeMismatch")
        else:
            lines += [f'    if "0" < d[{i}] < "1" and _INT(d[{i}]) is None: raise ShapeMismatch' for i in self.lone]
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
        names = _FIELDS.get(cls, _FIELDS)
        if names is _FIELDS:
            names = _FIELDS[cls] = _field_names(cls)
        if names is None:
            return None
        return [getattr(value, name) for name in names]

    def literal(self, value: str) -> str:
        """Source for a string constant; a numbered placeholder when abstract, so that
        shapes differing only in their strings share one compiled skeleton."""
        if not self.abstract:
            return repr(value)
        self.consts.append(value)
        return repr(f"{_HOLE}{len(self.consts) - 1}")

    def leaf(self, value) -> str:
        if isinstance(value, _token_class()):
            return self.token_expr(value)
        cls = value.__class__
        if cls is str:
            if HOLES.search(value):
                raise NotAShape(value)        # a string not traceable to its token
            return self.literal(value)
        if value is None or cls is bool:
            return repr(value)
        raise NotAShape(repr(value))

    def compose(self, value, parts: list[str]) -> str:
        cls = value.__class__
        if cls is tuple:
            source = "(" + "".join(p + ", " for p in parts) + ")"
            if any(p.startswith("_I[") for p in parts) and all(isinstance(v, str) for v in value):
                return f"_I[{source}]"        # a tuple of strings (modifiers): shared like them
            return source
        if cls is list:
            return "[" + ", ".join(parts) + "]"
        if BUILDER_GLOBALS.get(cls.__name__) is not cls:
            raise NotAShape(cls)              # a stored builder could not name it
        var = f"n{len(self.lines)}"
        # The slots are filled in place: calling the class runs its dataclass __init__,
        # a Python frame of its own per node (a fifth of a warm parse).
        stores = "".join(f"; {var}.{name} = {part}" for name, part in zip(_FIELDS[cls], parts))
        self.lines.append(f"{var} = _new({cls.__name__}){stores}")
        return var

    def token_expr(self, tok) -> str:
        start, end = tok.start_pos, tok.end_pos
        pieces, pos = [], start
        first = bisect.bisect_right(self.hole_ends, start)    # holes ending after the token's start
        for i in range(first, len(self.holes)):
            hs, he = self.holes[i]
            if hs >= end:
                break
            if hs < start or he > end:
                raise NotAShape(tok)          # a hole across a token edge
            if NAME_HOLE.match(self.text, hs) and tok.type != "TRIVIA" and (
                    tok.type != "IDENT" or (hs - 2, he) != (start, end)):
                raise NotAShape(tok)          # a name hole is a whole name or in a comment
            if hs > pos:
                pieces.append(self.literal(str(tok)[pos - start: hs - start]))
            pieces.append(f"d[{i}]")
            pos = he
        if pos == start:
            return self.literal(str(tok))
        tail = str(tok)[pos - start:]
        if tail:
            pieces.append(self.literal(tail))
        expr = " + ".join(pieces)
        if tok.type in RECHECKED_TERMINALS:
            pat = f"_{tok.type}"
            self.names[pat] = self.patterns[tok.type].fullmatch
            if tok.type == "INT" and len(pieces) == 1:
                self.lone.append(int(pieces[0][2:-1]))
                return f"_I[{pieces[0]}]"
            var = f"t{len(self.checks)}"
            self.checks.append(f"{var} = {expr}")
            # A lone decimal run (`d` above, or `dU`) is a valid INT unless it starts
            # with 0 and has more digits (`08`): the regex runs only then ("0" < d < "1").
            lone = tok.type == "INT" and pieces[0].startswith("d[") and len(pieces) == 2 and tail == "U"
            guard = f'"0" < {pieces[0]} < "1" and ' if lone else ""
            self.checks.append(f"if {guard}{pat}({var}) is None: raise ShapeMismatch")
            return f"_I[{var}]"
        return f"_I[{expr}]"


# Up to this many whole-INT holes are checked inline; more (a long data line, a string
# initializer) in one call: a builder's source, and its compile(), then has one line
# per number instead of two.
LONE_INLINE = 8


def _bad_ints(d: list, holes: tuple) -> bool:
    """Whether a whole-INT hole holds no INT (`08`): only a zero-led run of two or more
    digits needs the regex ("0" < s < "1")."""
    fullmatch = BUILDER_GLOBALS["_INT"]
    for i in holes:
        s = d[i]
        if "0" < s < "1" and fullmatch(s) is None:
            return True
    return False


# The globals every builder runs with: the node and marker classes, ShapeMismatch and
# the `_TERMINAL` fullmatch functions of the re-checked number terminals. Shared, so a
# builder is just a code object: it can be stored on disk (shapecache.py) and revived.
BUILDER_GLOBALS: dict[str, object] = {"ShapeMismatch": ShapeMismatch, "_bad_ints": _bad_ints, "_I": None,
                                      "_new": object.__new__,
                                      **NODE_CLASSES, **MARKER_CLASSES}


# `_I[...]`, around every string (and tuple of strings) a builder makes from holes, gives
# back the first equal value made during the same parse: a large file spells `%r12`,
# `.s32`, `0` or a `.loc` line number tens of thousands of times, and one object per
# spelling instead of one per use is a third of a parse tree's memory. Strings and
# tuples of strings are immutable, so sharing them is invisible; nodes are never shared.
class _Shared(dict):
    """The values met in one parse, each its own key (a hit is one C dict lookup)."""

    __slots__ = ()

    def __missing__(self, value):
        self[value] = value
        return value


class _Unshared:
    """Outside a parse: every value is itself."""

    __slots__ = ()

    def __getitem__(self, value):
        return value


_UNSHARED = BUILDER_GLOBALS["_I"] = _Unshared()


@contextlib.contextmanager
def sharing():
    """Within: equal strings made by builders and the grammar path are one object."""
    if BUILDER_GLOBALS["_I"] is not _UNSHARED:
        yield                   # already inside a parse (parse falling back to parse_full)
        return
    BUILDER_GLOBALS["_I"] = _Shared()
    try:
        yield
    finally:
        BUILDER_GLOBALS["_I"] = _UNSHARED


def shared(value):
    """`value`, or the equal value met first in this parse (see `sharing`)."""
    return BUILDER_GLOBALS["_I"][value]
_PATTERN_SOURCES: dict[str, str] = {}
_FIELDS: dict[type, tuple[str, ...] | None] = {}    # a class's dataclass fields; None: not a node


def _field_names(cls: type) -> tuple[str, ...] | None:
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None


def builder_code(text: str, tree, terminal_patterns) -> types.CodeType | None:
    """The code of a builder d -> tree for chunks of ``text``'s shape, or None if it has none."""
    if len(text) > MAX_SHAPE:
        return None
    writer = BuilderWriter(text, terminal_patterns)
    try:
        source = writer.source(tree)
    except NotAShape:
        return None
    skeleton = SKELETONS.get(source)
    if skeleton is None:
        skeleton = _compile_source(source)
        if skeleton is None:
            return None
        if len(SKELETONS) > SKELETON_LIMIT:
            SKELETONS.clear()
        SKELETONS[source] = skeleton
    _register_names(writer.names)
    return skeleton.replace(co_consts=_filled(skeleton.co_consts, writer.consts))


# Compiled builders by their source with placeholder strings: shapes that differ only
# in their strings (`add.s32 %r1, ...` / `sub.f32 %f1, ...`) share one compile(), the
# largest single cost of a new shape; each gets its strings put back by co_consts.
SKELETONS: dict[str, types.CodeType] = {}
SKELETON_LIMIT = 50_000


def _compile_source(source: str) -> types.CodeType | None:
    try:
        module = compile(source, "<ptx shape>", "exec")
    except (RecursionError, MemoryError, SyntaxError):
        return None      # too big to compile (a 1 MB chunk): it will not repeat either
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


def _filled(consts: tuple, values: list[str]) -> tuple:
    """`consts` with every placeholder replaced by its string (folded tuples included)."""
    out = []
    for c in consts:
        cls = c.__class__
        if cls is str and c.startswith(_HOLE):
            c = values[int(c[1:])]
        elif cls is tuple:
            c = _filled(c, values)
        out.append(c)
    return tuple(out)


def _register_names(names: dict) -> None:
    for name, fullmatch in names.items():
        if name not in BUILDER_GLOBALS:
            BUILDER_GLOBALS[name] = fullmatch
            if name.startswith("_"):
                _PATTERN_SOURCES[name] = fullmatch.__self__.pattern


def builder_from_code(code: types.CodeType):
    return types.FunctionType(code, BUILDER_GLOBALS)


def pattern_sources() -> dict[str, str]:
    """The regexes behind the builders' `_TERMINAL` names (stored with the builders)."""
    return dict(_PATTERN_SOURCES)


def add_pattern_sources(sources: dict[str, str]) -> None:
    """Make stored builders' `_TERMINAL` names resolvable without building the grammar."""
    for name, regex in sources.items():
        if name not in BUILDER_GLOBALS:
            BUILDER_GLOBALS[name] = re.compile(regex).fullmatch
            _PATTERN_SOURCES[name] = regex


def make_builder(text: str, tree, terminal_patterns):
    """A function d -> tree for chunks of ``text``'s shape, or None if it has none."""
    code = builder_code(text, tree, terminal_patterns)
    return None if code is None else builder_from_code(code)
