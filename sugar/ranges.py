"""Vector operands over consecutive registers -> register ranges: `(f[1], ..., f[64])` -> `f[1:65]`.

A slice of a register family is the tuple of its registers, so the vector is
the same; a whole vector of two or more becomes a slice (`(r[8], r[9])` -> `r[8:10]`),
a run of MIN_RUN or more inside a longer vector is spliced in: `(*f[1:65], r[3])`.
"""

from __future__ import annotations

import re

from .ir import Call, Display, Kw

MIN_RUN = 4
_REG = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[([0-9]+)\]\Z")


def _vector(d):
    items = d.items
    parsed = [_REG.match(x) if x.__class__ is str else None for x in items]
    out, k, changed = [], 0, False
    while k < len(items):
        m = parsed[k]
        if m is not None:
            j = k + 1
            while (j < len(items) and parsed[j] is not None and parsed[j].group(1) == m.group(1)
                   and int(parsed[j].group(2)) == int(m.group(2)) + (j - k)):
                j += 1
            if j - k >= MIN_RUN or (k == 0 and j == len(items) and j >= 2):  # or the whole vector
                out.append(f"*{m.group(1)}[{m.group(2)}:{int(m.group(2)) + j - k}]")
                k, changed = j, True
                continue
        out.append(_walk(items[k]))
        k += 1
    if not changed:
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
        e.items = [_walk(i) for i in e.items]
        e._flat = None
        return e
    return e


def run(stmts, ctx):
    for s in stmts:
        if s.expr.__class__ is Call and not s.trailer and s.expr.head not in ("ptx.style",):
            s.expr = _walk(s.expr)
    return stmts
