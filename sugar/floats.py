"""Float literals by value where that is exact: `fimm("0f3FB8AA3B")` -> `f32(LOG2E)`,
`fimm("0f3F800000")` -> `f32(1.0)`, `fimm("0d3FE0000000000000")` -> `f64(0.5)`
(transpile/dsl/floats.py encodes them back).

A literal is decoded only when its spelling is the one `f32`/`f64` write (upper-case hex of the
full width) and the value written re-encodes to the same bits: the shortest decimal that names
that float, or a named constant (LOG2E, LN2, INF) whose nearest float it is. NaNs stay as they are
(their payload bits have no decimal spelling).
"""

from __future__ import annotations

import math
import re
import struct

from ptx2py.transpile.dsl.floats import INF, LN2, LOG2E, f32, f64

from .ir import Call, Display, Kw
from .regnames import _module_identifiers

_LITERAL = re.compile(r'fimm\("0([fd])([0-9A-F]+)"\)')
_NAMED = (("LOG2E", LOG2E), ("LN2", LN2), ("INF", INF))
# the names the decoded spelling uses: a module that binds any of them keeps its literals
NAMES = frozenset({"f32", "f64"} | {n for n, _ in _NAMED})


def _value(kind: str, digits: str):
    """The float a literal's bits hold (None: a NaN, or not the full width)."""
    if len(digits) != (8 if kind == "f" else 16):
        return None
    raw = bytes.fromhex(digits)
    v = struct.unpack(">f" if kind == "f" else ">d", raw)[0]
    return None if math.isnan(v) else v


def _shortest(kind: str, v: float) -> str:
    """The shortest decimal of `v` that reads back as the same float of that width."""
    if kind == "d":
        return repr(v)
    import numpy as np

    return np.format_float_positional(np.float32(v), unique=True, trim="0") if abs(v) < 1e16 and (
        v == 0 or abs(v) >= 1e-4) else np.format_float_scientific(np.float32(v), unique=True, trim="0")


def spelling(atom: str):
    """`f32(...)`/`f64(...)` for a `fimm("0f...")` atom where exact, else None."""
    m = _LITERAL.fullmatch(atom)
    if m is None:
        return None
    kind, digits = m.groups()
    v = _value(kind, digits)
    if v is None:
        return None
    make, head = (f32, "f32") if kind == "f" else (f64, "f64")
    want = atom[len("fimm("):-1].strip('"')
    for name, c in _NAMED:
        for sign, value in (("", c), ("-", -c)):
            if make(value).text == want:
                return f"{head}({sign}{name})"
    text = _shortest(kind, v)
    try:
        ok = make(float(text)).text == want
    except ValueError:
        return None
    return f"{head}({text.replace('e+', 'e')})" if ok else None   # `1e16`: black's spelling of `1e+16`


def _sub(e):
    c = e.__class__
    if c is str:
        return spelling(e) or e
    if c is Call:
        new = [_sub(i) for i in e.items]
        return Call(e.head, new) if any(a is not b for a, b in zip(new, e.items)) else e
    if c is Kw:
        v = _sub(e.value)
        return e if v is e.value else Kw(e.name, v)
    if c is Display:
        new = [_sub(i) for i in e.items]
        return Display(e.open, e.close, new) if any(a is not b for a, b in zip(new, e.items)) else e
    return e


def run(stmts, ctx):
    """Pass: the float literals spelled by value (the kernels' and the module's tables)."""
    if _module_identifiers(stmts) & NAMES:
        return stmts
    for s in stmts:
        if s.expr.__class__ is not str:
            s.expr = _sub(s.expr)
    return stmts
