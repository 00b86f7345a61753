"""Vector operands over consecutive registers -> register ranges: `(f[1], ..., f[64])` -> `f[1:65]`.

A slice of a register family is the tuple of its registers, so the vector is
the same; a whole vector of two or more becomes a slice (`(r[8], r[9])` -> `r[8:10]`),
a run of MIN_RUN or more inside a longer vector is spliced in: `(*f[1:65], r[3])`.
Descending runs of MIN_DOWN or more are reversed slices (`(f[8], f[7], f[6])` ->
`f[8:5:-1]`), and a whole vector of one register repeated is `(f[64],) * 8`. A vector
inside an address (TMA and texture coordinates) is never a range: its values are independent.
"""

from __future__ import annotations

import re

from .ir import Call, Display, Kw

MIN_RUN = 4
MIN_DOWN = 3
_REG = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[([0-9]+)\]\Z")


def _run(parsed, k, step) -> int:
    """The end of the run of registers of one family from k whose indexes go by `step`."""
    m, j = parsed[k], k + 1
    while (j < len(parsed) and parsed[j] is not None and parsed[j].group(1) == m.group(1)
           and int(parsed[j].group(2)) == int(m.group(2)) + step * (j - k)):
        j += 1
    return j


def _repeated(d):
    """`(f[64],) * 8` for a whole vector of MIN_RUN or more copies of one register."""
    items = d.items
    if len(items) >= MIN_RUN and items[0].__class__ is str and _REG.match(items[0]) \
            and all(x == items[0] for x in items):
        return f"({items[0]},) * {len(items)}"
    return None


def _vector(d):
    items = d.items
    parsed = [_REG.match(x) if x.__class__ is str else None for x in items]
    out, k, changed = [], 0, False
    while k < len(items):
        m = parsed[k]
        if m is not None:
            first = int(m.group(2))
            j = _run(parsed, k, 1)
            if j - k >= MIN_RUN or (k == 0 and j == len(items) and j >= 2):  # or the whole vector
                out.append(f"*{m.group(1)}[{first}:{first + j - k}]")
                k, changed = j, True
                continue
            j = _run(parsed, k, -1)
            if j - k >= MIN_DOWN and first - (j - k) >= 0 and (j - k >= MIN_RUN or (k == 0 and j == len(items))):
                out.append(f"*{m.group(1)}[{first}:{first - (j - k)}:-1]")
                k, changed = j, True
                continue
        out.append(_walk(items[k]))
        k += 1
    if not changed:
        rep = _repeated(d)
        if rep is not None:
            return rep
        d.items, d._flat = out, None
        return d
    if len(out) == 1:
        return out[0][1:]
    return Display("(", ")", out)


def _walk(e):
    c = e.__class__
    if c is Call:
        e.items = [_walk(i) for i in e.items]
        e._flat = None
        return e
    if c is Kw:
        e.value = _walk(e.value)
        return e
    if c is Display:
        if e.open == "(":
            return _vector(e)
        e.items = [_coordinates(i) if e.open == "[" else _walk(i) for i in e.items]
        e._flat = None
        return e
    return e


def _coordinates(e):
    """A vector inside an address (`[rd[14], (r[122], r[63])]`: a tensor's or texture's
    coordinates) holds independent values: it stays a list of them, never a range."""
    if e.__class__ is Display and e.open == "(":
        e.items = [_walk(i) for i in e.items]
        e._flat = None
        return e
    return _walk(e)


def run(stmts, ctx):
    for s in stmts:
        if s.expr.__class__ is Call and not s.trailer and s.expr.head not in ("ptx.style",):
            s.expr = _walk(s.expr)
    return stmts
