"""nvcc's demoted `__shared__` arrays: named by their kernel, and their note folded.

A declaration inside a function whose name is the C++ mangling of one of the function's
local statics (`_ZZ` <function encoding> `E` <length> <name>) is declared through the
function (`KernelName.var`, which spells the same name back):

    sA = var.shared.align(1024).b8("_ZZ9stencil2dILi32ELi8EEvPKfPfiiE2sA", dims=(8192,))
        ->  sA = stencil2d.var.shared.align(1024).b8("sA", dims=(8192,))

nvcc's `// demoted variable` line before a declaration -> its `demoted=True` keyword:

    ptx.comment(" demoted variable")
    sA = stencil2d.var.shared.align(1024).b8("sA", dims=(8192,))
        ->  sA = stencil2d.var.shared.align(1024).b8("sA", dims=(8192,), demoted=True)

Only a comment with the default layout directly before a `var.<space>` declaration
at the same depth, and only where the keyword adds no line to the declaration.
"""

from __future__ import annotations

import re

from ptx2py.transpile.generator import q

from .ir import Call, Kw, is_call, kwargs, layout_lines, unq

TEXT = '" demoted variable"'
_LOCAL = re.compile(r"([1-9][0-9]*)([A-Za-z_][A-Za-z0-9_]*)\Z")  # <length><name>
_FUNCTION = (".entry", ".func")  # the calls that open a function's body


def _is_note(s) -> bool:
    return is_call(s, "ptx.comment", 1) and s.expr.items[0] == TEXT


def _is_var(s, depth) -> bool:
    e = s.expr
    return (s.depth == depth and s.prefix.endswith(" = ") and not s.trailer and e.__class__ is Call
            and declares_variable(e) and not any(i.__class__ is Kw and i.name == "demoted" for i in e.items))


def declares_variable(e) -> bool:
    """A `var.<space>...(...)` or `<kernel>.var.<space>...(...)` declaration call."""
    h = e.head
    return h.startswith("var.") or ".var." in h and h.split(".var.", 1)[0].isidentifier()


def local_name(kernel: str, name: str):
    """The local static's own name when `name` is the mangling of one of `kernel`'s, else None."""
    enc = kernel[2:] if kernel.startswith("_Z") else f"{len(kernel)}{kernel}"
    head = f"_ZZ{enc}E"
    m = _LOCAL.match(name, len(head)) if name.startswith(head) else None
    return m.group(2) if m is not None and int(m.group(1)) == len(m.group(2)) else None


def _kernel(s):
    """(Python name, PTX spelling) of a `k = kernel_name("spelling", ...)` whose
    parameters leave `k.var` free (no parameter is named `var`), else None."""
    e = s.expr
    if s.depth or not s.prefix.endswith(" = ") or e.__class__ is not Call or e.head != "kernel_name":
        return None
    spelling = unq(e.items[0]) if e.items else None
    params = kwargs(e).get("params")
    named = None if params is None else unq(params)
    plain = params is None or named is not None or params.__class__ is str and params.isdigit()
    if spelling is None or not plain or "var" in (named or "").split():
        return None  # a tuple of names, or a parameter `var`: leave the declarations alone
    return s.prefix[:-3], spelling


def _function_of(s, kernels):
    """The kernel_name a `with k.entry(...):` / `with ptx.entry(k.name, ...):` (or `.func`)
    declares, else None."""
    e = s.expr
    if e.__class__ is not Call or s.prefix != "with ":
        return None
    owner, _, what = e.head.rpartition(".")
    if "." + what not in _FUNCTION:
        return None
    if owner == "ptx":
        first = e.items[0] if e.items else None
        owner = first[:-5] if first.__class__ is str and first.endswith(".name") else None
    return owner if owner in kernels else None


def _scoped(stmts):
    """Each declaration of a function's local static inside the function -> `<k>.var...`."""
    kernels, current = {}, None
    for s in stmts:
        if s.depth == 0:
            k = _kernel(s)
            if k is not None:
                kernels[k[0]] = k[1]
            current = _function_of(s, kernels)
            continue
        e = s.expr
        if current is None or e.__class__ is not Call or not e.head.startswith("var.") or not e.items:
            continue
        name = unq(e.items[0])
        local = None if name is None else local_name(kernels[current], name)
        if local is not None:  # in place: the layout tags know the call and its keywords
            e.head, e.items[0], e._flat = f"{current}.{e.head}", q(local), None


def run(stmts, ctx):
    _scoped(stmts)
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
