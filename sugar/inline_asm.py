"""`// begin inline asm` / instruction / blank / `// end inline asm` -> `asm.<insn>(...)`
(one instruction or spin wait; `asm.block.<insn>(...)` when nvcc wraps it in `{ }`) or
`with asm():` (several; `with asm(block=True):` for the statements of one `{ }` block,
as nvcc wraps inline asm that declares registers; the block's own layout keywords
follow, `close_lead=""`, until the trivia pass moves them to the table). `asm` is the one
spelling of the bracket (`with inline_asm():`, the DSL's class, runs the same but is not written).

NVVM's bracket has no blank line before the end comment: `nvasm.<insn>(...)`
or `with nvasm():`. An end comment at its own indent (before a
label) is `end_indent="\\t"`: `asm.<insn>(..., end_indent="\\t")`,
`with asm(end_indent="\\t"):`. The block's first register declaration is a
keyword of the `with`: `with asm(block=True, pred="p") as p_2:`.
"""

from __future__ import annotations

from ptx2py.transpile.dsl.structured import STATEMENT_CALLS
from ptx2py.transpile.generator import q

from .ir import Call, Display, Kw, is_call, is_insn, kwargs, stmt, taken_names, unq

BEGIN, END = '" begin inline asm"', '" end inline asm"'
NAMES = ("asm", "nvasm", "inline_asm")


def _is(s, text):
    return is_call(s, "ptx.comment", 1) and s.expr.items[0] == text


def _end_indent(s):
    """"" for the end comment, its indent for `ptx.comment(END, indent=...)`, else None."""
    if _is(s, END):
        return ""
    if is_call(s, "ptx.comment", 2) and s.expr.items[0] == END and set(kwargs(s.expr)) == {"indent"}:
        return unq(kwargs(s.expr)["indent"])
    return None


def _one_insn_block(stmts, k, depth) -> bool:
    """`with ptx.block():` at stmts[k] holding exactly one plain instruction."""
    if k + 2 >= len(stmts):
        return False
    w, insn, after = stmts[k], stmts[k + 1], stmts[k + 2]
    return (_plain_block(w, depth) and is_insn(insn) and insn.depth == depth + 1 and not insn.prefix
            and insn.expr.head.startswith("ptx.") and after.depth <= depth)


_BLOCK_KW = frozenset({"fmt", "indent", "lead", "close_indent", "close_lead"})


def _plain_block(w, depth, keywords=False) -> bool:
    """`with ptx.block():` at `depth` (with only layout keywords, if `keywords`)."""
    return (w.prefix == "with " and w.depth == depth and w.expr.__class__ is Call and w.expr.head == "ptx.block"
            and (not w.expr.items or keywords and all(i.__class__ is Kw and i.name in _BLOCK_KW
                                                          for i in w.expr.items)))


def _block_end(stmts, k) -> int:
    """The index after the body of the `with` statement at k."""
    j = k + 1
    while j < len(stmts) and stmts[j].depth > stmts[k].depth:
        j += 1
    return j


def _closing(stmts, j, depth):
    """(tight, end indent, index after) of the bracket's end at j, or None."""
    n = len(stmts)
    if j + 1 < n and is_call(stmts[j], "ptx.blank", 0) and stmts[j].depth == depth and stmts[j + 1].depth == depth:
        ind = _end_indent(stmts[j + 1])
        if ind is not None:
            return False, ind, j + 2
    if j < n and stmts[j].depth == depth:
        ind = _end_indent(stmts[j])
        if ind is not None:
            return True, ind, j + 1
    return None


def _with_call(tight, ind, block) -> Call:
    kw = []
    if block is not None:
        kw.append(Kw("block", "True"))
        kw.extend(block.expr.items)  # the `{ }` block's own layout keywords
    if ind:
        kw.append(Kw("end_indent", q(ind)))
    return Call("nvasm" if tight else "asm", kw)


def _at_inside(b):
    """b with its `at=` keyword (a `.loc` inside the markers) as an `at(...).` prefix of its
    head, which `asm.` keeps inside them (`asm.<insn>(..., at=...)` puts it before)."""
    kw = [i for i in b.expr.items if i.__class__ is Kw and i.name == "at"]
    if not kw:
        return b
    h = b.expr.head
    head = kw[0].value + "." + (h[4:] if h.startswith("ptx.") else h)
    return stmt(Call(head, [i for i in b.expr.items if i is not kw[0]]), b.depth)


