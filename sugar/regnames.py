"""Registers named by role and from the kernel's source, in every reference to them:

    ptx.ld.param.b32(K := r[5], [sym(k.K)])        # what is loaded from parameter K
    ptx.mov.u32(ctaid_x := r[18], sreg.ctaid.x)     # a special register
    ptx.add.s32(rm := r[40], r[38], r[39])          # `rm = pid_m * BM + ...` at that .loc
    ptx.setp.lt.s32(p[14], K, 1)                    # ... and every later reference

Two passes: sugar/valuenames.py (early, while each statement is one instruction and `ptx.loc`
statements are plain) picks a name per register of each function; this one (late, after the
rolling passes) binds each name at the register's first reference (`name := r[5]`, the walrus:
no line of its own) and writes the name for every later `r[5]`. The names the other passes bind
(`stage = r[123]` of sugar/roles.py, `acc = r[125:189]` of sugar/tensorcore.py) are
extended the same way to the whole function: `acc[3]` for `r[128]`. A name is a Python
variable bound to the register object, so any renaming leaves the PTX as it was.

Source names: the outermost `.loc` of an instruction (through `inlined_at`) gives its line
in the kernel's own source (`.file` paths that exist, `--source`, corpus/src); the name the
statement there assigns (sugar/srcnames.py) names the registers defined at it
(sugar/valuenames.py).
"""

from __future__ import annotations

import builtins
import keyword
import re

from .ir import Call, Display, Kw, children, per_function
from .names import RESERVED

_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
# longer names (a mangled parameter's) stay numbered: `name := r[5]` must fit a line, which black
# would otherwise break inside the register's brackets
MAX_NAME = 32
_ROLE_DECL = re.compile(r"[A-Za-z_]\w*\[[0-9]+\]\Z")
_RANGE_DECL = re.compile(r"([A-Za-z_]\w*)\[([0-9]+):([0-9]+)\]\Z")


def _families(fn) -> list:
    """The register families a function declares (`r = reg.b32(...)`, `p, r = regs(...)`)."""
    out = []
    for s in fn:
        e = s.expr
        if s.depth >= 1 and s.prefix.endswith(" = ") and e.__class__ is Call and (
                e.head.startswith("reg.") or e.head == "regs"):
            out += [n.strip() for n in s.prefix[:-3].split(",")]
    return out


def _pattern(families):
    alt = "|".join(re.escape(f) for f in sorted(families, key=len, reverse=True))
    return re.compile(r"(?<![\w\].])(?:" + alt + r")\[[0-9]+\](?![\w\[])")


def with_families(fn) -> bool:
    return bool(_families(fn))


def _atoms(e, out) -> None:
    if e.__class__ is str:
        if e[:1] not in "\"'":
            out.append(e)
        return
    for i in children(e):
        _atoms(i, out)


def _module_identifiers(stmts) -> set:
    out = set()
    for s in stmts:
        out.update(_IDENT.findall(s.prefix))
        atoms: list = []
        _atoms(s.expr, atoms)
        if s.expr.__class__ is Call:
            out.update(_IDENT.findall(s.expr.head))
        for a in atoms:
            out.update(_IDENT.findall(a))
    return out


# The names sugar's own loops count with (RESERVED keeps them free for the rolling passes, which
# have run by now): a source's `n` or `k` is written as it is where the module does not use it.
_LOOP_VARIABLES = frozenset({"i", "j", "k", "n", "m", "idx", "ii"})
_TAKEN = (RESERVED - _LOOP_VARIABLES) | frozenset(dir(builtins)) | frozenset(keyword.kwlist) \
    | frozenset(keyword.softkwlist)


def _fresh(base, used):
    n = base if base not in used else base + "_"
    k = 1
    while n in used:
        n, k = f"{base}_{k}", k + 1
    used.add(n)
    return n


def _harvest(fn, families) -> dict:
    """{register: name} of the names other passes bound in the function: `stage = r[123]`
    (sugar/roles.py), and `acc = r[125:189]` as {`r[128]`: ("acc", 3)} (sugar/tensorcore.py)."""
    out = {}
    for s in fn:
        target = _decl_target(s, families)
        if target is None:
            continue
        m = _RANGE_DECL.fullmatch(s.expr)
        if m is None:
            out[s.expr] = target
            continue
        lo, hi = int(m.group(2)), int(m.group(3))
        for i in range(lo, hi):
            out[f"{m.group(1)}[{i}]"] = (target, i - lo)
    return out


