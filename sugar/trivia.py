"""Layout out of the body: every `fmt=`, `indent=`, `lead=`, `close_indent=`, `close_lead=`
keyword, the whitespace before a same-line comment (`inline=`, tagged by sugar/comment_keys.py) or
inside one before a second `//`, blank line, inline-asm marker, long comment and `ptx.tail` text moves into the trivia
table after the body (`ptx.trivia({...})`, transpile/dsl/trivia_table.py), keyed by the PTX
statement it belongs to (statements with the same entry share it under a tuple of their keys).
The body keeps the program and its short comments.

Keys name statements by their tokens, so a moved statement takes its layout with it; the
`// end inline asm` marker (and the lines before it) is kept as the previous statement's
"after" lines, so an inline-asm statement moves with both its markers. The pass runs before
statements are rolled into `for` loops (sugar/repeat.py, sugar/name_runs.py): each statement a
loop stands for finds its own entry, by its own tokens, when the loop runs.
"""

from __future__ import annotations

import re
from collections import Counter

from ptx2py.ptxgrammar.tree import Function, Label
from ptx2py.transpile.dsl.trivia_table import (
    BLANK_BEFORE,
    BRACES,
    END,
    LABEL_COMMENTS,
    MARKER_TEXTS,
    column_line,
    comment_column,
    fingerprint,
    label_pad,
    placed_comment,
)
from ptx2py.transpile.format import Pair
from ptx2py.transpile.generator import q

from .comment_keys import COMMENT_TAIL
from .ir import Call, Display, Kw, stmt, unq

NAMES = ()
LONG_COMMENT = 100  # a comment longer than this goes to the table (Triton's `// wait for regs: ...`)
MARKERS = frozenset({"// begin inline asm", "// end inline asm"})
# a comment holding a second one after padding (LLVM's `// %bb.14:<30 spaces>//   in Loop: ...`):
# the body reads it with one space there, the table keeps the padding
_INNER_PAD = re.compile(r"((?:(?!//).)*?\S)([ \t]{2,})(//.*)\Z", re.S)
_KW_FIELD = {"indent": "indent", "lead": "lead", "close_indent": "indent", "close_lead": "lead"}


def run(stmts, ctx):
    gen = ctx.generator
    tags = getattr(gen, "tags", None)
    if tags is None:
        return stmts
    entries: dict = {}
    brace_pad, braces, own_line = _brace_default(gen.leads)
    if brace_pad is not None:
        entries[BRACES] = {"inline": brace_pad}
        for k in own_line:
            entries.setdefault(k, {})["inline"] = None
    body_lines: dict = {}   # key -> {line index: [indent] or [indent, inner pad]} of comments kept in the body
    moved: dict = {}        # key -> {line index: raw line}
    texts: dict = {}        # key -> {line index: the text of a comment kept in the body}
    column = comment_column(gen.style)
    labels = _labels(gen.module) if column is not None else {}
    out = []
    for s in stmts:
        e = s.expr
        t = tags.get(id(e)) if e.__class__ is Call else None
        if t is not None and t[0] is e:
            key, kind, value = t[1], t[2], t[3]
            if kind == "tail":
                entries.setdefault(key, {})["tail"] = value
                continue
            if kind == "inline":   # the body keeps the comment's text, the table its whitespace
                at_column = key in labels and value == label_pad(labels[key], unq(e.items[0]), column)
                if (value != brace_pad or key not in braces) and not at_column:
                    entries.setdefault(key, {})["inline"] = value
                e = Call(e.head, e.items[:1])
                s = type(s)(e, s.depth, s.prefix, s.trailer)
            if kind == "line":
                line = gen.leads[key][1][value]
                if _to_table(line):
                    moved.setdefault(key, {})[value] = line
                    continue
                kw = [i for i in e.items if i.__class__ is Kw and i.name == "indent"]
                m = _INNER_PAD.match(unq(e.items[0]) or "")
                texts.setdefault(key, {})[value] = unq(e.items[0]) if m is None else m.group(1) + " " + m.group(3)
                if kw or m:   # the body keeps the text, the table its indent (and inner padding)
                    indent = unq(kw[0].value) if kw else gen.leads[key][2]
                    body_lines.setdefault(key, {})[value] = [indent, m.group(2)] if m else [indent]
                    text = e.items[0] if m is None else q(m.group(1) + " " + m.group(3))
                    e = Call(e.head, [text] + [i for i in e.items[1:] if not kw or i is not kw[0]])
                    s = type(s)(e, s.depth, s.prefix, s.trailer)
        if e.__class__ is Call:
            kept = []
            for i in e.items:
                if i.__class__ is Kw and i.name == "end_indent":  # the table re-indents the marker
                    continue
                t = tags.get(id(i)) if i.__class__ is Kw else None
                if t is not None and t[0] is i:
                    entry = entries.setdefault(t[1], {})
                    if t[2] == "fmt":
                        entry["fmt"] = t[3]
                    else:
                        entry[_KW_FIELD[i.name]] = t[3]
                    continue
                kept.append(i)
            if len(kept) != len(e.items):
                e.items[:] = kept
                e._flat = None
        out.append(s)
    generated = None
    if column is not None:   # the comments the column places need no slot (`_column_slots`)
        body_lines, generated = _column_slots(gen, texts, moved, column)
        _own_line_after_labels(gen, entries, texts, moved, labels)
    _lines(gen, entries, moved, body_lines, generated)
    # the style and the table go after the body (transpile.generator.render), even when empty
    gen.trivia_table = Display("{", "}", _shared(entries))
    return _empty_sections(_nonempty_blocks(out))


