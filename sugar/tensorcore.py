"""Typed tensor-core calls: `wgmma.mma_async` -> `wgmma_mma(shape=..., dtype=..., d=acc, a=..., ...)`
(transpile/dsl/typed.py), and the matrix-descriptor constant OR-ed into the
registers a `wgmma` reads (`or.b64 %rd5, %rd17, 4611686293305294848`) shown as a
named value, `WGMMA_DESC_BITS = 4611686293305294848`, defined once at the top.

Only the exact shapes the typed call re-emits are rewritten: modifiers
`sync.aligned.<shape>.<dtype>.<atype>.<btype>`, 6 or 8 positional operands.
"""

from __future__ import annotations

import re
from collections import Counter

from .ir import Call, Kw, is_insn, positional, stmt, taken_names

NAMES = ("wgmma_mma", "WGMMA_DESC_BITS")
_OP = "wgmma.mma_async.sync.aligned."
_MODS = re.compile(r"(m[0-9]+n[0-9]+k[0-9]+)\.([a-z0-9]+)\.([a-z0-9]+)\.([a-z0-9]+)\Z")
_REG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[0-9]+\]\Z")
_ARGS = ("d", "a", "b", "scale_d", "scale_a", "scale_b", "trans_a", "trans_b")


def _split(head):
    """(prefix, modifiers) of a `wgmma.mma_async` call head, else None."""
    k = head.find(_OP)
    if k < 0:
        return None
    pre, mods = head[:k], head[k + len(_OP):]
    if pre not in ("ptx.", "asm.", "nvasm.") and not (pre.startswith(("at(", "asm.at(", "nvasm.at("))
                                                     and pre.endswith(").")):
        return None
    m = _MODS.match(mods)
    if m is None:
        return None
    return ("" if pre == "ptx." else pre), m.groups()


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    descs = set()
    for s in stmts:
        if is_insn(s):
            sp = _split(s.expr.head)
            pos = positional(s.expr)
            if sp is None or len(pos) not in (6, 8):
                continue
            descs.update(x for x in pos[1:3] if x.__class__ is str and _REG.match(x))
            items = [Kw(k, q) for k, q in zip(("shape", "dtype", "atype", "btype"), ['"%s"' % g for g in sp[1]])]
            items += [Kw(k, v) for k, v in zip(_ARGS, pos)]
            items += [i for i in s.expr.items if i.__class__ is Kw]
            s.expr = Call(sp[0] + "wgmma_mma", items)
    if not descs:
        return stmts
    # the descriptor constant: `or.b64 <desc>, <reg>, <big int>` into a register a wgmma reads
    consts = Counter()
    ors = []
    for s in stmts:
        if is_insn(s) and s.expr.head == "ptx.or_.b64" and len(s.expr.items) == 3:
            d, _, c = s.expr.items
            if d in descs and c.__class__ is str and c.isdigit() and c[0] != "0" and int(c) >= 1 << 32:
                consts[c] += 1
                ors.append(s)
    if not consts:
        return stmts
    c = consts.most_common(1)[0][0]
    for s in ors:
        if s.expr.items[2] == c:
            s.expr.items[2] = "WGMMA_DESC_BITS"
            s.expr._flat = None
    return [stmt(c, 0, "WGMMA_DESC_BITS = ")] + stmts
