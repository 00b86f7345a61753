"""Runs of `.b8` rows in a section (DWARF data) -> one `data_b8(...)` call: with LLVM's
row comments, `data_b8("01 Abbreviation Code|11 DW_TAG_compile_unit|...")` (each note
beside its bytes), else `data_b8("hex rows", notes=...)`.

Each row's bytes are one space-separated hex group; LLVM's per-row comments
(`// DW_TAG_...`, written at a fixed column) travel in `notes="row:text|..."`.
Other rows (`.b32 .debug_abbrev`, `.b64 $L__tmp3`) stay one call each, their
comment folded in: `ptx.data.b32(secref(".debug_abbrev"), note=" Offset Into Abbrev. Section")`.

An annotated run too long for one line (black gives it three: `data_b8(`, the string, `)`) is
cut at field boundaries (before a row with a note: an attribute and the bytes of its value)
into calls of one line each, where that takes no more lines: a DIE's call-site attributes and
the next DIE's first row read as two lines, not as one string between two brackets. A
field-aligned cut before each new DIE (`Abbrev [N]`) is taken where it costs no extra line.
"""

from __future__ import annotations

from collections import Counter

from ptx2py.transpile.dsl.structured import line_text, pad_to
from ptx2py.transpile.generator import q

from .ir import Call, Kw, byte_values, inline_comment, is_call, kwargs, layout_lines, stmt, taken_names

NAMES = ("data_b8",)
MIN_ROWS = 3          # rows without notes
MIN_ANNOTATED = 2     # rows with LLVM's notes: `data_b8("02 DWARF version number|00")` is one line, not two


def _bytes(s):
    """The row's values when it is a plain `ptx.data.b8(<ints 0..255>)`, else None."""
    if not is_call(s, "ptx.data.b8") or not s.expr.items:
        return None
    data = byte_values(s.expr.items)
    return None if data is None else list(data)


def _note(s):
    """A row's comment, when `notes="row:text|..."` can carry it."""
    c = inline_comment(s)
    return None if c is None or "|" in c[0] or "\n" in c[0] or "\r" in c[0] else c


def _annotated(rows, notes):
    """The rows as `hex note|hex|...` (one string: each note beside its bytes), or None
    when a note does not start with the space that form restores."""
    by_row = {}
    for n in notes:
        k, _, text = n.partition(":")
        if not text.startswith(" ") or text == " ":
            return None
        by_row[int(k)] = text[1:]
    if not by_row or len(rows) < 2:
        return None
    return [bytes(r).hex() + (" " + by_row[k] if k in by_row else "") for k, r in enumerate(rows)]


LINE = 88
DIE = "Abbrev ["   # LLVM's note on the first row of a debugging information entry


def _fields(texts: list) -> list:
    """Row indexes grouped into fields: a row with a note and the rows without one after it."""
    fields = []
    for k, t in enumerate(texts):
        if " " in t or not fields:
            fields.append([k])
        else:
            fields[-1].append(k)
    return fields


def _pack(texts, fields, room, die_cuts: bool) -> list:
    """Greedy runs of whole fields (a field too long alone: of rows) whose `|`-joined text fits
    `room`; with `die_cuts`, a run also ends before each DIE's first row."""
    width = lambda ks: sum(len(texts[k]) for k in ks) + len(ks) - 1  # noqa: E731
    out, cur = [], []
    for f in fields:
        new_die = die_cuts and texts[f[0]].partition(" ")[2].startswith(DIE)
        if cur and not new_die and width(cur + f) <= room:
            cur += f
            continue
        if cur:
            out.append(cur)
        cur = []
        for k in f if width(f) > room else [f]:
            ks = k if k.__class__ is list else [k]
            if cur and width(cur + ks) > room:
                out.append(cur)
                cur = []
            cur += ks
    if cur:
        out.append(cur)
    return out


def _piece(rows, texts, ks, col_kw) -> Call:
    """One run of rows as a call: `data_b8("...")`, or a lone row as `ptx.data.b8(v, note=...)`."""
    if len(ks) > 1:
        return Call("data_b8", [q("|".join(texts[k] for k in ks))] + col_kw)
    k = ks[0]
    note = texts[k].partition(" ")[2]
    extra = [Kw("note", q(" " + note))] + col_kw if note else []
    return Call("ptx.data.b8", [str(b) for b in rows[k]] + extra)


def _calls(rows, texts, col_kw, depth) -> list:
    """The annotated run as one `data_b8` call, or cut into one-line calls (module docstring)."""
    whole = Call("data_b8", [q("|".join(texts))] + col_kw)
    lines = layout_lines(whole, depth)
    if lines == 1:
        return [whole]
    room = LINE - 4 * depth - len(whole.flat()) + len("|".join(texts))
    fields = _fields(texts)
    best = None
    for die_cuts in (True, False):
        calls = [_piece(rows, texts, ks, col_kw) for ks in _pack(texts, fields, room, die_cuts)]
        if len(calls) <= lines and all(layout_lines(c, depth) == 1 for c in calls) and (
                best is None or len(calls) < len(best)):
            best = calls
    return best or [whole]


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    node_of = {k: ctx.node[id(s)] for k,
               s in enumerate(stmts) if id(s) in ctx.node and s.expr.head.startswith("ptx.data.")}
    if not node_of:
        return stmts
    cols = Counter()
    for k in node_of:
        c = _note(stmts[k + 1] if k + 1 < len(stmts) else None)
        if c is not None and _bytes(stmts[k]) is not None:
            cols[len(line_text(node_of[k])) + len(c[1])] += 1
    column = cols.most_common(1)[0][0] if cols else 40
    out = []
    k, n = 0, len(stmts)
    while k < n:
        rows, notes, j = [], [], k
        while j < n and j in node_of and stmts[j].depth == stmts[k].depth:
            vals = _bytes(stmts[j])
            if vals is None:
                break
            rows.append(vals)
            j += 1
            c = _note(stmts[j] if j < n else None)
            if c is not None:
                if c[1] != pad_to(line_text(node_of[j - 1]), column):
                    rows.pop()
                    j -= 1
                    break
                notes.append(f"{len(rows) - 1}:{c[0]}")
                j += 1
        annotated = _annotated(rows, notes) if len(rows) >= MIN_ANNOTATED else None
        if len(rows) >= MIN_ROWS or annotated:
            col_kw = [Kw("col", str(column))] if column != 40 and notes else []
            depth = stmts[k].depth
            if annotated:
                out.extend(stmt(c, depth) for c in _calls(rows, annotated, col_kw, depth))
                k = j
                continue
            items = ['"' + " ".join(bytes(r).hex() for r in rows) + '"']
            items.append(Kw("notes", q("|".join(notes))) if notes else Kw("notes", '""'))
            out.append(stmt(Call("data_b8", items + col_kw), depth))
            k = j
            continue
        c = _note(stmts[k + 1] if k + 1 < n else None)
        if k in node_of and c is not None and c[1] == pad_to(line_text(node_of[k]), column) and not kwargs(
                stmts[k].expr):  # a row and its note: one call
            items = stmts[k].expr.items + [Kw("note", q(c[0]))] + ([Kw("col", str(column))] if column != 40 else [])
            out.append(stmt(Call(stmts[k].expr.head, items), stmts[k].depth))
            k += 2
            continue
        out.append(stmts[k])
        k += 1
    return out
