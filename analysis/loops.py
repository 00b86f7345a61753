"""Natural loops: a back edge t -> h is an edge whose target dominates its source;
its loop is h and every block that reaches t without passing h."""

from __future__ import annotations

from dataclasses import dataclass, field

from .dominators import _postorder, dominates, dominators


@dataclass
class Loop:
    header: int
    latches: list  # sources of the back edges
    blocks: set
    exits: list = field(default_factory=list)  # (inside, outside) edges
    parent: "Loop | None" = None


def back_edges(g, idom=None) -> list:
    idom = dominators(g) if idom is None else idom
    return [(a, b) for a, b in g.edges() if idom[a] is not None and dominates(idom, b, a)]


def natural_loops(g, idom=None) -> list:
    """One `Loop` per header (back edges to one header merged), innermost first; `parent` set."""
    idom = dominators(g) if idom is None else idom
    by_header: dict = {}
    for t, h in back_edges(g, idom):
        by_header.setdefault(h, []).append(t)
    loops = []
    for h, latches in by_header.items():
        body = {h}
        work = [t for t in latches if t != h]
        body.update(work)
        while work:
            v = work.pop()
            for p in g.blocks[v].pred:
                if p not in body and idom[p] is not None:
                    body.add(p)
                    work.append(p)
        exits = [(a, b) for a in sorted(body) for b in g.blocks[a].succ if b not in body]
        loops.append(Loop(h, sorted(latches), body, exits))
    loops.sort(key=lambda lp: len(lp.blocks))
    for k, lp in enumerate(loops):
        for outer in loops[k + 1:]:
            if lp.header in outer.blocks and lp.blocks <= outer.blocks:
                lp.parent = outer
                break
    return loops


def irreducible_edges(g, idom=None) -> list:
    """Retreating edges of a depth-first walk that are not back edges (none: the graph is reducible)."""
    idom = dominators(g) if idom is None else idom
    if not g.blocks:
        return []
    order = _postorder(len(g.blocks), lambda v: g.blocks[v].succ, [0])
    rank = {v: k for k, v in enumerate(order)}
    out = []
    for a, b in g.edges():
        if a in rank and b in rank and rank[b] >= rank[a] and not dominates(idom, b, a):
            out.append((a, b))
    return out