def _again(s, ctx):
    """The head without its `at(...)` prefix of a bracket's first statement whose `.loc`
    repeats the current one (sugar/srcloc.py), else None: `asm.here.<insn>`, `with asm.here():`."""
    hit = getattr(ctx, "repeats_loc", {}).get(id(s))
    return hit[1] if hit is not None and hit[0] is s else None


def _statement_call(s) -> bool:
    """A whole call the prefixes take like an instruction (`mbarrier_wait(...)`)."""
    return any(is_call(s, n) for n in STATEMENT_CALLS)


_WITH_KW = frozenset({"blank", "block", "end_indent", "prefix"}) | _BLOCK_KW


def _declaration(s):
    """(keyword, `as` target) of a block's first statement `p_2 = reg.pred("p")` (names only)."""
    e = s.expr
    if not s.prefix.endswith(" = ") or s.trailer or e.__class__ is not Call or not e.head.startswith("reg.") \
            or not e.items or any(unq(i) is None for i in e.items):
        return None
    kind = e.head[4:]
    if not kind.isidentifier() or kind in _WITH_KW:
        return None
    target = s.prefix[:-3]
    if len(e.items) == 1:
        return Kw(kind, e.items[0]), target
    return Kw(kind, Display("(", ")", list(e.items))), f"({target})"


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    out = []
    i, n = 0, len(stmts)
    while i < n:
        s = stmts[i]
        if _is(s, BEGIN):
            d = s.depth
            j = i + 1
            while j < n and stmts[j].depth == d and not stmts[j].prefix and not stmts[j].trailer \
                    and not _is(stmts[j], BEGIN) and _end_indent(stmts[j]) is None \
                    and not is_call(stmts[j], "ptx.blank"):
                j += 1
            body = stmts[i + 1:j]
            one = not body and _one_insn_block(stmts, i + 1, d)
            braces = not body and not one and i + 1 < n and _plain_block(stmts[i + 1], d, keywords=True) \
                and _block_end(stmts, i + 1) > i + 2
            if one:
                body, j = stmts[i + 1:i + 3], i + 3
            elif braces:
                j = _block_end(stmts, i + 1)
                body = stmts[i + 2:j]
            close = _closing(stmts, j, d) if body else None
            if close is None:
                out.append(s)
                i += 1
                continue
            tight, ind, end = close
            again = _again(body[0], ctx) if body and not one and not braces else None
            h = body[0].expr.head if len(body) == 1 and (is_insn(body[0]) or _statement_call(body[0])) \
                and not braces else ""
            if one and not ind:  # `{ insn }`
                b = body[1]
                h = b.expr.head
                p = ("nvasm." if tight else "asm.") + "block."
                out.append(stmt(Call(p + (h[4:] if h.startswith("ptx.") else h), b.expr.items), d))
            elif h.startswith(("ptx.", "at(")) or h in STATEMENT_CALLS:
                b = _at_inside(body[0])
                h = b.expr.head if again is None else "here." + (again[4:] if again.startswith("ptx.") else again)
                p = "nvasm." if tight else "asm."
                items = list(b.expr.items) + ([Kw("end_indent", q(ind))] if ind else [])
                out.append(stmt(Call(p + (h[4:] if h.startswith("ptx.") else h), items), b.depth))
            else:
                block = stmts[i + 1] if one or braces else None
                if one:
                    body = body[1:]
                call, trailer = _with_call(tight, ind, block), ":"
                if again is not None:  # `with asm.here():` and the first statement without its prefix
                    call.head += ".here"
                    body = [stmt(Call(again, body[0].expr.items), body[0].depth), *body[1:]]
                decl = _declaration(body[0]) if block is not None and len(body) > 1 else None
                if decl is not None:
                    call.items.append(decl[0])
                    trailer = f" as {decl[1]}:"
                    body = body[1:]
                out.append(stmt(call, d, "with ", trailer))
                for b in body:
                    b.depth += block is None
                    out.append(b)
            i = end
            continue
        out.append(s)
        i += 1
    return out