ITEM_INDENT = 4  # `trivia = {` / the entries (transpile.generator.render)
LINE = 88


def _shared(entries: dict) -> list:
    """The table's items: the statements with one same entry under one tuple key, as many
    to a key as fit its line (`("k1", "k2", "k3"): {"lines": [None, ["\t"]]},`), each group
    where its first statement's entry was; a lone key stays a plain string."""
    groups: dict = {}
    for k, v in entries.items():
        e = _entry(v)
        groups.setdefault(e.flat(), (e, []))[1].append(k)
    items = []
    for e, keys in groups.values():
        room = LINE - ITEM_INDENT - len(": " + e.flat() + ",") - len("()")
        chunk = []
        for k in keys:
            if chunk and len(", ".join(q(x) for x in [*chunk, k])) > room:
                items.append(_item(chunk, e))
                chunk = []
            chunk.append(k)
        items.append(_item(chunk, e))
    return items


def _item(keys, e) -> Pair:
    return Pair(q(keys[0]) if len(keys) == 1 else Display("(", ")", [q(k) for k in keys]), e)


def _brace_default(leads) -> tuple:
    """(pad, nested brace keys, own-line keys): the padding of most same-line comments after a
    `{` or `}` of a block inside another (nvcc's `{ // callseq 0, 0`, `} // callseq 0`) when
    they outnumber the nested braces a comment follows on its own line (those then say
    "inline": None), else (None, nested brace keys, [])."""
    closers = {k[1:] for k in leads if k[:1] == "}"}
    braces, open_ = set(), []
    for key in leads:   # leads come in nesting order: an opener's key, its body's, its "}" key
        if key[:1] == "}":
            open_.pop()
            if open_:
                braces.add(key)
        elif key in closers:
            if open_:
                braces.add(key)
            open_.append(key)
    pads, own, prev = Counter(), [], None
    for key, (tail, lines, _) in leads.items():
        if prev in braces:
            if tail and COMMENT_TAIL.fullmatch(tail):
                pads[tail[:tail.index("//")]] += 1
            elif not tail and any(line.lstrip(" \t").startswith("//") for line in lines):
                own.append(prev)
        prev = key
    pad, n = pads.most_common(1)[0] if pads else (None, 0)
    return (pad, braces, own) if n > len(own) + 1 else (None, braces, [])


def _nonempty_blocks(stmts):
    """A block whose every line moved to the table keeps a `pass`: Python needs a body."""
    out = []
    for i, s in enumerate(stmts):
        out.append(s)
        if s.trailer.endswith(":") and (i + 1 == len(stmts) or stmts[i + 1].depth <= s.depth):
            out.append(stmt("pass", s.depth + 1))
    return out


def _empty_sections(stmts):
    """`with ptx.section(name):` holding only `pass` -> `ptx.empty_section(name)`: no line that
    carries nothing (its braces' layout is in the table under the same keys)."""
    out, k = [], 0
    while k < len(stmts):
        s = stmts[k]
        e = s.expr
        if (s.prefix == "with " and e.__class__ is Call and e.head == "ptx.section" and len(e.items) == 1
                and e.items[0].__class__ is str and k + 1 < len(stmts) and stmts[k + 1].expr == "pass"
                and (k + 2 == len(stmts) or stmts[k + 2].depth <= s.depth)):
            out.append(stmt(Call("ptx.empty_section", [e.items[0]]), s.depth))
            k += 2
            continue
        out.append(s)
        k += 1
    return out


def _to_table(line: str) -> bool:
    text = line.strip(" \t")
    return not text or not text.startswith("//") or text in MARKERS or len(text) > LONG_COMMENT


def _lines(gen, entries, moved, body_lines, generated=None) -> None:
    """The `lines` (and `after`) field of every key whose lead lost a line to the table
    (`generated`: key -> the indexes of the blank lines the comment column writes itself)."""
    prev = None
    for key, (tail, lines, indent) in gen.leads.items():
        gone = moved.get(key, {})
        kept = body_lines.get(key, {})
        template = [gone[n] if n in gone else kept[n] if n in kept else _body_marker(line, indent)
                    for n, line in enumerate(lines)]
        end = _after_end(lines, gone)
        if end and prev is not None:
            entries.setdefault(prev, {})["after"] = template[:end]
            template = template[end:]
        skip = generated.get(key) if generated else None
        if skip:
            template = [x for n, x in enumerate(template, end if end and prev is not None else 0) if n not in skip]
        if any(x is not None for x in template):
            entries.setdefault(key, {})["lines"] = _trim(template)
        prev = key


