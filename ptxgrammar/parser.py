"""Parsing: the only module that touches Lark.

``parse(text)`` takes the fast path: ``scanner`` cuts the text into statement
chunks, each distinct chunk shape is parsed once with the grammar's chunk rules
and reused through ``shapes`` builders, and this module folds the chunks into
blocks, functions and sections. If the scanner is unsure anywhere, the whole
text is parsed with the full grammar instead, which also gives exact error
positions. Both paths build the same tree (a test checks this on the corpus).
"""

from __future__ import annotations

import functools
import gc
import operator
import re
from pathlib import Path

from . import scanner, shapecache
from .errors import ParseError, describe_expected, error_at
from .files import read_file_bytes
from .markers import MARKER_CLASSES, BlockClose, BlockOpen, FunctionOpen, GrammarCheck, SectionOpen
from .shapes import (
    DIGITS,
    HOLES,
    SKELETONS,
    ShapeMismatch,
    builder_code,
    builder_from_code,
    pattern_sources,
    shared,
    sharing,
)
from .tree import Block, Function, Module, Section, Version

GRAMMAR = Path(__file__).with_name("ptx.lark")


class _LarkNotLoaded(Exception):
    """Stands for Lark's exceptions until the first grammar loads them: none can be raised before."""


# Lark and its exceptions, bound by _load_lark() when the first grammar is built: a parse whose
# shapes are all stored never imports Lark (a fifth of a start-up).
Lark = Token = None
UnexpectedCharacters = UnexpectedInput = UnexpectedToken = _LarkNotLoaded


def _load_lark() -> None:
    global Lark, Token, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
    from lark import Lark, Token
    from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
CHUNK_RULES = {scanner.MODULE: "module_chunk", scanner.BODY: "body_chunk", scanner.SECTION: "section_chunk"}
# Bytes ptxas rejects anywhere, even in comments: non-ASCII, VT and other controls.
BAD_CHARACTER = re.compile(r"[^\t\n\r\f\x20-\x7e]")


class TriviaPostLex:
    """Records, for each token, the span of trivia before it (Lark drops trivia)."""

    always_accept = ()

    def __init__(self):
        self.text = ""
        self.starts: dict[int, int] = {}
        self.last_end = 0

    def reset(self, text: str) -> None:
        self.text, self.starts, self.last_end = text, {}, 0

    def process(self, stream):
        starts = self.starts
        prev = self.last_end
        for tok in stream:
            starts[tok.start_pos] = prev
            prev = tok.end_pos
            self.last_end = prev
            yield tok


class GrammarParser:
    """One Lark LALR parser with its trivia recorder and tree builder."""

    def __init__(self, start, spans: bool):
        from .build import TreeBuilder

        _load_lark()
        self.post = TriviaPostLex()
        prefix = self._span_prefix if spans else self._plain_prefix
        value = (lambda t: t) if spans else _plain_value
        self.lark = Lark.open(
            str(GRAMMAR), parser="lalr", lexer="contextual", start=start,
            postlex=self.post, transformer=TreeBuilder(prefix, value),
            keep_all_tokens=True, maybe_placeholders=False,
            cache=shapecache.grammar_cache(f"{start}{spans}"),     # the LALR tables, kept on disk
        )
        self.terminal_patterns = {
            t.name: re.compile(t.pattern.to_regexp()) for t in self.lark.terminals
        }

    def _plain_prefix(self, tok):
        return shared(self.post.text[self.post.starts[tok.start_pos]: tok.start_pos])

    def _span_prefix(self, tok):
        start = self.post.starts[tok.start_pos]
        return Token("TRIVIA", self.post.text[start: tok.start_pos], start_pos=start, end_pos=tok.start_pos)

    def parse(self, text: str, start: str):
        self.post.reset(text)
        return self.lark.parse(text, start=start)


def _plain_value(tok) -> str:
    return shared(str(tok))


_parsers: dict[str, GrammarParser] = {}


def _parser(kind: str) -> GrammarParser:
    if kind not in _parsers:
        if kind == "full":
            _parsers[kind] = GrammarParser("module", spans=False)
        else:
            _parsers[kind] = GrammarParser(list(CHUNK_RULES.values()), spans=kind == "spans")
    return _parsers[kind]


