"""Pipeline registers named by role, from the data flow inside raised loops (sugar/structure.py):

    ptx.add.s32(t, x, 1); ptx.setp.gt.s32(q, t, N - 1); ptx.selp.b32(x, 0, t, q)
        -> x counts stages modulo N: `stage = r[123]`
    ptx.selp.b32(y, 1, 0, q); ptx.xor.b32(z, z, y)      (q: a stage counter's wrap)
        -> z flips when the stages wrap: `phase = r[122]`
    ptx.shl.b32(a, stage, 3); ptx.add.s32(b, smem, a); ptx.add.s32(bar, b, C); mbarrier...([bar])
        -> C is where the stages' mbarriers start: `bar_base = 98304`

Each name is a plain assignment just before the loop, under a comment saying what it is;
sugar/regnames.py then writes it in every reference of the function (the initialisation before
the loop binds it, `ptx.mov.b32(stage := r[123], -1)`, and the assignment is left out). The reader
can rename it, and the register it names is the same object, so the PTX does not change.
"""

from __future__ import annotations

import re

from .ir import Call, Display, Kw, per_function, positional, stmt, taken_names
from .names import RESERVED


def _op(s, opcode):
    """The positional operands of an instruction statement `<prefix>.<opcode>(...)`, else None."""
    e = s.expr
    if e.__class__ is not Call or s.prefix or s.trailer or not (
            e.head == "ptx." + opcode or e.head.endswith(")." + opcode)):
        return None
    if any(i.__class__ is Kw for i in e.items):
        return None
    return positional(e)


def _int(a):
    return int(a) if a.__class__ is str and re.fullmatch(r"-?\d+", a) else None


def _counters(body):
    """[(stage register, stages, wrap predicate)] and {phase register: its stage register}."""
    adds, setps, counters, flips = {}, {}, [], {}
    for s in body:
        ops = _op(s, "add.s32") or _op(s, "add.u32")
        if ops and len(ops) == 3 and ops[2] == "1":
            adds[ops[0]] = ops[1]
        ops = _op(s, "setp.gt.s32") or _op(s, "setp.gt.u32")
        if ops and len(ops) == 3 and ops[1] in adds and _int(ops[2]) is not None:
            setps[ops[0]] = (ops[1], _int(ops[2]) + 1)
        ops = _op(s, "selp.b32")
        if ops and len(ops) == 4 and ops[3] in setps:
            t, n = setps[ops[3]]
            if ops[1] == "0" and ops[2] == t and adds.get(t) == ops[0] and n > 1:
                counters.append((ops[0], n, ops[3]))
            elif ops[1] == "1" and ops[2] == "0":
                flips[ops[0]] = ops[3]
        ops = _op(s, "xor.b32")
        if ops and len(ops) == 3 and ops[0] == ops[1] and ops[2] in flips:
            wrap = flips[ops[2]]
            owner = next((c for c in counters if c[2] == wrap), None)
            if owner is not None:
                flips[ops[0]] = owner[0]
    phases = {r: c for r, c in flips.items() if c in {x[0] for x in counters}}
    return counters, phases


def _fresh(base, used):
    n, k = base, 1
    while n in used:
        n, k = f"{base}_{k}", k + 1
    used.add(n)
    return n


def _sub(e, pattern, names):
    c = e.__class__
    if c is str:
        if e[:1] in "\"'":
            return e
        return pattern.sub(lambda m: names[m.group(0)], e)
    if c is Call:
        new = [_sub(i, pattern, names) for i in e.items]
        if any(a is not b for a, b in zip(new, e.items)):
            e.items, e._flat = new, None
        return e
    if c is Kw:
        e.value = _sub(e.value, pattern, names)
        return e
    if c is Display:
        e.items = [_sub(i, pattern, names) for i in e.items]
        e._flat = None
        return e
    return e


def _is_loop(s) -> bool:
    return s.prefix == "with " and s.expr.__class__ is Call and s.expr.head == "loop"


def _barrier_bases(body, stages):
    """The `add.s32(x, y, C)` statements giving an mbarrier's address, where
    y = smem + (stage << 3) (one 8-byte mbarrier per stage), and their common C; else ([], None)."""
    scaled, indexed, adds = set(), set(), []
    for s in body:
        ops = _op(s, "shl.b32")
        if ops and len(ops) == 3 and ops[1] in stages and ops[2] == "3":
            scaled.add(ops[0])
        ops = _op(s, "add.s32")
        if ops and len(ops) == 3 and ops[2] in scaled:
            indexed.add(ops[0])
        elif ops and len(ops) == 3 and ops[1] in indexed and _int(ops[2]) is not None:
            adds.append((s, ops[0], ops[2]))
    used_as_bar = set()
    for s in body:
        e = s.expr
        if e.__class__ is Call and "mbarrier" in e.head:
            for i in e.items:
                v = i.value if i.__class__ is Kw else i
                if v.__class__ is Display and v.open == "[" and len(v.items) == 1:
                    used_as_bar.add(v.items[0])
    adds = [(s, c) for s, x, c in adds if x in used_as_bar]
    if not adds or len({c for _, c in adds}) != 1:
        return [], None
    return [s for s, _ in adds], adds[0][1]


def _loop(body, depth, used):
    """(declarations to put before the loop, the loop with its role registers named)."""
    counters, phases = _counters(body[1:])
    names, notes = {}, []
    for reg, n, _ in counters:
        if reg not in names:
            names[reg] = _fresh("stage", used)
            notes.append((reg, f"pipeline stage index: counts {n} stages"))
    for reg, owner in phases.items():
        if reg not in names:
            names[reg] = _fresh("phase", used)
            notes.append((reg, f"mbarrier phase bit: flips when {names[owner]} wraps"))
    if not names:
        return [], body
    adds, base = _barrier_bases(body[1:], set(names))
    decls = []
    if adds:
        bar = _fresh("bar_base", used)
        for s in adds:
            s.expr.items[2] = bar
            s.expr._flat = None
        decls += [stmt("# shared-memory offset of the mbarriers, one of 8 bytes per stage", depth),
                  stmt(base, depth, bar + " = ")]
    pattern = re.compile("|".join(r"(?<![\w\]])" + re.escape(r) + r"(?![\w\[])" for r in names))
    for s in body:
        s.expr = _sub(s.expr, pattern, names)
    for reg, note in notes:
        decls += [stmt(f"# {note}", depth), stmt(reg, depth, names[reg] + " = ")]
    return decls, body


def _function(fn, used):
    """Each outermost raised loop of a function: its stage and phase registers named inside it,
    the names bound just before it."""
    out, k = [], 0
    while k < len(fn):
        s = fn[k]
        if not _is_loop(s):
            out.append(s)
            k += 1
            continue
        j = k + 1
        while j < len(fn) and fn[j].depth > s.depth:
            j += 1
        decls, body = _loop(fn[k:j], s.depth, used)
        out += decls + body
        k = j
    return out


def run(stmts, ctx):
    used = taken_names(stmts) | RESERVED
    return per_function(stmts, lambda fn: _function(fn, set(used)))
