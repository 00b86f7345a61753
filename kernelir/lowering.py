"""Pieces shared by the lowering modules: the error type, compile-time
constants, and integer folding."""
from __future__ import annotations

import struct

from . import ir
from .tables import bf16_bits, f16_bits, f32_hex

FLOAT = ("f32", "f16", "bf16")
HALF = ("f16", "bf16")
INT = ("s32", "u32")
ONES = "0xffffffff"   # operands are PTX text (ptxtext.py): literals spelled exactly


class CompileError(ValueError):
    """IR the compiler cannot lower correctly; ``path`` names the node."""

    def __init__(self, path: str, message: str, node=None):
        self.path, self.message = path, message
        where = path if node is None else f"{path} ({_describe(node)})"
        self.where = where
        super().__init__(f"{where}: {message}")


def _describe(node) -> str:
    kind = type(node).__name__
    for attr in ("op", "fn", "name"):
        v = getattr(node, attr, None)
        if isinstance(v, str) and attr != "name" or (attr == "name" and isinstance(node, ir.Builtin)):
            return f"{kind} {v}"
    return kind


class Imm:
    """A compile-time constant: ``value`` is an int (ints, pred) or the float
    value already rounded to ``dtype``."""

    __slots__ = ("dtype", "value")

    def __init__(self, dtype, value):
        self.dtype, self.value = dtype, value

    def f32(self):
        return _float_text("f32", float(self.value))

    def operand(self):
        dt = self.dtype
        if dt in FLOAT:
            return _float_text(dt, float(self.value))
        if dt == "pred":
            return int(bool(self.value))
        return int(self.value)


# The PTX spelling of a float constant per dtype (exact bits): a pure function of
# the value, kept by (dtype, the value's 8 bytes), which tell -0.0 from 0.0 and
# one NaN from another.
_BITS = {"f32": f32_hex, "f16": lambda v: "0x%04X" % f16_bits(v), "bf16": lambda v: "0x%04X" % bf16_bits(v)}
_FLOAT_TEXT: dict = {}
_DOUBLE = struct.Struct("<d").pack


def _float_text(dt: str, value: float) -> str:
    key = (dt, _DOUBLE(value))
    text = _FLOAT_TEXT.get(key)
    if text is None:
        text = _FLOAT_TEXT[key] = _BITS[dt](value)
    return text


def _static(v):
    return v if isinstance(v, int) else None


def _opnd(v):
    return v.operand() if isinstance(v, Imm) else v


def _wrap(v, dt):
    v &= 0xFFFFFFFF
    if dt == "s32" and v >= 1 << 31:
        v -= 1 << 32
    return v


def _fold(op, a, b, dt):
    if op == "add":
        return _wrap(a + b, dt)
    if op == "sub":
        return _wrap(a - b, dt)
    if op == "mul":
        return _wrap(a * b, dt)
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op in ("div", "mod") and b != 0:
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return _wrap(q if op == "div" else a - q * b, dt)
    return None


def _sign(e):
    """True if e is provably positive (ntid/nctaid, positive literals, their
    sums and products), else None (decided at run time)."""
    if isinstance(e, ir.Lit):
        try:
            return True if float(e.value) > 0 else None
        except (TypeError, ValueError):
            return None
    if isinstance(e, ir.Builtin) and e.name.split(".")[0] in ("ntid", "nctaid"):
        return True
    if isinstance(e, ir.Binary) and e.op in ("add", "mul", "max"):
        return True if _sign(e.a) and _sign(e.b) else None
    return None
