"""Kernel IR -> PTX in one walk.

    ptx_text = compile_kernel(kernel, target="sm_90a")

Every IR statement and expression becomes instruction lines, one per PTX
instruction, written by ``ptxtext`` from the opcode spellings of ``tables``
(each spelling checked once against ptx2py's PTX spelling table), in the layout
ptx2py's emitter gives the same module built through the DSL.
``compile_module`` is that text parsed into a ptxgrammar Module.  No LLVM, no
nvcc.  What cannot be lowered correctly raises ``CompileError`` naming the
IR node path, e.g. ``body[3].then[0] (Binary mod): float modulo has no PTX
instruction`` -- never wrong code.

Lowering rules (the hardware's opinions):
- kernel arguments: every buffer as a .u64 pointer (in declaration order), then
  every scalar param by dtype (see ``kernel_arguments``); each pointer is
  ``cvta.to.global.u64``-converted once in the prologue;
- registers: %p pred, %h .b16 (f16/bf16 values), %r .b32 ints, %f f32,
  %rd .b64 addresses; one register per IR variable, fresh ones for temporaries;
- f16/bf16 arithmetic is done in f32 and rounded back after every operation
  (``cvt.f32.f16`` / ``cvt.rn.f16.f32``, bf16 alike), as the IR defines;
- float constants are exact hex bit patterns; exp/log use ex2/lg2.approx.ftz
  with hex log2(e)/ln(2);
- control flow is branches around code; the only ``ret`` is the last statement,
  so every thread reaches every barrier (no early exit);
- TreeHalve is unrolled with a barrier per step, odd counts handled by
  letting only i < count-half combine; cp.async uses .cg for 16 bytes and .ca
  for 4/8, with the src-size operand zero-filling when the guard is false.
"""
from __future__ import annotations

import re

from . import ir
from . import ptxtext as D
from .lower_expr import ExpressionLowering
from .lower_stmt import StatementLowering
from .lowering import CompileError, Imm, _static
from .tables import BANK, BANK_DECL, BANK_ORDER, ITEMSIZE, MOV, PARAM, VERSIONS
from .uniformity import Uniformity

__all__ = ["CompileError", "compile_kernel", "compile_module", "kernel_arguments"]


def kernel_arguments(kernel: ir.Kernel) -> list[tuple[str, str, str]]:
    """(PTX param name, IR name, kind) in launch order: kind 'pointer' or a dtype."""
    out = [(f"{kernel.name}_param_{i}", b.name, "pointer") for i, b in enumerate(kernel.buffers)]
    n = len(out)
    out += [(f"{kernel.name}_param_{n + i}", p.name, p.dtype) for i, p in enumerate(kernel.params)]
    return out


