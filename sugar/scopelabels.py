"""LLVM's debug-scope labels left to the DSL: `scope_labels()` in the function body.

    ptx.label(L.tmp145)
    at(314, 12, fresh_kernels_64).shfl.sync.bfly.b32(r[447], r[446], 1, 31, -1)
->  at(314, 12, fresh_kernels_64).shfl.sync.bfly.b32(r[447], r[446], 1, 31, -1)

LLVM writes `$L__tmpN:` wherever the debug scope (the inlined call a `.loc` names) changes
from one instruction to the next (`transpile/dsl/scopelabels.py` says where and how it counts);
in a function where that rule gives back each such label, the body leaves them to the DSL
and says so once, `scope_labels()` after its register declarations. The labels the rule does
not write (a function's first, the one after its `ret`) stay; DWARF's rows still name all of them.
Without these lines, the statements they split (a butterfly reduction's rounds, each in its
inlined call) roll into loops.
"""

from __future__ import annotations

from ptx2py.ptxgrammar.tree import Function, Label
from ptx2py.transpile.dsl.scopelabels import implied, number

from .debuglabels import label_spellings, referenced_labels
from .ir import Call, Kw, stmt, taken_names
from .loops import any_label, label_atom

NAMES = ("scope_labels",)


def run(stmts, ctx):
    if ctx.module is None or taken_names(stmts) & set(NAMES):
        return stmts
    implicit = _implicit_labels(ctx.module)
    if not implicit:
        return stmts
    spelling = label_spellings(stmts)
    if spelling is None:
        return stmts
    out, k, n = [], 0, len(stmts)
    while k < n:   # each function: its statements, the rule's labels left out
        j = k + 1
        while j < n and stmts[j].depth > 0:
            j += 1
        out += _function(stmts[k:j], implicit, spelling)
        k = j
    return out


def _implicit_labels(module) -> dict:
    """{label spelling: (the function's index, its `first=`)} for the labels the rule writes back."""
    labels = [x.name for x in module.walk() if x.__class__ is Label]
    if len(set(labels)) != len(labels):   # (labels are found by name)
        return {}
    named = referenced_labels(module)   # branch targets stay in sight
    out, last = {}, -1
    for k, fn in enumerate(module.items):
        if fn.__class__ is not Function or fn.body is None:
            continue
        found = implied(fn.body.items, last + 1, named)
        if found is not None:
            skip, first = found
            out.update((x.name, (k, first)) for x in fn.body.walk() if id(x) in skip)
        for x in fn.body.walk():
            n = number(x)
            if n is not None:
                last = n
    return out


def _function(run, implicit, spelling):
    """The function's statements without the rule's labels, `scope_labels()` after its register
    declarations; unchanged unless each of them is a plain `ptx.label(...)` statement here."""
    kept, left = [], {}
    for s in run:
        atom = any_label(s)
        name = spelling(atom) if atom is not None else None
        if name in implicit:
            if label_atom(s) is None:
                return run   # a label with layout of its own: the rule would not write that
            left[name] = implicit[name]
            continue
        kept.append(s)
    if not left:
        return run
    fn, first = next(iter(left.values()))
    if sum(1 for v in implicit.values() if v[0] == fn) != len(left):
        return run
    k = 1
    while k < len(kept) and kept[k].depth == 1 and kept[k].prefix.endswith(" = "):
        k += 1   # after the register declarations
    call = Call("scope_labels", [Kw("first", str(first))] if first else [])
    return kept[:k] + [stmt(call, 1)] + kept[k:]
