"""nvcc's `.debug_str` entries -> a string table, one line per string:

    ptx.label(L.info_string0)                                      debug_strings(
    ptx.data.b8(*b"_ZN3cub17CUB_300001_SM_80010WarpReduceIf")   ->     b"_ZN3cub17...EEEEffT_",
    ptx.data.b8(*b"Li32EE6ReduceIN4cuda3__47maximumIvEEEEff")          b"_ZN3cub17...NullTypeE",
    ptx.data.b8(84, 95, 0)                                         )
    ptx.label(L.info_string1) ...

Each string with its terminating 0 is cut into `.b8` rows of `row` bytes (nvcc's 40),
the last row shorter, after its label `$L__info_string<N>` (consecutive from `first=`);
an entry under another label is `debug_str(label, b"text")`, and entries laid out
otherwise stay as they are. LLVM's entries (Triton's) are one byte a row, the first row
noted `// string offset=N ; <text>` at column 40: `debug_str(L.info_string0, b"text", row=1, offset=N)`.
"""

from __future__ import annotations

import ast

from ptx2py.transpile.dsl.structured import line_text, llvm_string_note, pad_to

from .ir import Call, Kw, byte_values, inline_comment, is_call, stmt, taken_names

NAMES = ("debug_str", "debug_strings")
ROW = 40
NOTE_COLUMN = 40  # LLVM's `// string offset=N ; <text>` column


def _row(s):
    """The bytes of a plain `ptx.data.b8(...)` row (ints 0..255 or one `*b"..."`), else None."""
    if not is_call(s, "ptx.data.b8") or not s.expr.items:
        return None
    items = s.expr.items
    if len(items) == 1 and items[0].__class__ is str and items[0].startswith('*b"'):
        try:
            return ast.literal_eval(items[0][1:])
        except (ValueError, SyntaxError):
            return None
    return byte_values(items)


def _split(data: bytes, row: int) -> list:
    return [data[k:k + row] for k in range(0, len(data), row)]


def _literal(text: bytes):
    """`b"..."` for printable text without quotes or backslashes, else None."""
    if not text or any(b < 32 or b > 126 or b in b'"\\' for b in text):
        return None
    return 'b"' + text.decode("ascii") + '"'


def _entry(stmts, k, node):
    """(call, index after) for a label and its rows at stmts[k], else None."""
    s = stmts[k]
    if not is_call(s, "ptx.label", 1):
        return None
    rows, j, note = [], k + 1, None
    while j < len(stmts) and stmts[j].depth == s.depth:
        r = _row(stmts[j])
        if r is None:
            break
        rows.append(r)
        j += 1
        if len(rows) == 1 and j < len(stmts) and inline_comment(stmts[j]) is not None:
            note = _first_note(stmts[j - 1], inline_comment(stmts[j]), node)
            if note is None:
                return None
            j += 1
        if r.endswith(b"\0"):
            break
    data = b"".join(rows)
    if not rows or not data.endswith(b"\0") or b"\0" in data[:-1]:
        return None
    lit = _literal(data[:-1])
    if lit is None:
        return None
    if note is not None:  # LLVM's note: its offset, and the text it names must be this string
        offset = _note_offset(note[0])
        if offset is None or note[0] != llvm_string_note(offset, data[:-1]) or len(rows[0]) != 1:
            return None
    for row, kw in ((ROW, []), (len(rows[0]), [Kw("row", str(len(rows[0])))])):
        if _split(data, row) == rows:
            if note is not None:
                kw = [Kw("row", str(row)), Kw("offset", str(offset))]
            return Call("debug_str", [s.expr.items[0], lit, *kw]), j
    return None


def _first_note(row_stmt, comment, node):
    """The first row's `(text, pad)` comment when it sits where `debug_str(offset=)` writes it."""
    n = node.get(id(row_stmt))
    if n is None or comment[1] != pad_to(line_text(n), NOTE_COLUMN):
        return None
    return comment


def _note_offset(text: str):
    """N of LLVM's ` string offset=N ; ...` (a plain decimal), else None."""
    head, sep, _ = text.partition(" ; ")
    n = head[len(" string offset="):] if head.startswith(" string offset=") else ""
    return int(n) if sep and n.isdigit() and (n == "0" or n[0] != "0") else None


def _numbered(call):
    """N of `debug_str(L.info_stringN, ...)` in nvcc's row width, else None."""
    label = call.items[0]
    if len(call.items) != 2 or label.__class__ is not str or not label.startswith("L.info_string"):
        return None
    n = label[len("L.info_string"):]
    return int(n) if n.isdigit() and (n == "0" or n[0] != "0") else None


def _tables(entries):
    """Runs of consecutively numbered entries -> `debug_strings(...)` calls."""
    out, k = [], 0
    while k < len(entries):
        call, depth = entries[k]
        n = _numbered(call)
        j = k + 1
        while n is not None and j < len(entries) and _numbered(entries[j][0]) == n + (j - k):
            j += 1
        if j - k < 2:
            out.append(stmt(call, depth))
        else:
            first = [] if n == 0 else [Kw("first", str(n))]
            out.append(stmt(Call("debug_strings", [e[0].items[1] for e in entries[k:j]] + first), depth))
        k = j
    return out


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    node = getattr(ctx, "node", None) or {}
    out, k, section = [], 0, None  # section: the depth of the open `.debug_str` section
    while k < len(stmts):
        s = stmts[k]
        if section is not None and s.depth <= section:
            section = None
        if s.prefix == "with " and s.expr.__class__ is Call and s.expr.head == "ptx.section" \
                and s.expr.items and s.expr.items[0] == '".debug_str"':
            section = s.depth
        hit = _entry(stmts, k, node) if section is not None and s.depth == section + 1 else None
        if hit is not None:
            entries = []
            while hit is not None:
                call, k = hit
                entries.append((call, s.depth))
                hit = _entry(stmts, k, node) if k < len(stmts) and stmts[k].depth == s.depth else None
            out.extend(_tables(entries))
            continue
        out.append(s)
        k += 1
    return out