def without_gc(fn):
    """Run `fn` with the cyclic garbage collector paused, then file what it made under
    the oldest generation. A parse allocates hundreds of thousands of acyclic nodes;
    with the collector running, every young collection on the way re-scanned all of
    them (most of the time of a large parse), and the first one after it would scan
    the whole new tree once more (docs/performance.md). freeze() + unfreeze() moves
    every tracked object to the oldest generation without a scan: the tree is freed
    by reference counting as usual, and only full collections look at it."""
    @functools.wraps(fn)
    def paused(*args, **kwargs):
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            result = fn(*args, **kwargs)
            gc.freeze()
            gc.unfreeze()
            return result
        finally:
            gc.enable()
    return paused


# --- the full grammar -------------------------------------------------------------

@without_gc
@sharing()
def parse_full(text: str, filename: str = "<string>") -> Module:
    """Parse with the whole grammar at once (the reference path)."""
    _check_characters(text, filename)
    if text.count("(") + text.count("[") + text.count("{") > MAX_NESTING:
        try:
            _check_depth(text)
        except NestingTooDeep as e:
            raise _nesting_error(text, e, filename) from None
    p = _parser("full")
    try:
        module = p.parse(text, "module")
    except UnexpectedInput as e:
        raise _lark_error(text, e, filename) from None
    except GrammarCheck as e:
        raise error_at(text, e.token.start_pos, e.message, filename) from None
    return _with_version(module.with_changes(trailing=text[p.post.last_end:]), text, filename)


def _with_version(module: Module, text: str, filename: str) -> Module:
    """ptxas requires `.version` as the first directive (an empty file is not a module)."""
    if module.items and module.items[0].__class__ is Version:
        return module
    if not module.items:
        raise error_at(text, len(text), "missing .version directive: an empty module is not PTX", filename)
    where = len(module.items[0].leading)
    raise error_at(text, where, "missing .version directive: it must come first in a PTX module", filename)


def _check_characters(text: str, filename: str) -> None:
    bad = BAD_CHARACTER.search(text)
    if bad:
        raise error_at(text, bad.start(), _character_problem(text, bad.start()), filename)


def _character_problem(text: str, pos: int, raw: bool = False) -> str:
    """Why the character at `pos` is refused; `raw`: `text` is a file's bytes as latin-1."""
    ch = text[pos]
    if pos == 0 and text.startswith(("\ufeff", "\xef\xbb\xbf")):
        return "a UTF-8 byte order mark (BOM) is not allowed in PTX: save the file without it"
    if ord(ch) > 0x7F:
        what = f"non-ASCII byte 0x{ord(ch):02x}" if raw else f"non-ASCII character {ch!r}"
    else:
        what = f"control character {ch!r}"
    if raw and text.startswith(("\xff\xfe", "\xfe\xff")):
        return "a UTF-16 file: PTX is ASCII text"
    if raw and "\x00" in text[:4096]:
        return f"{what}: this is a binary file, not PTX text"
    return f"{what} is not allowed in PTX (even in comments)"


def _lark_error(text: str, e: UnexpectedInput, filename: str) -> ParseError:
    pos, message = _lark_problem(text, e)
    return error_at(text, pos, message, filename)


def _lark_problem(text: str, e: UnexpectedInput) -> tuple[int, str]:
    """(offset, message) of a Lark error in `text`."""
    if isinstance(e, UnexpectedToken):
        tok = e.token
        pos = tok.start_pos if tok.start_pos is not None else len(text)
        found = "end of input" if tok.type == "$END" else f"'{tok}'"
        return pos, f"unexpected {found}; expected {describe_expected(e.accepts or e.expected)}"
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream
        message = f"unexpected character '{text[pos]}'"
        if e.allowed:
            message += f"; expected {describe_expected(e.allowed)}"
        return pos, message
    return len(text), "unexpected end of input"


# --- the fast path -----------------------------------------------------------------

class Unsure(Exception):
    """The fast path cannot vouch for this text; use the full grammar."""


