"""Dominator and post-dominator trees (Cooper, Harvey and Kennedy's iterative algorithm)."""

from __future__ import annotations


def _postorder(n: int, succ, roots) -> list:
    seen, order = [False] * n, []
    for r in roots:
        if seen[r]:
            continue
        seen[r] = True
        stack = [(r, iter(succ(r)))]
        while stack:
            v, it = stack[-1]
            for w in it:
                if not seen[w]:
                    seen[w] = True
                    stack.append((w, iter(succ(w))))
                    break
            else:
                stack.pop()
                order.append(v)
    return order


def _idoms(n: int, succ, pred, roots) -> list:
    """Immediate dominators over `n` nodes from `roots` (a root's idom is itself; unreachable: None)."""
    order = _postorder(n, succ, roots)
    rank = {v: k for k, v in enumerate(order)}
    idom = [None] * n
    for r in roots:
        idom[r] = r
    rpo = [v for v in reversed(order) if v not in roots]

    def meet(a, b):
        while a != b:
            while rank[a] < rank[b]:
                a = idom[a]
            while rank[b] < rank[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for v in rpo:
            new = None
            for p in pred(v):
                if idom[p] is not None:
                    new = p if new is None else meet(p, new)
            if new is not None and idom[v] != new:
                idom[v] = new
                changed = True
    return idom


def dominators(g) -> list:
    """`idom[b]`: the immediate dominator of block b (the entry's is 0; unreachable blocks: None)."""
    if not g.blocks:
        return []
    return _idoms(len(g.blocks), lambda v: g.blocks[v].succ, lambda v: g.blocks[v].pred, [0])


def post_dominators(g) -> list:
    """`ipdom[b]`: the immediate post-dominator of block b, over a virtual exit node
    `len(g.blocks)` that every stopping block reaches (blocks that never stop: None)."""
    n = len(g.blocks)
    exit_ = n
    stops = [b.index for b in g.blocks if b.stops]

    def succ(v):  # of the reversed graph
        return stops if v == exit_ else g.blocks[v].pred

    def pred(v):
        return [] if v == exit_ else g.blocks[v].succ + ([exit_] if g.blocks[v].stops else [])

    return _idoms(n + 1, succ, pred, [exit_])[:n]


def dominates(idom: list, a: int, b: int) -> bool:
    """a dominates b (every block dominates itself)."""
    while b is not None:
        if a == b:
            return True
        up = idom[b]
        if up == b:
            return False
        b = up
    return False
