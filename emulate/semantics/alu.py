"""Arithmetic, logic, comparison and conversion: the engine decodes operands (their widths per
the PTX ISA operand rules below) and calls emulate.numerics.ALU for the values."""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import PredPair

from ..errors import NotEmulated
from ..types import TYPES, type_modifiers

U32 = TYPES[".u32"]
PRED = TYPES[".pred"]


def _double(t):
    return TYPES[f"{t.name[:2]}{t.bits * 2}"]


# opcode -> (source types, destination type) from the instruction's type words and source count
def _all_same(types, n):
    t = TYPES[types[-1]]
    return [t] * n, t


def _shift(types, n):
    t = TYPES[types[-1]]
    return [t] + [U32] * (n - 1), t


def _bfi(types, n):
    t = TYPES[types[-1]]
    return [t, t] + [U32] * (n - 2), t


def _count(types, n):
    return [TYPES[types[-1]]] * n, U32


def _wide(types, n, mods):
    t = TYPES[types[-1]]
    if ".wide" in mods:
        return [t, t, _double(t)][:n], _double(t)
    return [t] * n, t


def _cvt(types, n):
    return [TYPES[types[1]]] * n, TYPES[types[0]]


def _set(types, n):
    return [TYPES[types[1]]] * n, TYPES[types[0]]


def _slct(types, n):
    return [TYPES[types[0]], TYPES[types[0]], TYPES[types[1]]], TYPES[types[0]]


def _pred_of(types, n):
    return [TYPES[types[-1]]] * n, PRED


def _selp(types, n):
    t = TYPES[types[-1]]
    return [t, t, PRED], t


def _mixed(types, n):
    """add/sub/fma.f32.{f16,bf16} (mixed precision): the narrow sources first, c in f32."""
    if len(types) == 2 and types[0] == ".f32" and types[1] in (".f16", ".bf16"):
        narrow, wide = TYPES[types[1]], TYPES[types[0]]
        return [narrow] * (n - 1) + [wide], wide
    return _all_same(types, n)


def _u32(types, n):
    return [U32] * n, TYPES[types[-1]] if types else U32


RULES = {
    "shl": _shift, "shr": _shift, "bfe": _shift, "bfi": _bfi, "szext": _shift,
    "popc": _count, "clz": _count, "bfind": _count,
    "mul": _wide, "mad": _wide,
    "cvt": _cvt, "set": _set, "slct": _slct, "testp": _pred_of, "setp": _pred_of,
    "bmsk": _u32, "selp": _selp, "add": _mixed, "sub": _mixed, "fma": _mixed,
}
WIDE_RULES = {"mul", "mad"}
CARRY_IN = {"addc", "subc", "madc"}
SETP_COMBINE = (".and", ".or", ".xor")


def _numerics():
    try:
        from ptx2py.emulate.numerics import ALU
        from ptx2py.emulate.numerics import NotEmulated as NumericsNotEmulated
    except ImportError:
        return {}, NotEmulated
    return ALU, NumericsNotEmulated


def bound(opcode, mods, types):
    from ptx2py.emulate.numerics.registry import bound as bind

    return bind(opcode, mods, types)


def _alu_handler(instr, scope):
    ALU, NumNE = _numerics()
    opcode = instr.opcode
    fn = ALU.get(opcode)
    if fn is None:
        raise NotEmulated(instr.name)
    mods = frozenset(instr.modifiers)
    types = type_modifiers(instr.modifiers)
    if not types:
        raise NotEmulated(f"{instr.name}: no operand type")
    dest, *srcs = instr.operands
    combine = None
    if opcode in ("setp", "set") and len(srcs) == 3:
        combine = next((m for m in SETP_COMBINE if m in mods), None)
        if combine is None:
            raise NotEmulated(instr.name)
        combine_src = srcs.pop()
        if opcode == "setp":            # the engine combines p and q itself (below)
            mods = mods - {combine}
    rule = RULES.get(opcode)
    if rule is None:
        src_types, dest_type = _all_same(types, len(srcs))
    elif opcode in WIDE_RULES:
        src_types, dest_type = rule(types, len(srcs), mods)
    else:
        src_types, dest_type = rule(types, len(srcs))
    dec = scope.decoder
    readers = [dec.reader(s, t) for s, t in zip(srcs, src_types)]
    if opcode == "set" and combine is not None:   # the numerics apply set's .and/.or/.xor
        readers.append(dec.reader(combine_src, PRED))
    carry_out = ".cc" in mods
    carry_in = opcode in CARRY_IN
    where = scope.machine.where_instr
    pc_of = instr
    numerics = bound(opcode, mods, types)      # the opcode's numerics handler, resolved once

    def call(w, m):
        values = [r(w, m) for r in readers]
        try:
            if carry_in:
                return numerics(*values, cc=w.cc[m])
            return numerics(*values)
        except NumNE as e:
            raise NotEmulated(str(e), where(scope.code, scope.code.instructions.index(pc_of))) from None

    if opcode == "setp":
        write = dec.pair_writer(dest, PRED)
        read_c = dec.reader(combine_src, PRED) if combine is not None else None
        op = {".and": np.logical_and, ".or": np.logical_or, ".xor": np.logical_xor}.get(combine)

        def run_setp(w, m):
            r = call(w, m)
            if isinstance(r, tuple):      # packed halves: p from the low lane, q from the high
                p, q = np.asarray(r[0], bool), np.asarray(r[1], bool)
            else:
                p = np.asarray(r, bool)
                q = ~p
            if read_c is not None:
                c = read_c(w, m)
                p, q = op(p, c), op(q, c)
            write(w, m, p, q)
        return run_setp
    if isinstance(dest, PredPair):
        raise NotEmulated(f"{instr.name} with a predicate pair result")
    write = dec.writer(dest, dest_type)
    if carry_out:
        def run_cc(w, m):
            bits, carry = call(w, m)
            write(w, m, bits)
            w.cc[m] = carry
        return run_cc
    return lambda w, m: write(w, m, call(w, m))


# every opcode the numerics table knows goes through the one dispatcher
ALU_OPCODES = (
    "add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind fns brev bfe bfi szext "
    "bmsk dp4a dp2a and or xor not cnot lop3 shf shl shr prmt setp set slct testp copysign fma rcp "
    "sqrt rsqrt sin cos lg2 ex2 tanh cvt addc subc madc frnd selp"
).split()
HANDLERS = {op: _alu_handler for op in ALU_OPCODES}