class StatementError(Exception):
    """A body statement (a chunk ending in `;`) that the grammar rejects.

    In a function body every statement ends at its first `;` outside strings
    and comments, so the scanner cannot have cut it wrongly: the error is real
    and is reported from the chunk, without re-parsing the whole file."""

    def __init__(self, error, offset: int):
        self.error, self.offset = error, offset


class ShapeCache:
    """Builders by (context, shape), shared across files, backed by the on-disk
    store of shapecache.py: a shape this process has not met is looked up there
    before the grammar is asked."""

    LIMIT = 200_000
    # Every shape gets its builder on first sight, big ones too (string initializers,
    # long `.b8` lines): one left to the grammar would make every later process build
    # the grammar for it (0.14 s and 3.3 MB), while compiling it costs nothing
    # measurable in a cold parse since builders share skeletons.

    def __init__(self):
        self.builders: dict[str, object] = {}
        # Chunks by their *digit layout* (every digit written as 0, see EXACT_KEY): chunks
        # of one layout have one shape and their digit runs at the same offsets, so a hit
        # needs no split: (builder, getter of the holes by fixed slices). A chunk with a
        # name hole (`_Z...`) is never filed here: its holes do not keep their length.
        self.exact: dict[str, dict[str, tuple]] = {c: {} for c in CHUNK_RULES}
        self.stored: dict[str, object] | None = None   # shape -> encoded code or None; read on first need
        self.learned: list[tuple[str, object]] = []    # met here first, not yet written

    def build(self, context: str, chunk: str) -> list:
        pieces = (HOLES if "_Z" in chunk else DIGITS).split(chunk)
        key = shape_key(context, pieces)
        builder = self.builders.get(key)
        if builder is None:
            builder = self._builder(context, chunk, key)
        if builder is _parse_chunk:
            return _parse_chunk(context, chunk)
        holes = pieces[1::2]
        if len(pieces) <= EXACT_MAX_PIECES and "_Z" not in chunk:
            plain = MARKER_NAMES.isdisjoint(builder.__code__.co_names)     # makes no scope marker
            layouts = self.exact[context]
            if len(layouts) > self.LIMIT:      # layouts outnumber shapes: bounded on their own
                layouts.clear()
            layouts[chunk.translate(EXACT_KEY)] = (builder, _hole_getter(pieces), plain)
        try:
            return builder(holes)
        except ShapeMismatch:
            return _parse_chunk(context, chunk)

    def _builder(self, context: str, chunk: str, key: str):
        if len(self.builders) > self.LIMIT:
            self.builders.clear()
            self._clear_exact()
        if self.stored is None:
            self.stored = self._read_store()
        if key in self.stored:
            code = shapecache.decode(self.stored[key])
        else:
            _check_depth(chunk)          # once per shape: chunks of one shape nest alike
            code = self._compile(context, chunk)
            blob = self.stored[key] = shapecache.encode(code)
            self.learned.append((key, blob))
        builder = self.builders[key] = _parse_chunk if code is None else builder_from_code(code)
        return builder

    def _clear_exact(self) -> None:
        for layouts in self.exact.values():
            layouts.clear()

    def _read_store(self) -> dict:
        # the shipped store, the user's index and log, each opened when first needed
        return shapecache.StoredShapes(shapecache.store_path(), shapecache.index_path())

    def save(self) -> None:
        """Write the shapes learned (and the stored ones used) since the last save to the
        user's store (shapecache.StoredShapes.save)."""
        if isinstance(self.stored, shapecache.StoredShapes):
            self.stored.save(self.learned, pattern_sources())
        elif self.learned:          # the store ignored for reading (forget(store=False)): still kept
            shapecache.append_record(shapecache.store_path(), (pattern_sources(), self.learned))
        self.learned = []

    def forget(self, store: bool = True) -> None:
        """Empty the in-memory cache (benchmarks: a cold start). With ``store`` the
        on-disk store is read again on the next unknown shape; without, it is
        ignored until the next forget."""
        self.builders.clear()
        self._clear_exact()
        SKELETONS.clear()
        self.learned = []
        self.stored = None if store else {}

    @staticmethod
    def _compile(context: str, chunk: str):
        p = _parser("spans")
        try:
            tree = p.parse(chunk, CHUNK_RULES[context])
        except (UnexpectedInput, GrammarCheck) as e:
            if context == scanner.BODY and chunk.endswith(";"):
                raise StatementError(e, 0) from None
            raise Unsure from None
        if p.post.last_end != len(chunk):
            raise Unsure
        return builder_code(chunk, tree, p.terminal_patterns)


