"""Runs of nvcc's register declarations -> one `regs(...)` line:

    p = reg.pred("%p", 4)
    f = reg.f32("%f", 76)         ->   p, f, r = regs(pred=4, f32=76, b32=72)
    r = reg.b32("%r", 72)

Only declarations named as nvcc names each type (`transpile.dsl.ops.NVPTX_REGISTERS`),
bound to that name, one per type in the run, with no formatting keywords.
"""

from __future__ import annotations

import re

from transpile.dsl.ops import NVPTX_REGISTERS

from .ir import Call, Kw, stmt, taken_names, unq

MIN_RUN = 2
_HEAD = re.compile(r"reg\.(\w+)\Z")


def _conventional(s):
    """(type, count) of `r = reg.b32("%r", 72)` in nvcc's naming, else None."""
    e = s.expr
    if e.__class__ is not Call or s.trailer or len(e.items) != 2 or e.items[1].__class__ is not str:
        return None
    m = _HEAD.match(e.head)
    if m is None or NVPTX_REGISTERS.get(m.group(1)) != unq(e.items[0]):
        return None
    name = NVPTX_REGISTERS[m.group(1)][1:]
    if s.prefix != name + " = " or not e.items[1].isdigit():
        return None
    return m.group(1), e.items[1]


def run(stmts, ctx):
    if "regs" in taken_names(stmts):
        return stmts
    out, k, n = [], 0, len(stmts)
    while k < n:
        run_, types = [], set()
        j = k
        while j < n and stmts[j].depth == stmts[k].depth:
            c = _conventional(stmts[j])
            if c is None or c[0] in types:
                break
            types.add(c[0])
            run_.append(c)
            j += 1
        if len(run_) < MIN_RUN:
            out.append(stmts[k])
            k += 1
            continue
        names = ", ".join(NVPTX_REGISTERS[t][1:] for t, _ in run_)
        out.append(stmt(Call("regs", [Kw(t, c) for t, c in run_]), stmts[k].depth, names + " = "))
        k = j
    return out
