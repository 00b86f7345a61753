"""nvcc's `// demoted variable` line before a declaration -> its `demoted=True` keyword:

    ptx.comment(" demoted variable")
    sA = var.shared.align(1024).b8("_ZZ...E2sA", dims=(8192,))
        ->  sA = var.shared.align(1024).b8("_ZZ...E2sA", dims=(8192,), demoted=True)

Only a comment with the default layout directly before a `var.<space>` declaration
at the same depth, and only where the keyword adds no line to the declaration.
"""

from __future__ import annotations

from .ir import Call, Kw, is_call, layout_lines

TEXT = '" demoted variable"'


def _is_note(s) -> bool:
    return is_call(s, "ptx.comment", 1) and s.expr.items[0] == TEXT


def _is_var(s, depth) -> bool:
    e = s.expr
    return (s.depth == depth and s.prefix.endswith(" = ") and not s.trailer and e.__class__ is Call
            and e.head.startswith("var.") and not any(i.__class__ is Kw and i.name == "demoted" for i in e.items))


def run(stmts, ctx):
    out, k, n = [], 0, len(stmts)
    while k < n:
        s = stmts[k]
        if _is_note(s) and k + 1 < n and _is_var(stmts[k + 1], s.depth):
            decl = stmts[k + 1]
            folded = Call(decl.expr.head, [*decl.expr.items, Kw("demoted", "True")])
            if layout_lines(folded, decl.depth, decl.prefix) <= layout_lines(decl.expr, decl.depth, decl.prefix):
                decl.expr = folded
                out.append(decl)
                k += 2
                continue
        out.append(s)
        k += 1
    return out
