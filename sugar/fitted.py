"""Last touches after every pass: an `at(...)` prefix or `asm.` bracket whose head a later pass
nested too deep to fit its line is spelled as keywords instead, and each `.loc` no pass took is
written in the one typed spelling of source locations."""

from __future__ import annotations

from transpile.dsl.families import FAMILIES
from transpile.dsl.structured import STATEMENT_CALLS
from transpile.format import LINE

from .aliases import _AT
from .ir import Call, Kw, is_call
from .srcloc import _frame, _typed, at_fits


def run(stmts, ctx):
    stmts = [x for s in stmts for x in _fitted(s)]
    if not any(is_call(s, "srcmap") for s in stmts):
        stmts = [_typed_loc(s) for s in stmts]
    return stmts


def _fitted(s):
    """`at(.., ..).<insn>(...)` whose head no longer fits its line (a later pass nested
    it deeper): `<insn>(..., at=at(...))`, which records the same lines in the same order
    (black would split inside the prefix's brackets, which format.layout does not write)."""
    e = s.expr
    if s.prefix or e.__class__ is not Call or _fits(s):
        return [s]
    bracket = e.head.split(".", 1)[0] if e.head.startswith(("asm.at(", "nvasm.at(")) else None
    if bracket is not None:  # `asm.at(...).x(...)`: `with asm():` then `x(..., at=...)`
        inner = _fitted(type(s)(Call(e.head[len(bracket) + 1:], e.items), s.depth + 1))
        if len(inner) != 1 or not _fits(inner[0]):
            return [s]
        kw = [i for i in e.items if i.__class__ is Kw and i.name == "end_indent"]
        inner[0].expr.items[:] = [i for i in inner[0].expr.items if not (i.__class__ is Kw and i.name == "end_indent")]
        return [type(s)(Call(bracket, kw), s.depth, "with ", ":"), inner[0]]
    if not e.head.startswith("at("):
        return [s]
    m = _AT.match(e.head)
    if m is None or any(i.__class__ is Kw and i.name == "at" for i in e.items) or not at_fits(m.group(1)[:-1], s.depth):
        return [s]
    rest = e.head[m.end():]
    first = rest.split(".", 1)[0]
    if first not in ("asm", "nvasm") and first not in FAMILIES and first not in STATEMENT_CALLS:
        rest = "ptx." + rest
    return [type(s)(Call(rest, [*e.items, Kw("at", m.group(1)[:-1])]), s.depth, s.prefix, s.trailer)]


def _fits(s) -> bool:
    """Whether the call's `head(` (or `head()`) fits its line."""
    e = s.expr
    return 4 * s.depth + len(e.head) + (1 if e.items else 2) <= LINE


def _typed_loc(s):
    """A `.loc` no prefix took, `ptx.loc(2, 477, 5, "$L__info_string0", (1, 53, 3))`, in the one
    spelling of source locations: `loc(477, 5, file=2, fn=0, inlined_at=(1, 53, 3))`
    (without `srcmap`, where `loc(...)` would add LLVM's comment)."""
    if not is_call(s, "ptx.loc"):
        return s
    f = _frame(s)
    return s if f is None else type(s)(_typed([f], "loc"), s.depth)
