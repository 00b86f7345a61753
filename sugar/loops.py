"""Natural loops -> `with loop(...)` blocks, found on the control-flow graph (`analysis`)
of each function body, not by pattern:

    L: <body> @p bra L;                 -> with loop(L, while_=p): <body>
    L: ... @q bra X; ... bra.uni L; X:  -> with loop(L, uni=True): ... break_if(q, to=X) ...
    bra.uni L; L: <body> @p bra L;      -> with loop(L, while_=p, enter=L): <body>
    L: ... @p bra L; <more loop blocks> -> with loop(L, back=False): ... continue_if(p, to=L) ...
    bra.uni H; T: <latch> H: <test> @p bra T;   (rotated: the latch printed above the header)
                                        -> with loop(T, while_=p, enter=H): <latch> H: <test>

A loop's range runs from its first block's label to the last branch back to it; every
label inside is reached only from inside (labels nothing branches to, `$L__tmpN`, are
fine). Branches from a raised loop to a label outside it are `break_if`/`break_to`;
guarded branches back to its top label are `continue_if`. Statements are only grouped,
never moved. A function whose graph is irreducible keeps its loops flat, with a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ptx2py.analysis import build, dominators, irreducible_edges, natural_loops
from ptx2py.analysis.cfg import Step

from .ir import Call, Kw, is_call, stmt, taken_names

LINE = 88
MAX_DEPTH = 17  # Python allows 20 statically nested blocks
IRREDUCIBLE = "# irreducible control flow (a loop with two entries): its branches stay flat"


def label_atom(s):
    """The label argument atom of a plain `ptx.label(x)` statement, else None."""
    if is_call(s, "ptx.label", 1) and s.expr.items[0].__class__ is str:
        return s.expr.items[0]
    return None


def any_label(s):
    """The label atom of any `ptx.label(x, ...)` statement (layout keywords too), else None."""
    e = s.expr
    if e.__class__ is Call and e.head == "ptx.label" and not s.prefix and not s.trailer and e.items \
            and e.items[0].__class__ is str and all(i.__class__ is Kw for i in e.items[1:]):
        return e.items[0]
    return None


def _bra_items(s):
    """The arguments of a `ptx.bra[.uni](sym(x), ...)` statement, else None."""
    e = s.expr
    if e.__class__ is not Call or s.prefix or s.trailer or e.head not in ("ptx.bra", "ptx.bra.uni"):
        return None
    items = e.items
    if not items or items[0].__class__ is not Call or items[0].head != "sym" or len(items[0].items) != 1:
        return None
    return items


def branch(s):
    """(target atom, pred or None, uni) of a plain `ptx.bra[.uni](sym(x), pred=?)`, else None."""
    items = _bra_items(s)
    if items is None or len(items) > 2:
        return None
    pred = None
    for it in items[1:]:
        if it.__class__ is not Kw or it.name != "pred":
            return None
        pred = it.value
    return items[0].items[0], pred, s.expr.head == "ptx.bra.uni"


def any_branch(s):
    """(target atom, guarded) of any `ptx.bra[.uni](sym(x), ...)` (layout keywords too), else None."""
    items = _bra_items(s)
    if items is None:
        return None
    return items[0].items[0], any(i.__class__ is Kw and i.name == "pred" for i in items[1:])


class _Unknown(Exception):
    """A control transfer this pass cannot read: the region keeps its branches flat."""


def _is_block(s):
    return s.prefix == "with " and s.expr.__class__ is Call and s.expr.head == "ptx.block"


def _scopes(stmts):
    """The `with ptx.block()` scope path of every statement (labels are scoped as in PTX)."""
    out, stack, count = [], [], 0
    for s in stmts:
        while stack and stack[-1][0] >= s.depth:
            stack.pop()
        out.append(tuple(x[1] for x in stack))
        if _is_block(s):
            count += 1
            stack.append((s.depth, count))
    return out


class Region:
    """One function body's statements and their control-flow graph."""

    def __init__(self, stmts):
        self.stmts = stmts
        scope = _scopes(stmts)
        defined = {}
        for k, s in enumerate(stmts):
            lab = any_label(s)
            if lab is not None:
                defined.setdefault(scope[k], {})[lab] = (scope[k], lab)
        self.label_at = {}  # label key -> its statement's index
        for k, s in enumerate(stmts):
            lab = any_label(s)
            if lab is not None:
                self.label_at[(scope[k], lab)] = k
        self.key_at = {k: key for key, k in self.label_at.items()}

        def resolve(atom, sc):
            for n in range(len(sc), -1, -1):
                got = defined.get(sc[:n], {}).get(atom)
                if got is not None:
                    return got
            raise _Unknown(atom)

        self.target = {}  # branch statement index -> label key
        steps = []
        for k, s in enumerate(stmts):
            steps.append(self._step(k, s, scope[k], resolve))
        self.refs = {}  # label key -> indices of the branches to it
        for k, key in self.target.items():
            self.refs.setdefault(key, []).append(k)
        self.graph = build(range(len(stmts)), lambda k: steps[k])

    def _step(self, k, s, scope, resolve):
        lab = any_label(s)
        if lab is not None:
            return Step(label=(scope, lab))
        e = s.expr
        h = e.head if e.__class__ is Call else ""
        if h in ("ptx.bra", "ptx.bra.uni"):
            br = any_branch(s)
            if br is None:
                raise _Unknown(h)
            key = resolve(br[0], scope)
            self.target[k] = key
            return Step(targets=(key,), guarded=br[1])
        if h.startswith("ptx.brx") or (h.startswith("ptx.") and h[4:].split(".")[0] in ("bra", "brx")):
            raise _Unknown(h)
        if h.split(".")[0:2] in (["ptx", "ret"], ["ptx", "exit"]):
            return Step(stop=True, guarded=any(i.__class__ is Kw and i.name == "pred" for i in e.items))
        return None