def shape_key(context: str, pieces: list) -> str:
    """The shape of a chunk split at its holes (text between the holes), in its context."""
    return context + "\0".join(pieces[0::2])


DATA_RUN_KEY = shape_key(scanner.SECTION, DIGITS.split(scanner.DATA_RUN_SAMPLE))


# Every digit as `0`: a chunk's digit layout (its text with each digit run kept in place
# and in length). Two chunks of one layout split into the same shape and the same hole
# offsets; `0` keeps the scanner's view too (it only tests for digits, never which).
EXACT_KEY = str.maketrans("123456789", "000000000")
MARKER_NAMES = frozenset(MARKER_CLASSES)
# The text's layout is made this many characters at a time: one copy of a large text
# would stay in the process's heap after the parse (peak memory of the whole loop).
LAYOUT_WINDOW = 1 << 16


# Chunks with more holes (long data lines, string initializers) are rarely laid out
# alike twice, and their getters would hold a slice per hole: they are split each time.
EXACT_MAX_PIECES = 2 * 12 + 1


def _hole_getter(pieces: list):
    """chunk -> its holes, for chunks laid out like the one `pieces` split (a tuple; a
    trailing empty slice keeps a single hole a tuple too). Equal slices are one object."""
    spans, pos = [], 0
    for i, piece in enumerate(pieces):
        if i % 2:
            span = (pos, pos + len(piece))
            spans.append(_SLICES.get(span) or _SLICES.setdefault(span, slice(*span)))
        pos += len(piece)
    return operator.itemgetter(*spans, _EMPTY_SLICE)


_SLICES: dict[tuple[int, int], slice] = {}
_EMPTY_SLICE = slice(0, 0)


def _parse_chunk(context: str, chunk: str) -> list:
    if chunk.count("(") + chunk.count("[") + chunk.count("{") > MAX_NESTING:
        _check_depth(chunk)
    p = _parser("plain")
    try:
        items = p.parse(chunk, CHUNK_RULES[context])
    except (UnexpectedInput, GrammarCheck) as e:
        if context == scanner.BODY and chunk.endswith(";"):
            raise StatementError(e, 0) from None
        raise Unsure from None
    if p.post.last_end != len(chunk):
        raise Unsure        # trailing trivia would belong to no token
    return items


SHAPES = ShapeCache()


MAX_NESTING = 256
_BRACKETS = re.compile(r'//[^\n\r]*|/\*.*?\*/|"[^"]*"|[(\[{]|[)\]}]', re.S)
_BRACKET_NAMES = {"(": "parentheses", "[": "brackets", "{": "braces"}


class NestingTooDeep(Exception):
    """Brackets nested deeper than MAX_NESTING; ``pos`` is where the nesting starts."""

    def __init__(self, pos: int = 0, what: str = "blocks"):
        super().__init__(what)
        self.pos, self.what = pos, what


def _check_depth(text: str, base: int = 0) -> None:
    """Raise NestingTooDeep at the outermost bracket of a too-deep nest (comments and
    strings skipped). Long flat expressions are fine: only depth counts."""
    stack: list[tuple[int, str]] = []
    for m in _BRACKETS.finditer(text):
        g = m.group()
        if g in "([{":
            stack.append((m.start(), g))
            if len(stack) > MAX_NESTING:
                start = next(pos for pos, kind in stack if kind == g)
                raise NestingTooDeep(base + start, _BRACKET_NAMES[g])
        elif g in ")]}":
            if stack:
                stack.pop()


