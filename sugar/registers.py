"""Runs of nvcc's register declarations -> one `regs(...)` line:

    p = reg.pred("%p", 4)
    f = reg.f32("%f", 76)         ->   p, f, r = regs(pred=4, f32=76, b32=72)
    r = reg.b32("%r", 72)

Only declarations named as nvcc names a type (`transpile.dsl.ops.NVPTX_REGISTERS`),
bound to that name, one per keyword in the run, with no formatting keywords;
CUDA 13's `f = reg.b32("%f", 205)` (a type under another type's name) is `b32_f=205`.
"""

from __future__ import annotations

import re

from ptx2py.transpile.dsl.ops import NVPTX_REGISTERS, regs_keyword

from .ir import Call, Kw, stmt, taken_names, unq

MIN_RUN = 2
_HEAD = re.compile(r"reg\.(\w+)\Z")


def _conventional(s):
    """(keyword, count) of `r = reg.b32("%r", 72)` in nvcc's naming (`b32_f` for
    `f = reg.b32("%f", 205)`: another type's name), else None (as `regs_keyword` says)."""
    e = s.expr
    if e.__class__ is not Call or s.trailer or len(e.items) != 2 or e.items[1].__class__ is not str:
        return None
    m = _HEAD.match(e.head)
    spelling = unq(e.items[0])
    key = None if m is None else regs_keyword(m.group(1), spelling)
    if key is None or s.prefix != spelling[1:] + " = " or not e.items[1].isdigit():
        return None
    return key, e.items[1]


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
        names = ", ".join(t.partition("_")[2] or NVPTX_REGISTERS[t][1:] for t, _ in run_)
        out.append(stmt(Call("regs", [Kw(t, c) for t, c in run_]), stmts[k].depth, names + " = "))
        k = j
    return out
