"""Short function heads: the parameter types of `with k.entry(...)` in runs, and module-level
names for what the heads repeat, where a name saves lines:

    gptr = param.u64.ptr.global_.align(1)                             # a pointer type
    tma_desc = [param.align(64).b8[128], *param.u32 * 2, *param.u64 * 2]   # a repeated group
    with k.entry(tma_desc * 3, param.u32 * 3, gptr * 2, visible=True, reqntid=256):

A group is a sequence of two or more runs that comes back at once in one head (Triton's
tensor descriptor: the CUtensorMap, its shape, its strides). The names are plain Python
values (a `Decl`, a list of them): `k.entry` declares the same parameters under the same
names, so the PTX is the same.
"""

from __future__ import annotations

import re

from ptx2py.transpile.format import layout

from .ir import Call, Display, Kw, layout_lines, stmt

# the state space of a `.ptr` parameter -> its alias
POINTER_NAMES = {"global_": "gptr", "shared": "sptr", "const": "cptr", "local": "lptr", None: "ptr"}
# the first type of a repeated group -> its name (Triton's TensorDescriptor starts with its CUtensorMap)
GROUP_NAMES = {"param.align(64).b8[128]": "tma_desc"}
GROUP_NAME = "param_group"
LAYOUT_KEYWORDS = frozenset({"fmt", "indent", "lead", "close_indent", "close_lead"})
_PARAM_HEAD = re.compile(r"param(\.\w+|\.align\(\d+\))*\Z")
_POINTER = re.compile(r"param\.\w+\.ptr(?:\.(global_|shared|const|local))?(?:\.align\(\d+\))?\Z")


def plain_param(p) -> bool:
    """`param.u64.ptr.global_.align(1)(name)`: a parameter with a type chain and only its name."""
    return p.__class__ is Call and len(p.items) == 1 and _PARAM_HEAD.match(p.head) is not None


def param_type(p):
    """The type of a parameter as `k.entry` takes it: `param.u64`, or `param.align(128).b8[128]`
    for `param.align(128).b8(name, dim=128)`; None for anything else."""
    if plain_param(p):
        return p.head
    if p.__class__ is Call and len(p.items) == 2 and _PARAM_HEAD.match(p.head) and p.items[1].__class__ is Kw \
            and p.items[1].name == "dim" and p.items[1].value.__class__ is str and p.items[1].value.isdigit():
        return f"{p.head}[{p.items[1].value}]"
    return None


def runs(types) -> list:
    """[(item, count)] of consecutive equal items."""
    out = []
    for t in types:
        if out and out[-1][0] == t:
            out[-1][1] += 1
        else:
            out.append([t, 1])
    return [tuple(r) for r in out]


def _spelled(item, count) -> str:
    return item if count == 1 else f"{item} * {count}"


class Head:
    """A function head `py.entry(<types>, <keywords>)` being shortened: its statement, the
    runs of its parameter types (an item: a type or an alias name) and its keywords."""

    def __init__(self, s, kind, py, types, keywords):
        self.s, self.kind, self.py = s, kind, py
        self.runs, self.keywords = runs(types), list(keywords)

    def call(self, items=None) -> Call:
        items = self.runs if items is None else items
        return Call(f"{self.py}.{self.kind}", [_spelled(t, n) for t, n in items] + self.keywords)

    def lines(self, items=None) -> int:
        """The head's lines as black writes it, without the layout keywords the trivia pass takes out."""
        call = self.call(items)
        call = Call(call.head, [it for it in call.items if not (it.__class__ is Kw and it.name in LAYOUT_KEYWORDS)])
        out = []
        layout(call, "    " * self.s.depth, self.s.prefix, self.s.trailer, out)
        return len(out)


def compact(s, py):
    """A Head for `ptx.entry(k.name, params=[param.u64(...), ...], visible=True)` when every
    parameter is plain (or an array of a dimension), in declaration order; else None."""
    call, decls, rest = s.expr, None, []
    for it in call.items[1:]:
        if it.__class__ is Kw and it.name == "params" and it.value.__class__ is Display:
            decls = it.value.items
        else:
            rest.append(it)
    types = [param_type(p) for p in decls or ()]
    if not types or None in types:
        return None
    return Head(s, "entry" if call.head == "ptx.entry" else "func", py, types, rest)


def shorten(heads, fresh) -> list:
    """Name the groups and pointer types the heads repeat where that saves lines; write the
    heads. Returns the names' definitions (module-level statements), `fresh(base)` naming them."""
    defs = []
    groups = {}   # group (tuple of runs) -> its name
    for h in heads:
        found = _repeated_group(h.runs)
        if found is None:
            continue
        start, group, reps = found
        name, base = groups.get(group), GROUP_NAMES.get(group[0][0], GROUP_NAME)
        items = h.runs[:start] + [(name or base, reps)] + h.runs[start + len(group) * reps:]
        if name is None:
            new = _definition(base, group)
            if h.lines() - h.lines(items) <= layout_lines(new.expr, 0, new.prefix):
                continue   # the definition takes the lines it saves
            name = groups[group] = fresh(base)
            items[start] = (name, reps)
            defs.append(_definition(name, group))
        h.runs = items
    defs.extend(_pointer_aliases(heads, defs, fresh))
    for h in heads:
        h.s.expr = h.call()
    return defs


def _definition(name, group):
    items = [t if n == 1 else "*" + _spelled(t, n) for t, n in group]
    return stmt(Display("[", "]", items), 0, name + " = ")


def _repeated_group(rs):
    """(start, group, repetitions) of the longest stretch of runs that is one group of two or
    more runs repeated at once, else None."""
    best = None
    for start in range(len(rs)):
        for p in range(2, (len(rs) - start) // 2 + 1):
            group = tuple(rs[start:start + p])
            reps = 1
            while tuple(rs[start + reps * p:start + (reps + 1) * p]) == group:
                reps += 1
            if reps >= 2 and (best is None or reps * p > best[2] * len(best[1])):
                best = (start, group, reps)
    return best


def _pointer_aliases(heads, defs, fresh) -> list:
    """`gptr = param.u64.ptr.global_.align(1)` for each pointer type whose alias saves more
    lines in the heads (and group definitions) than its own line."""
    out = []
    seen = []
    for h in heads:
        for t, _ in h.runs:
            m = _POINTER.match(t)
            if m and t not in seen:
                seen.append(t)
    for t in seen:
        name = POINTER_NAMES[_POINTER.match(t).group(1)]
        before = sum(h.lines() for h in heads)
        after = sum(h.lines(_renamed(h.runs, t, name)) for h in heads)
        if before - after <= 1:   # the alias line itself
            continue
        name = fresh(name)
        for h in heads:
            h.runs = _renamed(h.runs, t, name)
        out.append(stmt(t, 0, name + " = "))
    return out


def _renamed(rs, t, name):
    return [(name if x == t else x, n) for x, n in rs]
