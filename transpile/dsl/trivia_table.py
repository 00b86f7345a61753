"""The trivia table: a module's layout exceptions, kept out of the kernel body.

`--sugar` output ends with `ptx.trivia({key: entry, ...})` (or `trivia = {...}` and
`ptx.trivia(trivia)`) after the line TRAILER. `python_to_ptx`
runs that trailer first (`split_trailer`), so every statement the body records finds its entry.

A key names a PTX statement by what it says, not where it is: `fingerprint(stmt)` (a hash of its
tokens) and, after the first, `.N` for the N-th statement with those tokens (`}` + the opener's key
for a closing brace; END for the text after the last statement). A statement moved in the
Python therefore takes its layout with it; an edited one takes the Style's defaults. A call
inside a `for` loop records one statement per iteration, each with its own key, so the table
keeps every iteration's layout while the loop body holds none.

Statements with the same entry may share it: a tuple of their keys is one key of the dict.

An entry (every field optional):
    "fmt": {token index: trivia}          the tokens the Style does not predict
    "indent"/"lead": str                  the statement's own indent (or whole same-line lead)
    "lines": [str or None, ...]           the whole lines before it; None: the next line the body
                                          itself writes (a comment call, an inline-asm marker);
                                          [indent]: that line, a comment, written at `indent`;
                                          [indent, pad]: and `pad` for the space before its inner `//`
    "after": [str, ...]                   whole lines after it (an `// end inline asm` marker)
    "tail": str                           other text after the previous statement on its line
    "inline": str or None                 a comment right after it is on its line, after this
                                          whitespace (the body's `ptx.comment(text)`); None: not
                                          (BRACES's "inline" is that of every nested `{` and `}` without one)

A whitespace value may be written `" " * 40` (the trailer is Python, run before the body).

LLVM's comment column (`comment_column`: the llvm preset's 40) places the body's comment lines
the table says nothing of, as LLVM's printer does: at column 0 (`// %bb.1:`), a second comment
on the line padded to the column (`// %bb.1:<31 spaces>// %.lr.ph`), the comments right
before a function (`// @kernel`) or its `}` (`// -- End function`) alone at the column, the
`// .globl` directive at a tab, and a blank line before `// %bb.0:` and `// .globl`; a slot's
`[indent]` keeps a comment from all but the padding (and from its blank line).
"""

from __future__ import annotations

import hashlib
import re

from ptx2py.ptxgrammar.tree import Label

from ..style import flatten
from .errors import DSLError

TRAILER = "# Layout of the PTX text (whitespace, markers), keyed by statement; py2ptx reads it first."
END = "$end"
BRACES = "$braces"   # the entry of every nested `{` and `}` without an "inline" of its own
_FIELDS = frozenset({"fmt", "indent", "lead", "lines", "after", "tail", "inline"})