class _Compiler(StatementLowering, ExpressionLowering):
    """One walk over a kernel: registers and the module here, statements and
    expressions in the two mixins."""

    def __init__(self, kernel: ir.Kernel, target: str):
        self.k = kernel
        self.target = target
        self.next = dict.fromkeys(BANK_ORDER, 1)
        self.names = {bank: D.registers(bank, 0) for bank in BANK_ORDER}   # %r0, %r1, ... made once
        self.vars: dict = {}       # name -> (register, dtype)
        self.overlay: dict = {}    # WarpShuffle combine's a/b
        self.params: dict = {}     # name -> (register, dtype)
        self.bufs: dict = {}       # name -> (base %rd, dtype, shape, role)
        self.shared: dict = {}     # name -> (dtype, size, xor swizzle row or 0)
        self.labels = 0
        self.uniform = Uniformity(kernel.body)     # thread-dependent variables and branches
        self.divergent: list[str] = []             # enclosing thread-dependent branches/loops
        blk = kernel.launch.block
        self.block = tuple(_static(b) for b in blk) if all(isinstance(b, int) for b in blk) else None

    # ------------------------------------------------------------ registers
    def new(self, dtype):
        bank = BANK[dtype][1]
        n = self.next[bank]
        self.next[bank] = n + 1
        names = self.names[bank]
        return names[n] if n < len(names) else D.registers(bank, n + 64)[n]

    def label(self):
        self.labels += 1
        return f"$L__BB0_{self.labels}"

    def reg(self, v, dt):
        """A register holding value v (materialising constants)."""
        if not isinstance(v, Imm):
            return v
        r = self.new(dt)
        if dt == "pred":
            t = self.new("u32")
            D.op("mov.b32")(t, int(bool(v.value)))
            D.op("setp.ne.u32")(r, t, 0)
        else:
            D.op("mov." + MOV[dt])(r, v.operand())
        return r

    def f32(self, v, dt):
        """v (of float dtype dt) as an f32 operand."""
        if dt == "f32":
            return v
        if isinstance(v, Imm):
            return v.f32()
        r = self.new("f32")
        D.op("cvt.f32." + dt)(r, v)
        return r

    def round_to(self, v, dt, dest=None):
        """An f32 operand rounded to dt (f16/bf16) in a .b16 register."""
        r = dest or self.new(dt)
        D.op(f"cvt.rn.{dt}.f32")(r, v)
        return r

    # ------------------------------------------------------------ module
    def run(self) -> str:
        """The kernel's PTX text."""
        k = self.k
        D.begin()
        try:
            D.line(".version " + VERSIONS.get(self.target, "8.0"))
            D.line(".target " + self.target)
            D.line(".address_size 64")
            for i, s in enumerate(k.shared):
                if s.dtype not in ITEMSIZE or s.size < 1:
                    raise CompileError(f"shared[{i}]", f"bad shared array {s.name!r}", s)
                D.line(f".shared .align 16 .b8 {s.name}[{s.size * ITEMSIZE[s.dtype]}];")
                self.shared[s.name] = (s.dtype, s.size, 0)
            self._swizzles(k.body, "body")
            args = kernel_arguments(k)
            params = ", ".join(f".param .{'u64' if kind == 'pointer' else PARAM[kind]} {n}" for n, _, kind in args)
            perf = " .reqntid %d, %d, %d" % self.block if self.block else ""
            D.line(f".visible .entry {k.name}({params}){perf}")
            D.line("{")
            decls = len(D._lines)
            self.prologue(args)
            self.stmts(k.body, "body")
            D.line("\tret;")
            D.line("}")
            lines = D.finish()
        except BaseException:
            D.finish()
            raise
        # register declarations: known only after the body
        lines[decls:decls] = [f"\t.reg .{BANK_DECL[bank]} {bank}<{self.next[bank]}>;"
                              for bank in BANK_ORDER if self.next[bank] > 1]
        lines.append("")
        return "\n".join(lines)

    def _swizzles(self, stmts, path):
        """Shared arrays written with an xor swizzle: every access is remapped."""
        for i, s in enumerate(stmts):
            sw = getattr(s, "swizzle", None)
            if sw is not None and sw.mode == "xor" and s.buffer in self.shared:
                dt, size, cur = self.shared[s.buffer]
                v = sw.value
                if v < 1 or v & (v - 1) or size % v or cur not in (0, v):
                    raise CompileError(f"{path}[{i}].swizzle", "xor swizzle needs a power-of-two "
                                       "row length dividing the shared array, the same everywhere", s)
                self.shared[s.buffer] = (dt, size, v)
            for attr in ("body", "then", "else_"):
                sub = getattr(s, attr, None)
                if sub:
                    self._swizzles(sub, f"{path}[{i}].{attr.rstrip('_')}")

    def prologue(self, args):
        k = self.k
        for (pname, name, kind), b in zip(args, k.buffers):
            if b.dtype not in ITEMSIZE:
                raise CompileError(f"buffers.{name}", f"unsupported buffer dtype {b.dtype}", b)
            p = self.new("u64")
            D.op("ld.param.u64")(p, f"[{pname}]")
            g = self.new("u64")
            D.op("cvta.to.global.u64")(g, p)
            self.bufs[name] = (g, b.dtype, b.shape, b.role)
        for pname, name, kind in args[len(k.buffers):]:
            r = self.new(kind)
            D.op("ld.param." + PARAM[kind])(r, f"[{pname}]")
            self.params[name] = (r, kind)
        self.shared_base = {}
        for name in self.shared:
            r = self.shared_base[name] = self.new("u32")
            D.op("mov.u32")(r, name)


def compile_module(kernel: ir.Kernel, target: str = "sm_90a"):
    """The compiled kernel as a ptxgrammar Module (its PTX text parsed)."""
    from ptx2py.ptxgrammar import parse
    return parse(compile_kernel(kernel, target), f"{target}.ptx")


_TARGET = re.compile(r"sm_(\d+)[af]?\Z")


def target_problem(target: str) -> str | None:
    """Why `target` cannot be compiled for (None when it can): the spelling, then the minimum."""
    m = _TARGET.match(target)
    if m is None:
        return f"target {target!r} is not a GPU target name: expected sm_<number>[a|f], e.g. sm_80, sm_90a"
    if int(m.group(1)) < 80:
        return f"target {target!r} is older than sm_80 (the compiler uses cp.async and bf16, which need sm_80)"
    return None


def compile_kernel(kernel: ir.Kernel, target: str = "sm_90a") -> str:
    """Compile a Kernel (or JSON path/str/dict) to PTX text."""
    if not isinstance(kernel, ir.Kernel):
        from .load import load_kernel
        kernel = load_kernel(kernel)
    problem = target_problem(target)
    if problem:
        raise CompileError("target", problem)
    return _Compiler(kernel, target).run()
