"""Typed calls of `--sugar` Python: `<family>.<modifiers>(<operands as keywords>)`.
A family name stands for its leading PTX spelling (families.py); the other
modifiers are attributes, as in `ptx.` chains; the operands are keywords named
after the PTX ISA's, in any order. Each call records exactly the instruction
the plain DSL call would (same modifiers in the same order, same operands):

    mma_sync.m16n8k16.row.col.f32.f16.f16.f32(d=r[0:4], a=r[4:8], b=(r[8], r[9]))
    == ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(r[0:4], r[4:8], (r[8], r[9]), r[0:4])

    wgmma_mma.m64n128k16.f32.f16.f16(d=r[125:189], a=rd[4], b=rd[5], scale_d=p[27])
    == ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16(r[125:189], rd[4], rd[5], p[27], 1, 1, 0, 0)

Omitted defaulted operands take their default (`c=d`, `scale_a=1`, `state=sink`)
where the form has them. `pred=`, `fmt=`, `indent=`, `lead=`, `at=` go to the
instruction, and prefixes compose: `asm.at(1, 264, 15).wgmma_mma.m64n128k16...(...)`.
`operands` is shared with the sugar pass, which checks its rewrites with it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..names import from_python, to_python
from .directives import ptx
from .errors import DSLError
from .families import FAMILIES as _TABLE
from .families import LEGACY, RENAMED
from .operands import sink


class Operand(NamedTuple):
    name: str
    kind: str  # "req", "def" (default when omitted) or "opt" (absent when omitted)
    default: str | None
    vec: bool
    conds: tuple


class Family(NamedTuple):
    name: str
    lead: tuple  # the leading PTX words: ("mma", ".sync", ".aligned")
    operands: tuple


_ITEM = re.compile(r"(\w+)(=\w+|\?)?(:v)?((?:@[^@\s]+)*)\Z")


def _operand(item: str) -> Operand:
    m = _ITEM.match(item)
    if m is None:
        raise ValueError(f"not a family table item: {item!r}")
    name, mark, vec, conds = m.groups()
    kind = "req" if not mark else "opt" if mark == "?" else "def"
    return Operand(name, kind, mark[1:] if kind == "def" else None, bool(vec), tuple(conds.split("@")[1:]))


def _family(name, lead, spec) -> Family:
    words = lead.split(".")
    return Family(name, (words[0], *["." + w for w in words[1:]]), tuple(_operand(i) for i in spec.split()))


FAMILIES = {n: _family(n, lead, spec) for n, (lead, spec) in _TABLE.items()}
LEADS = {f.lead: n for n, f in FAMILIES.items()}


def _holds(cond: str, mods: tuple, vec) -> bool:
    neg = cond[0] == "!"
    c = cond[neg:]
    if c[0] == ".":
        r = c in mods
    elif c[0] == "~":
        if vec is None:
            return True
        r = vec(c[1:])
    else:
        k, _, alts = c.partition("=")
        i = int(k)
        r = i < len(mods) and mods[i][1:] in alts.split("|")
    return r != neg


def applicable(fam: Family, mods: tuple, vec=None) -> list:
    """The operands of this form (`vec(name)`: is that operand a vector; None: all
    operands of the modifiers' forms, whatever the vector conditions)."""
    return [o for o in fam.operands if all(_holds(c, mods, vec) for c in o.conds)]


def operands(fam: Family, mods: tuple, kw: dict, is_vec, const) -> list:
    """The PTX operands of a typed call, in order: the keywords' values, defaults
    filled in (`const(atom)` is a default's value); DSLError on a wrong keyword."""
    ops = applicable(fam, mods, lambda n: n in kw and is_vec(kw[n]))
    names = {o.name for o in ops}
    extra = [k for k in kw if k not in names]
    if extra:
        raise DSLError(f"no operand {', '.join(extra)} here (operands: {', '.join(o.name for o in ops)})")
    out = []
    for o in ops:
        if o.name in kw:
            v = kw[o.name]
            if o.vec and not is_vec(v):
                raise DSLError(f"operand {o.name} is a vector")
        elif o.kind == "def":
            v = kw[o.default] if o.default in kw else const(o.default)
        elif o.kind == "opt":
            continue
        else:
            raise DSLError(f"missing operand {o.name}")
        out.append(v)
    return out


def _const(atom: str):
    return sink if atom == "sink" else int(atom)


def _is_vec(v) -> bool:
    return v.__class__ is tuple


class Typed:
    """`mma_sync.m16n8k16.row.col`: a family, its modifiers so far and the plain chain they spell."""

    def __init__(self, fam: Family, op, mods: tuple = ()):
        self._fam, self._op, self._mods = fam, op, mods

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        mods = (*self._mods, from_python(ident))
        if not self._mods and self._fam.name == self._fam.lead[0] and mods[0] == self._fam.lead[1]:
            # a family named as its opcode (`ldmatrix`): `asm.ldmatrix.sync.aligned...` is the plain chain
            return getattr(getattr(ptx, self._fam.name), ident)
        other = LEADS.get(self._fam.lead + mods)
        if other is not None:  # the spelling of a longer family: its operands differ
            raise DSLError(f"{self}.{ident}: spell it {other}")
        child = Typed(self._fam, getattr(self._op, ident), mods)
        self.__dict__[ident] = child
        return child

    def __call__(self, *args, pred=None, fmt=None, indent=None, lead=None, at=None, **kw):
        if args:
            raise DSLError(f"{self}: operands are keywords ({', '.join(o.name for o in self._fam.operands)})")
        kw = {RENAMED.get(k, k): v for k, v in kw.items()}
        legacy = LEGACY.get(self._fam.name, ()) if not self._mods else ()
        if legacy and legacy[0] in kw:
            t = self
            for k in legacy:
                t = getattr(t, kw.pop(k))
            return t(pred=pred, fmt=fmt, indent=indent, lead=lead, at=at, **kw)
        try:
            values = operands(self._fam, self._mods, kw, _is_vec, _const)
        except DSLError as e:
            raise DSLError(f"{self}: {e.message}") from None
        return self._op(*values, pred=pred, fmt=fmt, indent=indent, lead=lead, at=at)

    def __repr__(self):
        return self._fam.name + "".join("." + to_python(m) for m in self._mods)


def _root(fam: Family) -> Typed:
    op = ptx
    for w in fam.lead:
        op = getattr(op, to_python(w))
    return Typed(fam, op)


TYPED = {n: _root(f) for n, f in FAMILIES.items()}
globals().update(TYPED)

__all__ = list(TYPED)