def fingerprint(stmt) -> str:
    """12 hex digits naming a statement's tokens (its nested statements excluded)."""
    toks = "\x00".join([t[3] for t in flatten(stmt, [])])
    return hashlib.blake2b(toks.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


class KeyCounter:
    """The key of each statement in recording order (the generator and the recorder agree)."""

    def __init__(self):
        self.seen: dict = {}

    def key(self, stmt) -> str:
        fp = fingerprint(stmt)
        n = self.seen.get(fp, 0)
        self.seen[fp] = n + 1
        return fp if n == 0 else f"{fp}.{n}"


class TriviaTable:
    """`entries`: {key: entry}; a tuple of keys shares one entry (`("k1", "k2"): {...}`)."""

    def __init__(self, entries: dict):
        if entries.__class__ is not dict:
            raise DSLError("ptx.trivia() takes a dict {statement key: layout entry}")
        table = {}
        for k, e in entries.items():
            keys = k if k.__class__ is tuple and k else (k,)
            if any(x.__class__ is not str for x in keys) or e.__class__ is not dict or not set(e) <= _FIELDS:
                raise DSLError(f"ptx.trivia(): entry {k!r} is not a dict of {sorted(_FIELDS)}")
            for x in keys:
                if x in table:
                    raise DSLError(f"ptx.trivia(): key {x!r} given twice")
                table[x] = e
        self.entries = table
        self.keys = KeyCounter()

    def entry(self, key: str) -> dict:
        return self.entries.get(key) or {}


def merge_lines(template, body: list, column: int | None = None, at_function: bool = False) -> list:
    """The lines before a statement: the table's lines with the body's own lines in the None
    slots, in order (body lines beyond the slots come last; unfilled slots are dropped).
    With a comment `column` (see `column_comments`) the body's comments are placed by it, a
    slot's `[indent]` keeping its padding to the column; `at_function`: the lines come before
    a function or its closing `}`."""
    if not template:
        return body if column is None else column_comments(body, column, at_function)
    out, k = [], 0
    for line in template:
        if line.__class__ is str:
            out.append(line)
        elif k < len(body):
            mine = body[k]
            k += 1
            if line is not None and mine.__class__ is tuple:  # a comment, at the table's indent
                if len(line) > 1:
                    mine = line[0] + mine[0] + _padded(mine[1], line[1])
                elif column is not None:
                    mine = column_line(line[0], mine[1], column)
                else:
                    mine = line[0] + mine[0] + mine[1]
            out.append(mine)
    out.extend(body[k:])
    return out if column is None else column_comments(out, column, at_function)


# A comment holding a second one after one space: the body's spelling of a padded pair.
_INNER = re.compile(r"((?:(?!//).)*?\S) (//.*)\Z", re.S)
# comments the DSL writes for a statement (inline-asm markers, `demoted=True`): at its indent
MARKER_TEXTS = frozenset({" begin inline asm", " end inline asm", " demoted variable"})


COMMENT_COLUMNS = {"llvm": 40}   # a preset's comment column (LLVM's MCAsmInfo::CommentColumn)


def comment_column(style) -> int | None:
    return COMMENT_COLUMNS.get(style.preset)


def llvm_column(text: str) -> int:
    """The column LLVM's formatted_raw_ostream counts after `text` (one line): tab stops every
    8 columns, the line's leading tab not counted (as every padded comment of the corpus says)."""
    c = 0
    for ch in text[1:] if text[:1] == "\t" else text:
        c += 1
        if ch == "\t":
            c += (8 - (c & 7)) & 7
    return c


def column_line(indent: str, text: str, column: int) -> str:
    """A comment line at `indent`, a second comment in it padded to `column` (one space at least)."""
    m = _INNER.match(text)
    if m is None:
        return indent + "//" + text
    head = indent + "//" + m.group(1)
    return head + " " * max(column - llvm_column(head), 1) + m.group(2)


# LLVM NVPTX's directives printed as comments (MCAsmInfo's GlobalDirective "\t// .globl\t") ...
TAB_TEXTS = (" .globl\t", " .weak\t")
# ... and the comments it opens with a blank line: the entry block's, the first `.globl` after the header
BLANK_BEFORE = (" %bb.0:", " .globl\t")


def column_comments(lines: list, column: int, at_function: bool) -> list:
    """The body's comment lines (tuples) placed as LLVM prints them (`placed_comment`), a blank
    line before each BLANK_BEFORE one; MARKER_TEXTS stay for the statement's indent."""
    out = []
    trailing = at_function
    for line in reversed(lines):
        if line.__class__ is tuple and line[1] not in MARKER_TEXTS:
            text = line[1]
            out.append(placed_comment(text, column, trailing))
            if text.startswith(BLANK_BEFORE):
                out.append("")
                trailing = False
        else:
            if line.__class__ is str and not line.strip(" \t"):
                trailing = False
            out.append(line)
    out.reverse()
    return out


def placed_comment(text: str, column: int, trailing: bool) -> str:
    """A comment line as LLVM prints it: a TAB_TEXTS directive at a tab, a comment alone among the
    last lines before a function or its `}` (`trailing`) at `column`, any other at column 0; a
    second comment in it padded to `column`."""
    if text.startswith(TAB_TEXTS):
        indent = "\t"
    elif trailing and _INNER.match(text) is None:
        indent = " " * column
    else:
        indent = ""
    return column_line(indent, text, column)


def _padded(text: str, pad: str) -> str:
    """The comment text with `pad` for the one space before its inner `//` (unchanged without one)."""
    if pad.__class__ is not str or pad.strip(" \t"):
        raise DSLError(f"ptx.trivia(): a comment's padding must be spaces and tabs, not {pad!r}")
    i = text.find(" //")
    return text if i < 0 else text[:i] + pad + text[i + 1:]


def same_line_pad(rec, text=None):
    """The "inline" whitespace of the statement (or `}`) just recorded when nothing has come
    since it but its "after" lines: a `ptx.comment(text)` then ends that statement's line.
    After a nested `{` or `}` (a block inside a function) without an "inline" of its own, the
    BRACES entry's (nvcc's `{ // callseq 0, 0`, `} // callseq 0`); after a label, under LLVM's
    comment column, its `label_pad` for the comments LLVM writes on a label's line."""
    key = rec.last_key
    if rec.tail or len(rec.lines) != rec.n_after or key is None:
        return None
    entry = rec.trivia.entry(key)
    if "inline" in entry:
        return entry["inline"]
    opens = rec.open_keys   # a brace inside a function: its `{` opened below another one
    if key[:1] == "}" and opens or len(opens) >= 2 and opens[-1] == key:
        return rec.trivia.entry(BRACES).get("inline")
    column = comment_column(rec.style)
    if column is not None and text is not None and rec.items and rec.items[-1].__class__ is Label:
        return label_pad(rec.items[-1], text, column)
    return None


# LLVM's comments on a basic block's label line (AsmPrinter's AddComment): the IR block's name
# (`// %.lr.ph`) and its loop (`// =>This Inner Loop Header: Depth=1`, `//   in Loop: Header=...`)
LABEL_COMMENTS = (" %", " =>", "  in Loop:", "  Parent Loop", "  Child Loop")


def label_pad(label, text: str, column: int):
    """The whitespace before `text` on the line of `label` (recorded) when it is a comment LLVM
    writes there, at `column`; else None."""
    if not text.startswith(LABEL_COMMENTS):
        return None
    line = "".join([n.trivia[i] + tok for n, i, _, tok in flatten(label, [])]).rsplit("\n", 1)[-1]
    return " " * max(column - llvm_column(line), 1)


def split_trailer(source: str):
    """(body, trailer) of a generated module, the trailer being the text from the TRAILER
    line on (None when there is none); the body keeps its line numbers."""
    i = source.rfind("\n" + TRAILER + "\n")
    if i < 0:
        return source, None
    head = source[:i + 1]
    return head, "\n" * head.count("\n") + source[i + 1:]
