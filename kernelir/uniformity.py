"""Which IR values may differ between the threads of a block (thread-dependent).

The compiler refuses a barrier under a thread-dependent branch or loop: threads
that skip `bar.sync` leave the others waiting (undefined on a GPU), which the
interpreter reports as a divergent barrier. A value is thread-dependent when it
reads a thread index (`tid.*`, `laneid`, `warpid`), a loaded value, a shuffled
value, or a variable assigned from one or under a thread-dependent branch.
The analysis is conservative (flow-insensitive): it may call a uniform value
thread-dependent, never the reverse.
"""
from __future__ import annotations

import dataclasses

from . import ir

THREAD_BUILTINS = frozenset({"tid.x", "tid.y", "tid.z", "laneid", "warpid"})


def is_varying(expr, varying: set[str]) -> bool:
    """Whether `expr` may differ between threads, given the thread-dependent variables."""
    thread, names = reads(expr)
    return thread or not names.isdisjoint(varying)


def reads(expr) -> tuple[bool, frozenset]:
    """(reads a thread index?, the variable names it reads) of an expression."""
    thread, names = False, set()
    stack = [expr]
    while stack:
        e = stack.pop()
        cls = e.__class__
        if cls is ir.Builtin:
            thread = thread or e.name in THREAD_BUILTINS
        elif cls is ir.Var:
            names.add(e.name)
        elif cls is tuple:
            stack.extend(e)
        else:
            children = _CHILDREN.get(cls)
            if children is None:
                children = _children(cls)
            stack.extend([getattr(e, name) for name in children])
    return thread, frozenset(names)


_CHILDREN: dict = {}


def _children(cls) -> tuple:
    """The fields of an expression class (non-expressions have none to visit)."""
    names = tuple(f.name for f in dataclasses.fields(cls)) if issubclass(cls, ir.Expr) else ()
    _CHILDREN[cls] = names
    return names


class Uniformity:
    """The thread-dependent variables of a kernel body (a fixed point), and which of
    its expressions are thread-dependent. Each expression is walked once (its reads
    are kept by identity: the body outlives this object)."""

    def __init__(self, body):
        self.cache: dict = {}
        self.varying: set[str] = set()
        while True:
            before = len(self.varying)
            self._visit(body, False)
            if len(self.varying) == before:
                break

    def is_varying(self, expr) -> bool:
        r = self.cache.get(id(expr))
        if r is None:
            r = self.cache[id(expr)] = (expr, *reads(expr))
        return r[1] or not r[2].isdisjoint(self.varying)

    def loop_is_varying(self, s) -> bool:
        """Whether threads may run a loop a different number of times."""
        return self.is_varying(s.start) or self.is_varying(s.stop) or self.is_varying(s.step)

    def _visit(self, stmts, divergent: bool) -> None:
        varying, is_varying = self.varying, self.is_varying
        for s in stmts:
            cls = s.__class__
            if cls is ir.Load:
                varying.add(s.dest)
            elif cls is ir.Assign or cls is ir.Accum:
                if divergent or is_varying(s.value):
                    varying.add(s.var)
            elif cls is ir.Loop or cls is ir.StridedLoop:
                inner = divergent or self.loop_is_varying(s)
                if inner or is_varying(s.start) or is_varying(s.step):
                    varying.add(s.var)
                self._visit(s.body, inner)
            elif cls is ir.Cond:
                inner = divergent or is_varying(s.cond)
                self._visit(s.then, inner)
                self._visit(s.else_, inner)
            elif cls is ir.WarpShuffle:
                varying.add(s.var)
            elif cls is ir.TreeHalve:
                if divergent or s.segments != 1:
                    varying.add(s.var)
            elif cls is ir.ZeroInit and divergent:
                varying.update(s.vars)


def varying_vars(body) -> set[str]:
    """The variables of a kernel body that may differ between threads."""
    return Uniformity(body).varying