@dataclass
class Raised:
    start: int  # the enter branch (rotated) or the top label
    top: int  # the top label
    end: int  # the branch back to the top
    enter: int | None  # the rotated loop's entry label
    closed: bool = True  # ends with the branch back to its top (else `end` is its last statement)


def _find(region, loop, accepted, inc, room):
    stmts, g = region.stmts, region.graph
    lo = min(loop.blocks)
    a = g.blocks[lo].start
    top = label_atom(stmts[a])
    if top is None:
        return None
    d = stmts[a].depth
    scope_key = region.key_at[a]
    start, enter = a, None
    if lo != loop.header:  # rotated: entered by the unconditional branch just above its top label
        h = g.blocks[loop.header].start
        if any_label(stmts[h]) is None or a == 0:
            return None
        br = branch(stmts[a - 1])
        hkey = region.key_at[h]
        if br is None or br[1] is not None or stmts[a - 1].depth != d or region.target.get(a - 1) != hkey:
            return None
        start, enter = a - 1, h
    elif a > 0 and stmts[a - 1].depth == d and region.target.get(a - 1) == scope_key \
            and (branch(stmts[a - 1]) or (None, "fmt"))[1] is None:  # entered by a branch to its top above it
        start, enter = a - 1, a
    last_block_end = max(g.blocks[b].end for b in loop.blocks) - 1
    end = None
    k = a + 1
    while k < len(stmts) and stmts[k].depth >= d and k <= last_block_end:
        if stmts[k].depth == d and region.target.get(k) == scope_key:
            end = k
        k += 1
    if k <= last_block_end:
        return None  # the loop's blocks run past its level
    closed = end is not None and end == last_block_end and branch(stmts[end]) is not None
    if not closed:  # no branch back at its end: it repeats through its continue_if
        end = last_block_end
    for key, at in region.label_at.items():  # single entry: labels inside are reached from inside
        if a <= at <= end:
            for src in region.refs.get(key, ()):
                if not (a <= src <= end) and not (at == enter and src == start):
                    return None
    for k in range(a + 1, end + (not closed)):
        s = stmts[k]
        if s.depth < d or s.depth + inc[k] + 1 > MAX_DEPTH:
            return None
        hr = room(stmts, k)
        if hr + 4 * (inc[k] + 1) > LINE >= hr:
            return None
    pred = branch(stmts[end])[1] if closed else None
    if pred is not None and _identifiers(pred) & taken_names(stmts[a:end]):
        return None  # `while_=` is read at the loop's head: a register declared in the body is not bound yet
    last = end if closed else end + 1  # past the body
    for r in accepted:
        inside = r.top < start and end < r.end + (not r.closed)
        around = a < r.start and r.end < last
        if not (r.end < start or end < r.start or inside or around):
            return None
    return Raised(start, a, end, enter, closed)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _identifiers(e) -> set:
    """The Python names an expression IR reads (string literals aside)."""
    c = e.__class__
    if c is str:
        return set() if e[:1] in "\"'" else set(_IDENTIFIER.findall(e))
    if c is Kw:
        return _identifiers(e.value)
    out = set(_IDENTIFIER.findall(getattr(e, "head", "") or ""))
    for i in getattr(e, "items", ()):
        out |= _identifiers(i)
    return out


