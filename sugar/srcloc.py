"""`.loc` + the instruction it describes -> `at(file, line, col).<insn>(...)`.

LLVM/Triton's trailing `// file.py:L:C` comment on a `.loc` line is derived
from the `.file` table and a module-wide column (`srcmap(col)`), so it costs
nothing; a `.loc` whose comment does not match stays a plain `ptx.loc(...)`.
"""

from __future__ import annotations

from collections import Counter

from ptxgrammar.tree import File, Loc
from transpile.dsl.structured import line_text, loc_comment, pad_to, source_name

from transpile.generator import q

from .ir import Call, Display, Kw, is_call, is_insn, kwargs, stmt, taken_names, unq

NAMES = ("at", "srcmap")
MAX_PREFIX = 44


def _inline(s):
    """(text, pad) of a `ptx.comment(text, inline=pad)` statement, else None."""
    if not is_call(s, "ptx.comment", 2):
        return None
    kw = kwargs(s.expr)
    if set(kw) != {"inline"}:
        return None
    text, pad = unq(s.expr.items[0]), unq(kw["inline"])
    return None if text is None or pad is None else (text, pad)


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    idx = [k for k, s in enumerate(stmts) if is_call(s, "ptx.loc") and id(s) in ctx.node]
    if not idx:
        return stmts
    files = {f.index: source_name(f.path[1:-1]) for f in ctx.module.walk() if f.__class__ is File}
    node_of = {k: ctx.node[id(stmts[k])] for k in idx}
    if not hasattr(ctx, "srccol"):
        cols = Counter()
        for k in idx:
            c = _inline(stmts[k + 1]) if k + 1 < len(stmts) else None
            node = node_of[k]
            if c and c[0] == loc_comment(node.file, node.line, node.column, files):
                cols[len(line_text(node)) + len(c[1])] += 1
        ctx.srccol = cols.most_common(1)[0][0] if cols else None
        ctx.srcfiles = sorted({node_of[k].file for k in idx if node_of[k].file in files}, key=int)
    column = ctx.srccol
    out = []
    if column is not None and not any(is_call(s, "srcmap") for s in stmts[:2]):
        table = Display("{", "}", [f"{f}: {q(files[f])}" for f in ctx.srcfiles])
        out.append(stmt(Call("srcmap", [str(column), table]), 0))
    k, n = 0, len(stmts)
    while k < n:
        s = stmts[k]
        if k in node_of:
            node = node_of[k]
            j = k + 1
            if column is not None:
                c = _inline(stmts[j]) if j < n else None
                ok = (c is not None and c[0] == loc_comment(node.file, node.line, node.column, files)
                      and c[1] == pad_to(line_text(node), column))
                j += 1
            else:
                ok = True
            if ok and j < n and is_insn(stmts[j]) and stmts[j].depth == s.depth:
                pre = Call("at", s.expr.items).flat()
                ins = stmts[j]
                h = ins.expr.head
                rest = h[4:] if h.startswith("ptx.") else h
                if len(pre) <= MAX_PREFIX and 4 * ins.depth + len(pre) + len(rest) + 2 <= 88:
                    out.append(stmt(Call(pre + "." + rest, ins.expr.items), ins.depth))
                    k = j + 1
                    continue
        out.append(s)
        k += 1
    return out