def _labels(module) -> dict:
    """trivia key -> Label statement, for every label (keys as trivia_table.KeyCounter gives them:
    labels of the same tokens numbered in document order)."""
    by_fp: dict = {}
    for node in module.walk():
        if node.__class__ is Label:
            by_fp.setdefault(fingerprint(node), []).append(node)
    return {fp if n == 0 else f"{fp}.{n}": label for fp, found in by_fp.items() for n, label in enumerate(found)}


def _own_line_after_labels(gen, entries, texts, moved, labels) -> None:
    """"inline": None for a label whose next line is a comment LLVM would write on the label's line
    (trivia_table.LABEL_COMMENTS) but which is on a line of its own: the first line the body writes
    after the label, nothing before it on the label's line."""
    prev = None
    for key, (tail, lines, _) in gen.leads.items():
        kept = texts.get(key)
        # blanks after the label (tail) still leave the comment on a line of its own
        if prev in labels and not (tail or "").strip(" \t") and kept and "inline" not in entries.get(prev, {}):
            n = min(kept)
            gone = moved.get(key, {})
            if all(i in gone for i in range(n)) and kept[n].startswith(LABEL_COMMENTS):
                entries.setdefault(prev, {})["inline"] = None
        prev = key


def _column_slots(gen, texts, moved, column) -> tuple:
    """(key -> {line index: its slot}, key -> {indexes of blank lines}): the slots of the body's
    comments the comment column does not place as they are (see trivia_table.column_comments):
    [indent] where the comment is at another column (or lacks the blank line the column writes
    before it), [indent, pad] where a second comment in it is not padded to the column; and the
    blank lines the column writes itself (the table leaves them out)."""
    functions = {fingerprint(item) for item in gen.module.items if item.__class__ is Function}
    slots: dict = {}
    generated: dict = {}
    for key, kept in texts.items():
        lines = gen.leads[key][1]
        gone = moved.get(key, {})
        end = _after_end(lines, gone)
        at_function = key.lstrip("}").split(".")[0] in functions
        for n, text in kept.items():
            line = lines[n]
            trailing = at_function and all(x.strip(" \t") for x in lines[n + 1:])
            marker = text in MARKER_TEXTS
            placed = gen.leads[key][2] + "//" + text if marker else placed_comment(text, column, trailing)
            if line == placed and (marker or not text.startswith(BLANK_BEFORE)):
                continue
            if line == placed and n - 1 >= end and n - 1 in gone and lines[n - 1] == "":
                generated.setdefault(key, set()).add(n - 1)
                continue
            indent = line[:len(line) - len(line.lstrip(" \t"))]
            if column_line(indent, text, column) == line:
                slots.setdefault(key, {})[n] = [indent]
            else:
                m = _PAIR.match(line[len(indent):])
                slots.setdefault(key, {})[n] = [indent, m.group(2) if m else " "]
    return slots, generated


_PAIR = re.compile(r"//((?:(?!//).)*?\S)([ \t]+)(//.*)\Z", re.S)


def _body_marker(line, indent):
    """The slot of a line the body writes itself: [its indent] for an `// end inline asm`
    marker at another indent than the statement's (the sugar writes it at the default), else None."""
    text = line.lstrip(" \t")
    own = line[:len(line) - len(text)]
    return [own] if text == "// end inline asm" and own != indent else None


def _after_end(lines, gone) -> int:
    """The number of leading lines (through the last `// end inline asm`) that belong after
    the previous statement: all of them moved to the table; else 0."""
    end = 0
    for n, line in enumerate(lines):
        if line.strip(" \t") == "// end inline asm":
            end = n + 1
    return end if end and all(n in gone for n in range(end)) else 0


def _trim(template):
    while template and template[-1] is None:
        template.pop()
    return template


def _entry(e: dict) -> Display:
    items = []
    for field in ("indent", "lead", "tail", "inline", "lines", "after", "fmt"):
        if field not in e:
            continue
        v = e[field]
        if field == "fmt":
            val = Display("{", "}", [f"{k}: {_text(x)}" for k, x in v.items()])
        elif field in ("lines", "after"):
            val = Display("[", "]", ["None" if x is None else Display("[", "]",
                                                                      [_text(y) for y in x]) if x.__class__ is list
                                     else _text(x) for x in v])
        else:
            val = "None" if v is None else _text(v)
        items.append(Pair(q(field), val))
    return Display("{", "}", items)


SPACE_RUN = 8  # a run of this many spaces or more is written `" " * N` (no one counts 40 spaces)


def _text(v: str) -> str:
    """A whitespace value as Python: `" " * 40` for a long run of spaces, else the literal."""
    return f'" " * {len(v)}' if len(v) >= SPACE_RUN and v == " " * len(v) else q(v)


__all__ = ["run", "END"]
