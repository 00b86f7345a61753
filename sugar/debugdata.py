"""Runs of `.b8` rows in a section (DWARF data) -> one `data_b8(...)` call: with LLVM's
row comments, `data_b8("01 Abbreviation Code|11 DW_TAG_compile_unit|...")` (each note
beside its bytes), else `data_b8("hex rows", notes=...)`.

Each row's bytes are one space-separated hex group; LLVM's per-row comments
(`// DW_TAG_...`, written at a fixed column) travel in `notes="row:text|..."`.
Other rows (`.b32 .debug_abbrev`, `.b64 $L__tmp3`) stay one call each, their
comment folded in: `ptx.data.b32(secref(".debug_abbrev"), note=" Offset Into Abbrev. Section")`.
"""

from __future__ import annotations

from collections import Counter

from transpile.dsl.structured import line_text, pad_to

from transpile.generator import q

from .ir import Call, Kw, byte_values, inline_comment, is_call, kwargs, stmt, taken_names

NAMES = ("data_b8",)
MIN_ROWS = 3


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
    return "|".join(bytes(r).hex() + (" " + by_row[k] if k in by_row else "") for k, r in enumerate(rows))


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    node_of = {k: ctx.node[id(s)] for k, s in enumerate(stmts) if id(s) in ctx.node and s.expr.head.startswith("ptx.data.")}
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
        if len(rows) >= MIN_ROWS:
            annotated = _annotated(rows, notes)
            hexrows = " ".join(bytes(r).hex() for r in rows)
            items = [q(annotated) if annotated else '"' + hexrows + '"']
            if notes and not annotated:
                items.append(Kw("notes", q("|".join(notes))))
            if column != 40 and notes:
                items.append(Kw("col", str(column)))
            if len(items) == 1 and not annotated:
                items.append(Kw("notes", '""'))
            out.append(stmt(Call("data_b8", items), stmts[k].depth))
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