def _decl_target(s, families):
    """`name` of a `name = r[123]` / `name = r[125:189]` statement inside a function, else None."""
    e = s.expr
    if s.depth < 1 or not s.prefix.endswith(" = ") or e.__class__ is not str:
        return None
    if not (_ROLE_DECL.fullmatch(e) or _RANGE_DECL.fullmatch(e)) or e.split("[")[0] not in families:
        return None
    return s.prefix[:-3]


class _Binder:
    def __init__(self, pattern, names):
        self.pattern, self.names, self.bound = pattern, names, set()

    def atom(self, a, bare):
        """`a` with each named register written as its name (bound at its first reference)."""
        if a[:1] in "\"'":
            return a
        whole = bare and self.pattern.fullmatch(a) is not None
        return self.pattern.sub(lambda m: self._name(m.group(0), whole), a)

    def _name(self, reg, whole):
        n = self.names.get(reg)
        if n is None:
            return reg
        if n.__class__ is tuple:  # an element of a named range: `acc[3]`
            return f"{n[0]}[{n[1]}]"
        if reg in self.bound:
            return n
        self.bound.add(reg)
        return f"{n} := {reg}" if whole else f"({n} := {reg})"

    def expr(self, e, bare=False):
        c = e.__class__
        if c is str:
            return self.atom(e, bare)
        if c is Call:
            new = [self.expr(i, bare=True) for i in e.items]
            return Call(e.head, new) if any(a is not b for a, b in zip(new, e.items)) else e
        if c is Kw:
            v = self.expr(e.value)
            return e if v is e.value else Kw(e.name, v)
        if c is Display:
            new = [self.expr(i, bare=e.open != "{") for i in e.items]
            return Display(e.open, e.close, new) if any(a is not b for a, b in zip(new, e.items)) else e
        return e


def _apply(fn, analysed, used):
    families = _families(fn)
    if not families:
        return fn
    analysed, optional = analysed
    harvested = _harvest(fn, families)
    names = {reg: _fresh(n, used) for reg, n in analysed.items() if reg not in harvested and len(n) <= MAX_NAME}
    names.update(harvested)
    optional = set(optional) - set(harvested)   # another pass's name (`phase = r[122]`) stays
    pattern = _pattern(families)
    for _ in range(_ROUNDS):
        out, exprs, longer = _bound(fn, families, pattern, names)
        drop = {_longest(s.expr, pattern, names, optional) for s in longer} - {None}
        if not drop:
            break
        for reg in drop:   # a name that makes a statement take more lines than the number costs more than it says
            del names[reg]
    for s, e in zip(out, exprs):
        s.expr = e
    return out


# rounds of leaving out the data-flow names (sugar/flownames.py) that lengthen a statement: each
# round drops the longest in each such statement
_ROUNDS = 6


def _longest(e, pattern, names, optional):
    """The register of statement `e` whose optional name is longest (None: none there)."""
    atoms: list = []
    _atoms(e, atoms)
    regs = {m for a in atoms for m in pattern.findall(a) if m in names and m in optional}
    return max(regs, key=lambda r: (len(names[r]), r), default=None)


def _bound(fn, families, pattern, names):
    """(the statements kept, their expressions with the names written, the statements the names
    lengthen)."""
    from .ir import layout_lines

    binder = _Binder(pattern, names)
    out, exprs, longer = [], [], []
    for s in fn:
        target = _decl_target(s, families)
        e = s.expr
        if target is not None:
            if s.expr in binder.bound:  # named by its first reference already: the line is not needed
                if out and out[-1].depth == s.depth and exprs[-1].__class__ is str and exprs[-1].startswith("# "):
                    exprs[-1] = f"# {target}: {exprs[-1][2:]}"
                continue
            binder.bound.add(s.expr)
        elif s.depth > 0 and s.expr.__class__ is not str:
            e = binder.expr(s.expr)
            if e is not s.expr and layout_lines(e, s.depth, s.prefix) > layout_lines(s.expr, s.depth, s.prefix):
                longer.append(s)
        out.append(s)
        exprs.append(e)
    return out, exprs, longer


def run(stmts, ctx):
    """The names sugar/valuenames.py chose, written in every reference."""
    found = list(getattr(ctx, "register_names", None) or ())
    used = _module_identifiers(stmts) | _TAKEN
    it = iter(found)

    def one(fn):
        if not with_families(fn):
            return fn
        return _apply(fn, next(it, ({}, set())), set(used))
    return per_function(stmts, one)