class _Assembler:
    """Folds chunk results (nodes and open/close markers) into the nested tree.

    ``items`` is the list of the innermost open scope and ``context`` its scanner
    context, kept as plain attributes: they are read once per statement."""

    MARKERS = frozenset((FunctionOpen, BlockOpen, SectionOpen, BlockClose))

    def __init__(self):
        self.stack: list[tuple[object, list]] = [(None, [])]
        self.items: list = self.stack[0][1]
        self.context = scanner.MODULE

    def add(self, item) -> None:
        cls = item.__class__
        if cls is BlockClose:
            self._close(item.brace)
        elif cls in (FunctionOpen, BlockOpen, SectionOpen):
            if len(self.stack) > MAX_NESTING:
                raise NestingTooDeep
            self.stack.append((item, []))
        else:
            self.items.append(item)
            return
        opener, self.items = self.stack[-1]
        self.context = (scanner.MODULE if opener is None else
                        scanner.SECTION if opener.__class__ is SectionOpen else scanner.BODY)

    def _close(self, brace: str) -> None:
        if len(self.stack) == 1:
            raise Unsure
        opener, items = self.stack.pop()
        if opener.__class__ is SectionOpen:
            node = Section(opener.name, tuple(items), (*opener.trivia, brace))
        else:
            open_brace = opener.brace
            node = Block(tuple(items), (open_brace, brace))
            if opener.__class__ is FunctionOpen:
                node = Function(opener.head, node, ())
        self.stack[-1][1].append(node)

    def module(self, trailing: str) -> Module:
        if len(self.stack) != 1:
            raise Unsure
        return Module(tuple(self.stack[0][1]), trailing, ())


def parse_fast(text: str) -> Module:
    """Scanner + shape cache; raises Unsure where the full grammar must decide.

    A chunk whose digit layout is known (SHAPES.exact) goes straight to its builder;
    a builder that makes no scope marker has its nodes appended in one call. In a
    section, a run of one-number data lines is built line by line by their one shape's
    builder (scanner.DATA_RUN)."""
    asm = _Assembler()
    module_context, section_context = scanner.MODULE, scanner.SECTION
    data_run = scanner.DATA_RUN.match
    pos, end = 0, len(text)
    w0 = w1 = 0                     # the digit layout of text[w0:w1] is `window`
    window = ""
    context = None
    while pos < end:
        if context is not asm.context:          # the scope changed: re-read what depends on it
            context = asm.context
            match = scanner.PATTERNS[context].match
            layouts = SHAPES.exact[context]
            extend = asm.items.extend
        if context is section_context:
            run = data_run(text, pos)
            if run is not None:
                stop = _data_run(run, extend)
                if stop != pos:
                    pos = stop
                    continue
        m = match(text, pos)
        if m is None:
            raise Unsure
        stop = m.end()
        if stop == pos:
            raise Unsure
        if stop == end and context == module_context and not m.group("body").endswith((";", "{")):
            return _finish(asm, text, pos, m)
        chunk = text[pos:stop]
        if stop > w1:               # a window at a time, not the whole text's layout at once
            w0, w1 = pos, max(stop, pos + LAYOUT_WINDOW)
            window = text[w0:w1].translate(EXACT_KEY)
        entry = layouts.get(window[pos - w0:stop - w0])
        try:
            if entry is not None and entry[2]:
                try:
                    extend(entry[0](entry[1](chunk)))
                    pos = stop
                    continue
                except ShapeMismatch:
                    items = _parse_chunk(context, chunk)
            else:
                items = SHAPES.build(context, chunk)
        except StatementError as e:     # located in the whole text
            e.offset = pos
            raise
        except NestingTooDeep as e:
            e.pos += pos
            raise
        _add_all(asm, items)
        extend = asm.items.extend
        pos = stop
    return asm.module("")


def _data_run(run: re.Match, extend) -> int:
    """Build the lines of a DATA_RUN match; where the next chunk starts. Stops before a
    line its builder refuses (`08`), and builds nothing while the shape has no builder:
    the statement loop takes that line (and, the first time, makes the builder)."""
    builder = SHAPES.builders.get(DATA_RUN_KEY)
    pos = run.start()
    if builder is None or builder is _parse_chunk:
        return pos
    width = run.group(1)
    sep = "\n.b" + width + " "
    step = len(sep)
    for value in run.group().split(sep)[1:]:
        try:
            extend(builder((width, value)))
        except ShapeMismatch:
            return pos
        pos += step + len(value)
    return pos


