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
    stack = [expr]
    while stack:
        e = stack.pop()
        cls = e.__class__
        if cls is ir.Builtin:
            if e.name in THREAD_BUILTINS:
                return True
        elif cls is ir.Var:
            if e.name in varying:
                return True
        elif cls is tuple:
            stack.extend(e)
        else:
            children = _CHILDREN.get(cls)
            if children is None:
                children = _children(cls)
            stack.extend([getattr(e, name) for name in children])
    return False


_CHILDREN: dict = {}


def _children(cls) -> tuple:
    """The fields of an expression class (non-expressions have none to visit)."""
    names = tuple(f.name for f in dataclasses.fields(cls)) if issubclass(cls, ir.Expr) else ()
    _CHILDREN[cls] = names
    return names


def varying_vars(body) -> set[str]:
    """The variables of a kernel body that may differ between threads (a fixed point)."""
    varying: set[str] = set()
    while True:
        before = len(varying)
        _visit(body, False, varying)
        if len(varying) == before:
            return varying


def _visit(stmts, divergent: bool, varying: set[str]) -> None:
    for s in stmts:
        if isinstance(s, ir.Load):
            varying.add(s.dest)
        elif isinstance(s, (ir.Assign, ir.Accum)):
            if divergent or is_varying(s.value, varying):
                varying.add(s.var)
        elif isinstance(s, (ir.Loop, ir.StridedLoop)):
            inner = divergent or loop_is_varying(s, varying)
            if inner or is_varying(s.start, varying) or is_varying(s.step, varying):
                varying.add(s.var)
            _visit(s.body, inner, varying)
        elif isinstance(s, ir.Cond):
            inner = divergent or is_varying(s.cond, varying)
            _visit(s.then, inner, varying)
            _visit(s.else_, inner, varying)
        elif isinstance(s, ir.WarpShuffle):
            varying.add(s.var)
        elif isinstance(s, ir.TreeHalve):
            if divergent or s.segments != 1:
                varying.add(s.var)
        elif isinstance(s, ir.ZeroInit) and divergent:
            varying.update(s.vars)


def loop_is_varying(s, varying: set[str]) -> bool:
    """Whether threads may run a loop a different number of times."""
    return any(is_varying(e, varying) for e in (s.start, s.stop, s.step))
