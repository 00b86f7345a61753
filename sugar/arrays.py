"""Byte-array initializers -> one bytes literal instead of one line per value:

    var.global_.align(1).b8("$str", dims=(6,), init=[104, 101, 108, 108, 111, 0])
        -> init=b"hello\\x00"                          (mostly printable text)
    var.global_.align(16).b8("coeffs", dims=(128,), init=[70, 210, ...])
        -> init=bytes.fromhex("46d2b02cf1e55abe ...")  (other data, grouped by its alignment)

Only lists of MIN_ITEMS or more plain decimal values 0..255 (their spelling is
the value's, so the bytes give back the same tokens).
"""

from __future__ import annotations

import re

from .ir import Call, Display, Kw, byte_values

MIN_ITEMS = 8
TEXT_SHARE = 0.9  # printable share of the bytes for a text literal
GROUP = (4, 8)  # bytes per hex group: the array's alignment, within these bounds
_ALIGN = re.compile(r"\.align\((\d+)\)")
_ESCAPES = {0x5C: "\\\\", 0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r"}


def _values(d):
    if d.__class__ is not Display or d.open != "[" or len(d.items) < MIN_ITEMS:
        return None
    return byte_values(d.items)


def _text_literal(data: bytes):
    """`b"..."` as black leaves it (double quotes unless the text holds one), else None."""
    printable = sum(32 <= b < 127 for b in data)
    if printable < TEXT_SHARE * len(data):
        return None
    quote = '"' if b'"' not in data else ("'" if b"'" not in data else None)
    if quote is None:
        return None
    chars = [_ESCAPES.get(b) or (chr(b) if 32 <= b < 127 else f"\\x{b:02x}") for b in data]
    return "b" + quote + "".join(chars) + quote


def _hex_literal(data: bytes, head: str) -> Call:
    m = _ALIGN.search(head)
    size = min(max(int(m.group(1)) if m else GROUP[0], GROUP[0]), GROUP[1])
    groups = [data[k:k + size].hex() for k in range(0, len(data), size)]
    return Call("bytes.fromhex", ['"' + " ".join(groups) + '"'])


def run(stmts, ctx):
    for s in stmts:
        e = s.expr
        if e.__class__ is not Call or not e.head.startswith("var."):
            continue
        for k, it in enumerate(e.items):
            if it.__class__ is Kw and it.name == "init":
                data = _values(it.value)
                if data is not None:
                    lit = _text_literal(data)
                    e.items[k] = Kw("init", lit if lit is not None else _hex_literal(data, e.head))
                    e._flat = None
    return stmts