def _exit_branches(region, loops) -> set:
    """Indices of the branches that leave a natural loop."""
    g, out = region.graph, set()
    for lp in loops:
        for b in lp.blocks:
            blk = g.blocks[b]
            for k in range(blk.start, blk.end):
                key = region.target.get(k)
                if key is not None and region.label_at.get(key) is not None \
                        and g.block_of(region.label_at[key]) not in lp.blocks:
                    out.add(k)
    return out


def raise_region(stmts, room):
    """(statements with their loops raised, ids of the loop-exit branches left as they were)."""
    try:
        region = Region(stmts)
    except _Unknown:
        return stmts, set()
    g = region.graph
    idom = dominators(g)
    if irreducible_edges(g, idom):
        return [stmt(IRREDUCIBLE, stmts[0].depth)] + stmts, set()
    loops = natural_loops(g, idom)
    exits = _exit_branches(region, loops)
    accepted, inc = [], [0] * len(stmts)
    for lp in loops:  # innermost first
        r = _find(region, lp, accepted, inc, room)
        if r is None:
            continue
        accepted.append(r)
        for k in range(r.top + 1, r.end + (not r.closed)):
            inc[k] += 1
    if not accepted:
        return stmts, {id(stmts[k]) for k in exits}
    return _rebuild(region, accepted, inc), {id(stmts[k]) for k in exits}


def _innermost(accepted, k):
    best = None
    for r in accepted:
        if r.top < k < r.end + (not r.closed) and (best is None or r.top > best.top):
            best = r
    return best


def _rebuild(region, accepted, inc):
    stmts = region.stmts
    by_start = {r.start: r for r in accepted}
    skip = {k for r in accepted for k in ((r.start, r.top, r.end) if r.closed else (r.start, r.top))}
    out = []
    for k, s in enumerate(stmts):
        r = by_start.get(k)
        if r is not None:
            top = label_atom(stmts[r.top])
            args = [top]
            if r.closed:
                _, pred, uni = branch(stmts[r.end])
                if pred is not None:
                    args.append(Kw("while_", pred))
                if uni:
                    args.append(Kw("uni", "True"))
            else:
                args.append(Kw("back", "False"))
            if r.enter is not None:
                args.append(Kw("enter", any_label(stmts[r.enter])))
                if not branch(stmts[r.start])[2]:
                    args.append(Kw("enter_uni", "False"))
            d = stmts[r.top].depth + inc[r.top]
            out.append(stmt(Call("loop", args), d, "with ", ":"))
            if r.closed and r.end == r.top + 1:
                out.append(stmt("pass", d + 1))
        if k in skip:
            continue
        s.depth += inc[k]
        lp = _innermost(accepted, k)
        br = branch(s) if lp is not None and k in region.target else None
        if br is not None:
            at = region.label_at.get(region.target[k])
            target, pred, uni = br
            tail = [Kw("uni", "True")] if uni else []
            if at is not None and not (lp.top <= at <= lp.end):
                s = stmt(Call("break_if", [pred, Kw("to", target)] + tail) if pred is not None
                         else Call("break_to", [target] + tail), s.depth)
            elif at == lp.top:
                s = stmt(Call("continue_if", [pred, Kw("to", target)] + tail) if pred is not None
                         else Call("continue_to", [target] + tail), s.depth)
        out.append(s)
    return out


def run(stmts, room):
    """Raise the loops of every function body (each maximal run of statements below depth 0)."""
    out, exits = [], set()
    i, n = 0, len(stmts)
    while i < n:
        if stmts[i].depth == 0:
            out.append(stmts[i])
            i += 1
            continue
        j = i
        while j < n and stmts[j].depth > 0:
            j += 1
        body, ex = raise_region(stmts[i:j], room)
        out.extend(body)
        exits |= ex
        i = j
    return out, exits
