"""Instruction semantics: ONE table of small handlers keyed by opcode (like GPGPU-Sim's PTX layer).

A handler factory takes (instruction, scope) once, decodes the operands and returns
``run(warp, mask)`` for ordinary instructions, or ``run(warp, mask, entry)`` for the control
instructions that move the warp's SIMT stack themselves (CONTROL). Value semantics of
integer/bit/float/half/fp8/cvt/approx instructions come from ptx2py.emulate.numerics.ALU (alu.py).
An opcode or form without a handler stops the run: `file:line:col: error: not emulated: ...`.
"""

from __future__ import annotations

from ..errors import NotEmulated
from ..types import TYPES
from . import alu, atomics, control, cp_async, data, matrix, mbarrier, tcgen05, tma, warpops, wgmma, wmma

HANDLERS: dict = {}
CONTROL: set = set()
for _family in (data, control, warpops, atomics, cp_async, matrix, wmma, alu, mbarrier, tma, wgmma, tcgen05):
    HANDLERS.update(_family.HANDLERS)
    CONTROL |= set(getattr(_family, "CONTROL", ()))


class Op:
    __slots__ = ("guard", "control", "run", "instr")

    def __init__(self, instr, run, guard, control):
        self.instr = instr
        self.run = run
        self.guard = guard
        self.control = control


def decode(instr, scope) -> Op:
    factory = HANDLERS.get(instr.opcode)
    if factory is None:
        raise NotEmulated(instr.name)
    run = factory(instr, scope)
    guard = None
    if instr.guard is not None:
        from ptx2py.ptxgrammar.tree import Register

        g = scope.decoder.reader(Register(instr.guard.predicate), TYPES[".pred"])
        guard = (lambda w, m: ~g(w, m)) if instr.guard.negated else g
    return Op(instr, run, guard, instr.opcode in CONTROL)
