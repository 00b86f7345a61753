"""Runs of declarations that differ only in the declared name -> one loop over the names:

    var.global_.align(1).b8("_ZN...cpo5beginE", dims=(1,))      for spelling in (
    var.global_.align(1).b8("_ZN...cpo3endE", dims=(1,))    ->      "_ZN...cpo5beginE",
    var.global_.align(1).b8("_ZN...cpo6cbeginE", dims=(1,))         "_ZN...cpo3endE", ...
                                                                 ):
                                                                     var.global_.align(1).b8(spelling, dims=(1,))

(nvcc declares a dozen cuda::std customization-point objects this way in every module.)
Only declarations no Python name is bound to, MIN_RUN or more in a row.
"""

from __future__ import annotations

from .ir import Call, Display, stmt, taken_names, unq

MIN_RUN = 3
VAR = "spelling"


def _key(s):
    """The declaration with its name left out, or None when `s` is not a plain declaration."""
    e = s.expr
    if s.prefix or s.trailer or e.__class__ is not Call or not e.head.startswith("var.") or not e.items:
        return None
    if unq(e.items[0]) is None:
        return None
    return s.depth, Call(e.head, ["_", *e.items[1:]]).flat()


def run(stmts, ctx):
    if VAR in taken_names(stmts):
        return stmts
    out, k, n = [], 0, len(stmts)
    while k < n:
        key = _key(stmts[k])
        j = k + 1
        while key is not None and j < n and _key(stmts[j]) == key:
            j += 1
        if key is None or j - k < MIN_RUN:
            out.append(stmts[k])
            k += 1
            continue
        first = stmts[k]
        names = Display("(", ")", [s.expr.items[0] for s in stmts[k:j]])
        out.append(stmt(names, first.depth, f"for {VAR} in ", ":"))
        out.append(stmt(Call(first.expr.head, [VAR, *first.expr.items[1:]]), first.depth + 1))
        k = j
    return out
