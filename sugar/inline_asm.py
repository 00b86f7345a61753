"""`// begin inline asm` / instruction / blank / `// end inline asm` -> `asm.<insn>(...)`
(one instruction; `asm.block.<insn>(...)` when nvcc wraps it in `{ }`) or
`with inline_asm():` (several).

NVVM's bracket has no blank line before the end comment: `nvasm.<insn>(...)`
or `with inline_asm(blank=False):`.
"""

from __future__ import annotations

from .ir import Call, Kw, is_call, is_insn, stmt, taken_names

BEGIN, END = '" begin inline asm"', '" end inline asm"'
NAMES = ("asm", "nvasm", "inline_asm")


def _is(s, text):
    return is_call(s, "ptx.comment", 1) and s.expr.items[0] == text


def _one_insn_block(stmts, k, depth) -> bool:
    """`with ptx.block():` at stmts[k] holding exactly one plain instruction."""
    if k + 2 >= len(stmts):
        return False
    w, insn, after = stmts[k], stmts[k + 1], stmts[k + 2]
    return (w.prefix == "with " and w.depth == depth and w.expr.__class__ is Call and w.expr.head == "ptx.block"
            and not w.expr.items and is_insn(insn) and insn.depth == depth + 1 and not insn.prefix
            and insn.expr.head.startswith("ptx.") and after.depth <= depth)


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    out = []
    i, n = 0, len(stmts)
    while i < n:
        s = stmts[i]
        if _is(s, BEGIN):
            j = i + 1
            while j < n and stmts[j].depth == s.depth and not stmts[j].prefix and not stmts[j].trailer \
                    and not _is(stmts[j], BEGIN) and not _is(stmts[j], END) and not is_call(stmts[j], "ptx.blank"):
                j += 1
            body = stmts[i + 1:j]
            block = not body and _one_insn_block(stmts, i + 1, s.depth)
            if block:
                body, j = stmts[i + 1:i + 3], i + 3
            if body and j + 1 < n and is_call(stmts[j], "ptx.blank", 0) and stmts[j].depth == s.depth \
                    and _is(stmts[j + 1], END) and stmts[j + 1].depth == s.depth:
                tight, end = False, j + 2
            elif body and j < n and _is(stmts[j], END) and stmts[j].depth == s.depth:
                tight, end = True, j + 1
            else:
                out.append(s)
                i += 1
                continue
            h = body[0].expr.head if len(body) == 1 and is_insn(body[0]) else ""
            if block:  # `{ insn }`
                b = body[1]
                h = b.expr.head
                p = ("nvasm." if tight else "asm.") + "block."
                out.append(stmt(Call(p + (h[4:] if h.startswith("ptx.") else h), b.expr.items), s.depth))
            elif h.startswith("ptx.") or h.startswith("at("):
                b = body[0]
                p = "nvasm." if tight else "asm."
                out.append(stmt(Call(p + (h[4:] if h.startswith("ptx.") else h), b.expr.items), b.depth))
            else:
                out.append(stmt(Call("inline_asm", [Kw("blank", "False")] if tight else []), s.depth, "with ", ":"))
                for b in body:
                    b.depth += 1
                    out.append(b)
            i = end
            continue
        out.append(s)
        i += 1
    return out