def _add_all(asm: _Assembler, items) -> None:
    markers = _Assembler.MARKERS
    for item in items:
        if item.__class__ in markers:
            asm.add(item)
        else:
            asm.items.append(item)


def _finish(asm: _Assembler, text: str, pos: int, m: re.Match) -> Module:
    """The last module-level chunk: items without terminators, then trailing trivia."""
    if not m.group("body"):
        if not _only_trivia(text[pos:]):
            raise Unsure    # the full grammar reports what is not trivia, located
        return asm.module(text[pos:])
    p = _parser("plain")
    try:
        items = p.parse(text[pos:], "module_chunk")
    except (UnexpectedInput, GrammarCheck):
        raise Unsure from None
    for item in items:
        asm.add(item)
    return asm.module(text[pos + p.post.last_end:])


@without_gc
@sharing()
def parse(text: str, filename: str = "<string>") -> Module:
    """Parse PTX text into a lossless Module (fast path, full grammar when unsure)."""
    _check_characters(text, filename)
    try:
        try:
            return _with_version(parse_fast(text), text, filename)
        except Unsure:
            return parse_full(text, filename)
        except StatementError as e:
            raise _chunk_error(text, e, filename) from None
        finally:
            SHAPES.save()               # shapes met first here, for later processes
    except NestingTooDeep as e:
        if e.what == "blocks":         # the assembler counts blocks, not positions
            try:
                _check_depth(text)
            except NestingTooDeep as located:
                e = located
        raise _nesting_error(text, e, filename) from None


def _chunk_error(text: str, e: StatementError, filename: str) -> ParseError:
    """The error of one body statement, at its place in the whole text."""
    err = e.error
    if isinstance(err, GrammarCheck):
        return error_at(text, e.offset + err.token.start_pos, err.message, filename)
    pos, message = _lark_problem(text[e.offset:], err)
    return error_at(text, e.offset + pos, message, filename)


def _nesting_error(text: str, e: NestingTooDeep, filename: str) -> ParseError:
    return error_at(text, e.pos, f"{e.what} nested deeper than {MAX_NESTING} levels; the nesting starts here",
                    filename)


def parse_file(path, filename: str | None = None) -> Module:
    """Parse a file, keeping its bytes exactly (no newline translation)."""
    return parse(read_ptx(path, filename), filename or str(path))


def read_ptx(path, filename: str | None = None) -> str:
    """A PTX file's text, its bytes exactly; a located ParseError for bytes PTX does not allow."""
    return decode_ptx(read_file_bytes(path), filename or str(path))


def decode_ptx(data: bytes, filename: str) -> str:
    """PTX bytes (a file's, standard input's) as text, or a located ParseError at the first byte
    PTX does not allow (an earlier control byte counts before a later non-ASCII one)."""
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
        pos = BAD_CHARACTER.search(text).start()
        raise error_at(text, pos, _character_problem(text, pos, raw=True), filename) from None


@functools.lru_cache(maxsize=1)
def _trivia_pattern():
    """The grammar's %ignore'd terminals (whitespace, comments, line markers), repeated."""
    lark = _parser("full").lark
    ignored = [t.pattern.to_regexp() for t in lark.terminals if t.name in lark.lexer_conf.ignore]
    return re.compile("(?:" + "|".join(f"(?:{r})" for r in ignored) + r")*\Z")


def _only_trivia(text: str) -> bool:
    return not text.strip() or _trivia_pattern().match(text) is not None


def grammar_terminals() -> list[tuple[str, str, int, bool]]:
    """The grammar's terminals as (name, regex, priority, is_literal), named and anonymous
    (`"@"` is `AT`): what a tokenizer for the same language (highlight/lexer.py) is built from."""
    terminals = _parser("full").lark.terminals
    return [(t.name, t.pattern.to_regexp(), t.priority, t.pattern.type == "str") for t in terminals]
