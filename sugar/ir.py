"""Helpers over the Python-generation IR (`PyStmt`, `Call`, `Display`, `Kw`, atoms)."""

from __future__ import annotations

from ptx2py.transpile.dsl.directives import PTX
from ptx2py.transpile.format import Call, Display, Kw
from ptx2py.transpile.generator import PyStmt

_DIRECTIVES = frozenset(n for n in dir(PTX) if not n.startswith("_")) | {"data"}


def head(s) -> str | None:
    e = s.expr
    return e.head if e.__class__ is Call else None


def is_insn(s) -> bool:
    """A plain instruction call (`ptx.add.s32(...)`, `ptx.insn(...)`), not a `with`/assignment."""
    e = s.expr
    if e.__class__ is not Call or s.prefix or s.trailer:
        return False
    h = e.head
    if h.startswith("asm.") or h.startswith("nvasm."):
        h = h.split(".", 1)[1]
        h = "ptx." + (h[6:] if h.startswith("block.") else h)
    if h.startswith("at(") or h.startswith("ptx.at("):
        return True
    if not h.startswith("ptx."):
        return False
    first = h[4:].split(".", 1)[0].split("(", 1)[0]
    return first == "insn" or first not in _DIRECTIVES


# `with asm():` / `with nvasm():`, the inline-asm bracket of several statements (`.here`: the
# current `.loc` again inside it)
ASM_BRACKETS = ("asm", "nvasm", "asm.here", "nvasm.here")


def is_asm_bracket(s) -> bool:
    """`with asm(...):`, `with nvasm(...):` or `with at(...).asm(...):` (a `.loc` before it)."""
    e = s.expr
    if s.prefix != "with " or e.__class__ is not Call:
        return False
    h = e.head
    return h in ASM_BRACKETS or h.startswith("at(") and h.endswith(tuple(")." + b for b in ASM_BRACKETS))


def is_call(s, name: str, nargs: int | None = None) -> bool:
    e = s.expr
    return (e.__class__ is Call and e.head == name and not s.prefix and not s.trailer
            and (nargs is None or len(e.items) == nargs))


def kwargs(call) -> dict:
    return {i.name: i.value for i in call.items if i.__class__ is Kw}


def positional(call) -> list:
    return [i for i in call.items if i.__class__ is not Kw]


def children(e) -> list:
    """The sub-expressions of a call, a keyword argument or a display (an atom has none)."""
    c = e.__class__
    if c is Kw:
        return [e.value]
    return e.items if c is Call or c is Display else []


def inline_comment(s):
    """(text, pad) of a `ptx.comment(text, inline=pad)` statement, else None."""
    if s is None or not is_call(s, "ptx.comment", 2):
        return None
    kw = kwargs(s.expr)
    if set(kw) != {"inline"}:
        return None
    text, pad = unq(s.expr.items[0]), unq(kw["inline"])
    return None if text is None or pad is None else (text, pad)


def stmt(expr, depth, prefix="", trailer="") -> PyStmt:
    return PyStmt(expr, depth, prefix, trailer)


def unq(atom: str) -> str | None:
    """The value of a Python string literal atom written by `generator.q` (else None)."""
    if atom.__class__ is not str or len(atom) < 2 or atom[0] not in "\"'" or atom[-1] != atom[0]:
        return None
    inner = atom[1:-1]
    if "\\" not in atom and atom[0] not in inner and "\n" not in inner and "\r" not in inner:
        return inner   # no escapes, one literal: the text between the quotes
    import ast

    try:
        v = ast.literal_eval(atom)
    except (ValueError, SyntaxError):
        return None
    return v if v.__class__ is str else None


_BYTE = {str(i): i for i in range(256)}


def byte_values(items):
    """The bytes spelled by atoms that are plain decimal ints 0..255, else None."""
    out = bytearray()
    for a in items:
        v = _BYTE.get(a) if a.__class__ is str else None
        if v is None:
            return None
        out.append(v)
    return bytes(out)


def layout_lines(expr, depth, prefix="") -> int:
    """How many lines `transpile.format.layout` (black's layout) gives `prefix + expr` at `depth`."""
    from ptx2py.transpile.format import layout

    out = []
    layout(expr, "    " * depth, prefix, "", out)
    return len(out)


def per_function(stmts, rewrite) -> list:
    """`rewrite(run)` of each top-level statement with the deeper statements after it
    (a function and its body), concatenated."""
    out, k = [], 0
    while k < len(stmts):
        j = k + 1
        while j < len(stmts) and stmts[j].depth > 0:
            j += 1
        out += rewrite(stmts[k:j])
        k = j
    return out


def taken_names(stmts) -> set:
    """Every identifier the generated code binds (register families and such)."""
    out = set()
    for s in stmts:
        if s.prefix.endswith(" = "):
            for n in s.prefix[:-3].split(","):
                out.add(n.strip())
    return out


__all__ = ["Call", "Display", "Kw", "PyStmt", "head", "is_insn", "is_call", "kwargs", "positional",
           "stmt", "unq", "children", "taken_names", "per_function", "inline_comment", "byte_values", "layout_lines"]
