"""The compiler's PTX writer: instructions as text lines, straight from the
opcode spellings of the tables (tables.py), in the layout ptx2py's emitter
gives a module built through the DSL (``transpile.dsl``): a tab before each
body statement, labels at column 0, ``op a, b, c;``, ``@%p1``/``@!%p1`` guards,
``[base + off]`` addresses.  A compile makes one line per instruction (no
operand nodes, no trivia prediction), so it costs a fraction of recording the
same module through the DSL; the PTX is the same bytes, which the tests check
by parsing it back (``emit(parse(text)) == text``) and linting it.

Each opcode spelling is checked once against ptx2py's PTX spelling table,
through the DSL's own attribute chain (``ptx.cvt.rn.f32.s32``), so a spelling
the table does not know is refused exactly as a DSL program would be.

Operands are strings: ``Reg`` for registers, special registers and symbols
(what the lowering may use as a register), plain ``str`` for literals spelled
exactly, ``int`` for integers.
"""
from __future__ import annotations

from ptx2py.transpile.dsl import ptx
from ptx2py.transpile.names import to_python


class Reg(str):
    """A register, special register or symbol operand; ``~p`` is the negated guard."""

    __slots__ = ()

    def __invert__(self):
        return "!" + self


_lines: list = []   # the open compile's lines (one compile at a time, as the DSL recorder)
_stack: list = []   # the lines of enclosing compiles (a compile inside a compile)
_OPS: dict = {}


def begin() -> list:
    global _lines
    _stack.append(_lines)
    _lines = []
    return _lines


def finish() -> list:
    global _lines
    out, _lines = _lines, _stack.pop()
    return out


def label(name: str) -> None:
    _lines.append(name + ":")


def line(text: str) -> None:
    """A whole line (directive or declaration), as written."""
    _lines.append(text)


def _checked(spec: str) -> None:
    """Refuse a spelling the PTX spelling table does not know (the DSL's DSLError)."""
    parts = spec.split(".")
    o = getattr(ptx, parts[0])
    for p in parts[1:]:
        o = getattr(o, to_python("." + p))


def op(spec: str):
    """``op("ld.global.nc.f32")(dest, addr, pred=p)`` writes ``\\t@p ld.global.nc.f32 dest, addr;``."""
    f = _OPS.get(spec)
    if f is None:
        _checked(spec)
        f = _OPS[spec] = _writer(spec)
    return f


def _writer(spec: str):
    head = "\t" + spec

    def write(*operands, pred=None):
        text = head + _OPERANDS[len(operands)] % operands
        if pred is not None:
            text = "\t@" + pred + " " + text[1:]
        _lines.append(text)
    return write


# the operand list and `;` by operand count (%s: a register or literal as it is, an int in decimal)
_OPERANDS = [";"] + [" " + ", ".join(["%s"] * n) + ";" for n in range(1, 9)]


def registers(prefix: str, count: int) -> list:
    """``[Reg(prefix + "0"), ..., Reg(prefix + str(count - 1))]``, made once per prefix
    and extended as needed (the names are immutable, so compiles share them)."""
    names = _REGS.setdefault(prefix, [])
    names.extend([Reg(f"{prefix}{n}") for n in range(len(names), count)])
    return names


_REGS: dict = {}
