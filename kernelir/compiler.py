"""Kernel IR -> PTX in one walk, through the ptx2py DSL (transpile.dsl).

    ptx_text = compile_kernel(kernel, target="sm_90a")

Every IR statement and expression becomes DSL calls (one call per PTX
instruction); ``ptxgrammar.emit`` turns the recorded module into text.  No LLVM,
no nvcc.  What cannot be lowered correctly raises ``CompileError`` naming the
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

from ptxgrammar import emit
from transpile.dsl import fimm, imm, param, reg, regn, sreg, sym, var
from transpile.dsl import ptx as _ptx
from transpile.dsl.operands import Name

from . import ir
from . import ptxdsl as D
from .dtypes import lit_value
from .tables import (ACCUM, ARITH, BANK, BANK_DECL, BANK_ORDER, BITWISE, CMP_F32, CMP_INT,
                     ITEMSIZE, LN2, LOG2E, MEM, MOV, PARAM, SELP, SWAP_CMP, UNARY_F32,
                     VERSIONS, bf16_bits, f16_bits, f32_hex)

__all__ = ["CompileError", "compile_kernel", "compile_module", "kernel_arguments"]

FLOAT = ("f32", "f16", "bf16")
HALF = ("f16", "bf16")
INT = ("s32", "u32")
ONES = imm("0xffffffff")


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
        return fimm(f32_hex(float(self.value)))

    def operand(self):
        dt = self.dtype
        if dt == "f32":
            return self.f32()
        if dt == "f16":
            return imm("0x%04X" % f16_bits(self.value))
        if dt == "bf16":
            return imm("0x%04X" % bf16_bits(self.value))
        if dt == "pred":
            return int(bool(self.value))
        return int(self.value)


def kernel_arguments(kernel: ir.Kernel) -> list[tuple[str, str, str]]:
    """(PTX param name, IR name, kind) in launch order: kind 'pointer' or a dtype."""
    out = [(f"{kernel.name}_param_{i}", b.name, "pointer") for i, b in enumerate(kernel.buffers)]
    n = len(out)
    out += [(f"{kernel.name}_param_{n + i}", p.name, p.dtype) for i, p in enumerate(kernel.params)]
    return out


def _static(v):
    return v if isinstance(v, int) else None


class _Compiler:
    def __init__(self, kernel: ir.Kernel, target: str):
        self.k = kernel
        self.target = target
        self.next = dict.fromkeys(BANK_ORDER, 1)
        self.vars: dict = {}       # name -> (register, dtype)
        self.overlay: dict = {}    # WarpShuffle combine's a/b
        self.params: dict = {}     # name -> (register, dtype)
        self.bufs: dict = {}       # name -> (base %rd, dtype, shape, role)
        self.shared: dict = {}     # name -> (dtype, size, xor swizzle row or 0)
        self.labels = 0
        blk = kernel.launch.block
        self.block = tuple(_static(b) for b in blk) if all(isinstance(b, int) for b in blk) else None

    # ------------------------------------------------------------ registers
    def new(self, dtype):
        bank = BANK[dtype][1]
        n = self.next[bank]
        self.next[bank] = n + 1
        return regn(f"{bank}{n}")

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
    def run(self):
        k = self.k
        D.begin()
        try:
            _ptx.version(VERSIONS.get(self.target, "8.0"))
            _ptx.target(self.target)
            _ptx.address_size(64)
            for i, s in enumerate(k.shared):
                if s.dtype not in ITEMSIZE or s.size < 1:
                    raise CompileError(f"shared[{i}]", f"bad shared array {s.name!r}", s)
                var.shared.align(16).b8(s.name, dims=(s.size * ITEMSIZE[s.dtype],))
                self.shared[s.name] = (s.dtype, s.size, 0)
            self._swizzles(k.body, "body")
            args = kernel_arguments(k)
            params = [param.u64(n) if kind == "pointer" else getattr(param, PARAM[kind])(n)
                      for n, _, kind in args]
            perf = {"reqntid": self.block} if self.block else {}
            with _ptx.entry(k.name, params=params, visible=True, **perf):
                self.prologue(args)
                self.stmts(k.body, "body")
                _ptx.ret()
                start = D.mark()
                for bank in BANK_ORDER:
                    if self.next[bank] > 1:
                        getattr(reg, BANK_DECL[bank])(bank, self.next[bank])
                D.hoist(start)
            return D.finish()
        except BaseException:
            D.abort()
            raise

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
            D.op("ld.param.u64")(p, [sym(pname)])
            g = self.new("u64")
            D.op("cvta.to.global.u64")(g, p)
            self.bufs[name] = (g, b.dtype, b.shape, b.role)
        for pname, name, kind in args[len(k.buffers):]:
            r = self.new(kind)
            D.op("ld.param." + PARAM[kind])(r, [sym(pname)])
            self.params[name] = (r, kind)
        self.shared_base = {}
        for name in self.shared:
            r = self.shared_base[name] = self.new("u32")
            D.op("mov.u32")(r, sym(name))

    # ------------------------------------------------------------ statements
    def stmts(self, stmts, path):
        for i, s in enumerate(stmts):
            fn = _STMT.get(type(s))
            p = f"{path}[{i}]"
            if fn is None:
                raise CompileError(p, f"unknown statement kind {type(s).__name__!r}", s)
            fn(self, s, p)

    def define(self, name, dtype, path, node):
        """The register of local variable `name` (created on first definition)."""
        if name in self.params:
            raise CompileError(path, f"cannot assign to param {name!r}", node)
        slot = self.vars.get(name)
        if slot is None:
            slot = self.vars[name] = (self.new(dtype), dtype)
        elif slot[1] != dtype:
            raise CompileError(path, f"variable {name!r} is {slot[1]}, cannot assign a {dtype}", node)
        return slot[0]

    def move(self, dest, v, dt):
        if v is dest:
            return
        if isinstance(v, Imm):
            if dt == "pred":
                v = self.reg(v, dt)
            else:
                D.op("mov." + MOV[dt])(dest, v.operand())
                return
        D.op("mov." + MOV[dt])(dest, v)

    def s_assign(self, s, path):
        if s.dtype not in ir.VALUE_DTYPES:
            raise CompileError(path, f"unknown dtype {s.dtype!r}", s)
        known = s.var in self.vars or s.var in self.params
        dest = self.define(s.var, s.dtype, path, s) if known else self.new(s.dtype)
        v, dt = self.expr(s.value, path + ".value", dest)
        if dt != s.dtype:
            raise CompileError(path, f"value is {dt}, declared {s.dtype}; insert a Cast", s)
        if not known:
            self.vars[s.var] = (dest, dt)
        self.move(dest, v, dt)

    def s_accum(self, s, path):
        slot = self.vars.get(s.var)
        if slot is None:
            raise CompileError(path, f"variable {s.var!r} is not defined", s)
        dest, dt = slot
        v, vdt = self.expr(s.value, path + ".value")
        if vdt != dt or dt == "pred":
            raise CompileError(path, f"cannot {s.op}-accumulate a {vdt} into {s.var!r} ({dt})", s)
        self.combine(s.op, dest, v, dt, dest)

    def combine(self, op, a, b, dt, dest=None):
        """a <op> b through the accumulation table (f16/bf16 via f32)."""
        if dt in HALF:
            fa, fb = self.f32(a, dt), self.f32(b, dt)
            if not isinstance(fa, Name):
                fa, fb = fb, fa
                fa = self._as_reg(fa, "f32")
            r = self.new("f32")
            D.op(ACCUM[op]["f32"][0])(r, fa, fb)
            return self.round_to(r, dt, dest)
        if isinstance(a, Imm):
            a, b = b, a          # all four are commutative
            if isinstance(a, Imm):
                a = self.reg(a, dt)
        r = dest or self.new(dt)
        D.op(ACCUM[op][dt][0])(r, a, b.operand() if isinstance(b, Imm) else b)
        return r

    def mem(self, name, path, node, writing=False):
        """(dtype, shared?) of a buffer or shared array."""
        if name in self.shared:
            return self.shared[name][0], True
        if name not in self.bufs:
            raise CompileError(path, f"unknown buffer {name!r}", node)
        if writing and self.bufs[name][3] == "input":
            raise CompileError(path, f"write to input buffer {name!r}", node)
        return self.bufs[name][1], False

    def address(self, name, shared, idx):
        """The address operand ([...]) of element idx (an s32 operand)."""
        if shared:
            dt, _, row = self.shared[name]
            size = ITEMSIZE[dt]
            if row:
                idx = self.reg(idx, "s32")
                t = self.new("s32")
                D.op("shr.u32")(t, idx, row.bit_length() - 1)
                D.op("and.b32")(t, t, row - 1)
                u = self.new("s32")
                D.op("xor.b32")(u, idx, t)
                idx = u
            if isinstance(idx, Imm):
                off = idx.value * size
                return [sym(name) + off] if off else [sym(name)]
            base = self.shared_base[name]
            a = self.new("u32")
            D.op("mad.lo.s32")(a, idx, size, base)
            return [a]
        base, dt = self.bufs[name][0], self.bufs[name][1]
        size = ITEMSIZE[dt]
        if isinstance(idx, Imm):
            off = idx.value * size
            return [base + off] if off else [base]
        w = self.new("u64")
        D.op("mul.wide.s32")(w, idx, size)
        a = self.new("u64")
        D.op("add.s64")(a, base, w)
        return [a]

    def index(self, e, path):
        v, dt = self.expr(e, path)
        if dt not in INT:
            raise CompileError(path, f"index must be s32/u32, got {dt}", e)
        return v

    def guard(self, g, path):
        if g is None:
            return None
        v, dt = self.expr(g, path)
        if dt != "pred":
            raise CompileError(path, f"guard must be pred, got {dt}", g)
        if isinstance(v, Imm):
            return True if v.value else False
        return v

    def s_load(self, s, path):
        dt, shared = self.mem(s.buffer, path, s)
        idx = self.index(s.index, path + ".index")
        g = self.guard(s.guard, path + ".guard")
        fb = None
        if s.fallback is not None and g is not True:
            fb, fdt = self.expr(s.fallback, path + ".fallback")
            if fdt != dt:
                raise CompileError(path + ".fallback", f"fallback is {fdt}, buffer is {dt}", s.fallback)
        dest = self.define(s.dest, dt, path, s)
        if g is False:
            if fb is not None:
                self.move(dest, fb, dt)
            return
        addr = self.address(s.buffer, shared, idx)
        if shared:
            space = "shared"
        else:
            space = "global.nc" if self.bufs[s.buffer][3] == "input" else "global"
        pred = None if g is True else g
        if fb is not None and pred is not None and not isinstance(fb, Imm) and fb is dest:
            fb = None   # fallback is the old value: nothing to do
        D.op(f"ld.{space}.{MEM[dt]}")(dest, addr, pred=pred)
        if fb is not None and pred is not None:
            if isinstance(fb, Imm):
                D.op("mov." + MOV[dt])(dest, fb.operand(), pred=~pred)
            else:
                D.op("mov." + MOV[dt])(dest, fb, pred=~pred)

    def s_write(self, s, path):
        dt, shared = self.mem(s.buffer, path, s, writing=True)
        if s.swizzle is not None:
            sw = s.swizzle
            if sw.mode not in ir.SWIZZLE_MODES:
                raise CompileError(path + ".swizzle", f"unknown swizzle mode {sw.mode!r}", s)
            if (sw.mode == "block2d") == shared:
                raise CompileError(path + ".swizzle", f"{sw.mode} swizzle on the wrong memory space", s)
            # block2d: the grouped tile order is already computed by the IR's
            # own index arithmetic (pid_m/pid_n); nothing to remap here.
        idx = self.index(s.index, path + ".index")
        v, vdt = self.expr(s.value, path + ".value")
        if vdt != dt:
            raise CompileError(path + ".value", f"value is {vdt}, buffer {s.buffer!r} is {dt}; insert a Cast", s)
        g = self.guard(s.guard, path + ".guard")
        if g is False:
            return
        v = self.reg(v, dt)
        addr = self.address(s.buffer, shared, idx)
        space = "shared" if shared else "global"
        D.op(f"st.{space}.{MEM[dt]}")(addr, v, pred=None if g is True else g)

    def copy_if_var(self, v, dt):
        """Loop bounds are evaluated once: copy a variable's register."""
        if isinstance(v, Imm) or not any(v is slot[0] for slot in self.vars.values()):
            return v
        r = self.new(dt)
        D.op("mov.b32")(r, v)
        return r

    def s_loop(self, s, path):
        start, dt = self.expr(s.start, path + ".start")
        if dt not in INT:
            raise CompileError(path + ".start", f"loop start must be s32/u32, got {dt}", s.start)
        stop, sdt = self.expr(s.stop, path + ".stop")
        step, tdt = self.expr(s.step, path + ".step")
        if sdt not in INT or tdt not in INT:
            raise CompileError(path, "loop stop and step must be s32/u32", s)
        stop, step = self.copy_if_var(stop, dt), self.copy_if_var(step, dt)
        v = self.define(s.var, dt, path, s)
        self.move(v, start, dt)
        up = _sign(s.step)
        if isinstance(step, Imm):
            if step.value == 0:
                raise CompileError(path + ".step", "zero loop step", s.step)
            up = step.value > 0 if dt == "s32" else True
        if dt == "u32" and up is None:
            up = True   # an unsigned step counts up (it is added modulo 2^32)
        head, end = self.label(), self.label()
        _ptx.label(head)
        done = self.new("pred")
        t = dt
        if up is None:
            upp, lt, gt = self.new("pred"), self.new("pred"), self.new("pred")
            D.op("setp.gt.s32")(upp, self.reg(step, dt), 0)
            D.op(f"setp.ge.{t}")(lt, v, _opnd(stop))
            D.op(f"setp.le.{t}")(gt, v, _opnd(stop))
            D.op("mov.pred")(done, lt, pred=upp)
            D.op("mov.pred")(done, gt, pred=~upp)
        else:
            D.op(f"setp.{'ge' if up else 'le'}.{t}")(done, v, _opnd(stop))
        D.op("bra")(sym(end), pred=done)
        self.stmts(s.body, path + ".body")
        D.op(f"add.{t}")(v, v, _opnd(step))
        D.op("bra")(sym(head))
        _ptx.label(end)

    def s_cond(self, s, path):
        c, dt = self.expr(s.cond, path + ".cond")
        if dt != "pred":
            raise CompileError(path + ".cond", f"condition must be pred, got {dt}", s.cond)
        if isinstance(c, Imm):
            self.stmts(s.then if c.value else s.else_, path + (".then" if c.value else ".else"))
            return
        end = self.label()
        other = self.label() if s.else_ else end
        D.op("bra")(sym(other), pred=~c)
        self.stmts(s.then, path + ".then")
        if s.else_:
            D.op("bra")(sym(end))
            _ptx.label(other)
            self.stmts(s.else_, path + ".else")
        _ptx.label(end)

    def s_sync(self, s, path):
        D.op("bar.sync")(0)

    def s_shuffle(self, s, path):
        w = s.width
        if w < 1 or w > 32 or w & (w - 1):
            raise CompileError(path, f"shuffle width {w} must be a power of two <= 32", s)
        slot = self.vars.get(s.var)
        if slot is None:
            raise CompileError(path, f"variable {s.var!r} is not defined", s)
        v, dt = slot
        if dt == "pred":
            raise CompileError(path, "shuffle of a pred variable", s)
        off = w // 2
        saved = self.overlay
        try:
            while off >= 1:
                if dt in HALF:
                    wide = self.new("u32")
                    D.op("cvt.u32.u16")(wide, v)
                    got = self.new("u32")
                    D.op("shfl.sync.bfly.b32")(got, wide, off, 0x1F, ONES)
                    other = self.new(dt)
                    D.op("cvt.u16.u32")(other, got)
                else:
                    other = self.new(dt)
                    D.op("shfl.sync.bfly.b32")(other, v, off, 0x1F, ONES)
                self.overlay = {"a": (v, dt), "b": (other, dt)}
                r, rdt = self.expr(s.combine, path + ".combine", v)
                if rdt != dt:
                    raise CompileError(path + ".combine", f"combine gives {rdt}, var is {dt}", s.combine)
                self.move(v, r, dt)
                self.overlay = saved
                off //= 2
        finally:
            self.overlay = saved

    def linear_tid(self):
        """The linear thread index (tid.x + ntid.x*(tid.y + ntid.y*tid.z)) as s32."""
        x = self.new("s32")
        D.op("mov.u32")(x, sreg.tid.x)
        b = self.block
        if b is not None and b[1] == 1 and b[2] == 1:
            return x
        y = self.new("s32")
        D.op("mov.u32")(y, sreg.tid.y)
        if b is not None and b[2] == 1:
            t = self.new("s32")
            D.op("mad.lo.s32")(t, y, b[0], x)
            return t
        z = self.new("s32")
        D.op("mov.u32")(z, sreg.tid.z)
        nx, ny = self.new("s32"), self.new("s32")
        D.op("mov.u32")(nx, sreg.ntid.x)
        D.op("mov.u32")(ny, sreg.ntid.y)
        t = self.new("s32")
        D.op("mad.lo.s32")(t, z, ny, y)
        u = self.new("s32")
        D.op("mad.lo.s32")(u, t, nx, x)
        return u

    def nthreads(self):
        if self.block is not None:
            return Imm("s32", self.block[0] * self.block[1] * self.block[2])
        r = [self.new("s32") for _ in range(3)]
        for q, ax in zip(r, "xyz"):
            D.op("mov.u32")(q, getattr(sreg.ntid, ax))
        t = self.new("s32")
        D.op("mul.lo.s32")(t, r[0], r[1])
        D.op("mul.lo.s32")(t, t, r[2])
        return t

    def s_tree(self, s, path):
        if s.shared not in self.shared:
            raise CompileError(path, f"{s.shared!r} is not a shared array", s)
        dt, size, _ = self.shared[s.shared]
        n, segs = s.count, s.segments
        if s.op not in ACCUM:
            raise CompileError(path, f"unknown reduction op {s.op!r}", s)
        T = self.block and self.block[0] * self.block[1] * self.block[2]
        p2 = 1 << (n - 1).bit_length() if n >= 1 else 0
        if n < 1 or segs < 1 or n * segs > size or (T and T % segs):
            raise CompileError(path, f"count {n} x segments {segs} does not fit {s.shared!r} "
                                     f"(size {size}) / {T} threads", s)
        if T and p2 // 2 * segs > T:
            raise CompileError(path, f"{T} threads cannot run the first halving step", s)
        t = self.linear_tid()
        half = p2 // 2
        while half >= 1:
            m = min(half, n - half)
            skip = self.label()
            shift = half.bit_length() - 1
            if half == 1:
                i_, seg = Imm("s32", 0), t
            else:
                i_, seg = self.new("s32"), self.new("s32")
                D.op("and.b32")(i_, t, half - 1)
                D.op("shr.u32")(seg, t, shift)
            tests = []
            if m < half:
                tests.append((i_, m))
            if not T or segs * half < T:
                tests.append((t, segs * half))
            act = None
            for x, lim in tests:
                p = self.new("pred")
                D.op("setp.ge.u32")(p, x, lim)
                if act is not None:
                    D.op("or.pred")(p, p, act)
                act = p
            if act is not None:
                D.op("bra")(sym(skip), pred=act)
            if n == 1 or segs == 1:
                idx = i_ if segs == 1 else seg
            else:
                idx = self.new("s32")
                D.op("mad.lo.s32")(idx, seg, n, _opnd(i_))
            a = self.new(dt)
            b = self.new(dt)
            D.op(f"ld.shared.{MEM[dt]}")(a, self.address(s.shared, True, idx))
            if isinstance(idx, Imm):
                j = Imm("s32", idx.value + half)
            else:
                j = self.new("s32")
                D.op("add.s32")(j, idx, half)
            D.op(f"ld.shared.{MEM[dt]}")(b, self.address(s.shared, True, j))
            r = self.combine(s.op, a, b, dt)
            D.op(f"st.shared.{MEM[dt]}")(self.address(s.shared, True, idx), r)
            if act is not None:
                _ptx.label(skip)
            D.op("bar.sync")(0)
            half //= 2
        # every thread reads its segment's total, then a trailing barrier
        if segs == 1:
            idx = Imm("s32", 0)
        else:
            per = T // segs if T else None
            seg = self.new("s32")
            if per and per & (per - 1) == 0:
                D.op("shr.u32")(seg, t, per.bit_length() - 1)
            elif per:
                D.op("div.u32")(seg, t, per)
            else:
                nt = self.nthreads()
                q = self.new("s32")
                D.op("div.u32")(q, nt, segs)
                D.op("div.u32")(seg, t, q)
            idx = self.new("s32")
            D.op("mul.lo.s32")(idx, seg, n)
        dest = self.define(s.var, dt, path, s)
        D.op(f"ld.shared.{MEM[dt]}")(dest, self.address(s.shared, True, idx))
        D.op("bar.sync")(0)

    def s_cp_async(self, s, path):
        if s.shared not in self.shared:
            raise CompileError(path, f"cp.async destination {s.shared!r} is not a shared array", s)
        if s.src not in self.bufs:
            raise CompileError(path, f"cp.async source {s.src!r} is not a global buffer", s)
        dt = self.shared[s.shared][0]
        if self.bufs[s.src][1] != dt:
            raise CompileError(path, "cp.async copies a global buffer into a shared array of the same dtype", s)
        if s.bytes not in (4, 8, 16) or s.bytes < ITEMSIZE[dt]:
            raise CompileError(path, f"cp.async copies 4, 8 or 16 bytes, not {s.bytes}", s)
        if self.shared[s.shared][2] and s.bytes > ITEMSIZE[dt]:
            raise CompileError(path, "multi-element cp.async into an xor-swizzled array", s)
        dst = self.index(s.dst_index, path + ".dst_index")
        src = self.index(s.src_index, path + ".src_index")
        g = self.guard(s.guard, path + ".guard")
        daddr = self.address(s.shared, True, dst)
        saddr = self.address(s.src, False, src)
        kind = "cg" if s.bytes == 16 else "ca"
        cp = D.op(f"cp.async.{kind}.shared.global")
        if g is None or g is True:
            cp(daddr, saddr, s.bytes)
            return
        if g is False:
            cp(daddr, [self.bufs[s.src][0]], s.bytes, 0)
            return
        # guard false: zero-fill (src-size 0) from the buffer's base address
        sz = self.new("u32")
        D.op("selp.b32")(sz, s.bytes, 0, g)
        sa = self.new("u64")
        D.op("selp.b64")(sa, self.addr_reg(saddr), self.bufs[s.src][0], g)
        cp(daddr, [sa], s.bytes, sz)

    def addr_reg(self, addr):
        """A register holding the address in [addr] (global: base + offset)."""
        a = addr[0]
        if isinstance(a, Name):
            return a
        r = self.new("u64")
        D.op("add.s64")(r, a.left, a.right)
        return r

    def s_commit(self, s, path):
        D.op("cp.async.commit_group")()

    def s_wait(self, s, path):
        if s.pending < 0:
            raise CompileError(path, "negative pending count", s)
        D.op("cp.async.wait_group")(s.pending)

    def s_zero(self, s, path):
        if s.vars and s.dtype not in ir.VALUE_DTYPES:
            raise CompileError(path, f"unknown dtype {s.dtype!r}", s)
        for name in s.vars:
            r = self.define(name, s.dtype, path, s)
            self.move(r, Imm(s.dtype, 0 if s.dtype in INT + ("pred",) else 0.0), s.dtype)
        if s.shared is None:
            return
        if s.shared not in self.shared:
            raise CompileError(path, f"{s.shared!r} is not a shared array", s)
        dt, size, _ = self.shared[s.shared]
        zero = self.reg(Imm(dt, 0 if dt in INT else 0.0), dt)
        t = self.linear_tid()
        nt = self.nthreads()
        e = self.new("s32")
        D.op("mov.b32")(e, t)
        head, end = self.label(), self.label()
        _ptx.label(head)
        done = self.new("pred")
        D.op("setp.ge.s32")(done, e, size)
        D.op("bra")(sym(end), pred=done)
        D.op(f"st.shared.{MEM[dt]}")(self.address(s.shared, True, e), zero)
        D.op("add.s32")(e, e, _opnd(nt))
        D.op("bra")(sym(head))
        _ptx.label(end)

    # ------------------------------------------------------------ expressions
    def expr(self, e, path, dest=None):
        """(operand, dtype): a register or an Imm; `dest` (if given) may receive it."""
        fn = _EXPR.get(type(e))
        if fn is None:
            raise CompileError(path, f"unknown expression kind {type(e).__name__!r}", e)
        return fn(self, e, path, dest)

    def e_lit(self, e, path, dest):
        if e.dtype not in ir.VALUE_DTYPES:
            raise CompileError(path, f"unknown dtype {e.dtype!r}", e)
        try:
            v = lit_value(e.value, e.dtype)
        except (ValueError, TypeError, OverflowError) as exc:
            raise CompileError(path, str(exc), e) from None
        if e.dtype in FLOAT:
            return Imm(e.dtype, float(v)), e.dtype
        return Imm(e.dtype, int(v)), e.dtype

    def e_var(self, e, path, dest):
        slot = self.overlay.get(e.name) or self.vars.get(e.name) or self.params.get(e.name)
        if slot is None:
            raise CompileError(path, f"read of undefined variable {e.name!r}", e)
        return slot

    def e_unary(self, e, path, dest):
        x, dt = self.expr(e.a, path + ".a")
        return self.unary(e.op, x, dt, path, e, dest), dt

    def unary(self, op, x, dt, path, node, dest=None):
        if op == "not":
            if dt not in INT + ("pred",):
                raise CompileError(path, f"not needs pred or int, got {dt}", node)
            x = self.reg(x, dt)
            r = dest or self.new(dt)
            D.op("not.pred" if dt == "pred" else "not.b32")(r, x)
            return r
        if dt == "pred":
            raise CompileError(path, f"{op} is undefined on pred", node)
        if dt in INT:
            if op == "neg":
                r = dest or self.new(dt)
                D.op("neg.s32")(r, self.reg(x, dt))
                return r
            if op == "abs":
                if dt == "u32":
                    return x
                r = dest or self.new(dt)
                D.op("abs.s32")(r, self.reg(x, dt))
                return r
            raise CompileError(path, f"{op} needs a float operand, got {dt}", node)
        if op not in UNARY_F32 and op not in ("exp", "log"):
            raise CompileError(path, f"unknown unary op {op!r}", node)
        f = self.f32(x, dt)
        f = self._as_reg(f, "f32")
        out = None if dt in HALF else dest
        if op == "exp":
            t = self.new("f32")
            D.op("mul.rn.f32")(t, f, fimm(LOG2E))
            r = out or self.new("f32")
            D.op("ex2.approx.ftz.f32")(r, t)
        elif op == "log":
            t = self.new("f32")
            D.op("lg2.approx.ftz.f32")(t, f)
            r = out or self.new("f32")
            D.op("mul.rn.f32")(r, t, fimm(LN2))
        else:
            r = out or self.new("f32")
            D.op(UNARY_F32[op])(r, f)
        return self.round_to(r, dt, dest) if dt in HALF else r

    def e_binary(self, e, path, dest):
        a, da = self.expr(e.a, path + ".a")
        b, db = self.expr(e.b, path + ".b")
        return self.binary(e.op, a, da, b, db, path, e, dest)

    def binary(self, op, a, da, b, db, path, node, dest=None):
        if op in ("shl", "shr"):
            if da not in INT or db not in INT:
                raise CompileError(path, f"{op} needs int operands, got {da}, {db}", node)
            r = dest or self.new(da)
            spec = "shl.b32" if op == "shl" else f"shr.{da}"
            D.op(spec)(r, self.reg(a, da), _opnd(b))
            return r, da
        if da != db:
            raise CompileError(path, f"operand dtypes differ ({da} vs {db}); insert a Cast", node)
        dt = da
        if op in ir.COMPARE_OPS:
            if dt == "pred":
                raise CompileError(path, f"{op} is undefined on pred", node)
            if dt in HALF:
                a, b, dt = self.f32(a, dt), self.f32(b, dt), "f32"
            if not isinstance(a, Name):
                if not isinstance(b, Name):
                    a = self._as_reg(a, dt)
                else:
                    a, b, op = b, a, SWAP_CMP[op]
            r = dest or self.new("pred")
            cmp = CMP_F32[op] if dt == "f32" else CMP_INT[op]
            D.op(f"setp.{cmp}.{dt}")(r, a, _opnd(b))
            return r, "pred"
        if op in ("and", "or"):
            if dt != "pred":
                raise CompileError(path, f"{op} needs pred operands, got {dt} (use bitand/bitor)", node)
            op = "bitand" if op == "and" else "bitor"
        if op in BITWISE:
            if dt not in INT + ("pred",):
                raise CompileError(path, f"{op} needs int or pred operands, got {dt}", node)
            if isinstance(a, Imm) and isinstance(b, Imm) and dt == "pred":
                v = {"bitand": a.value & b.value, "bitor": a.value | b.value,
                     "xor": a.value ^ b.value}[op]
                return Imm("pred", int(bool(v))), "pred"
            if dt == "pred":
                a, b = self.reg(a, dt), self.reg(b, dt)
            elif isinstance(a, Imm):
                a, b = b, a
                a = self.reg(a, dt)
            r = dest or self.new(dt)
            D.op(f"{BITWISE[op]}.{'pred' if dt == 'pred' else 'b32'}")(r, a, _opnd(b))
            return r, dt
        if dt == "pred":
            raise CompileError(path, f"{op} is undefined on pred", node)
        if op == "mod" and dt in FLOAT:
            raise CompileError(path, "float modulo has no PTX instruction", node)
        if op not in ACCUM and op not in ARITH:
            raise CompileError(path, f"unknown binary op {op!r}", node)
        if dt in INT and isinstance(a, Imm) and isinstance(b, Imm):
            folded = _fold(op, a.value, b.value, dt)
            if folded is not None:
                return Imm(dt, folded), dt
        if op in ACCUM:
            return self.combine(op, a, b, dt, dest), dt
        if dt in HALF:
            t = self.new("f32")
            D.op(ARITH[op]["f32"])(t, self._as_reg(self.f32(a, dt), "f32"), _opnd(self.f32(b, dt)))
            return self.round_to(t, dt, dest), dt
        r = dest or self.new(dt)
        D.op(ARITH[op][dt])(r, self.reg(a, dt), _opnd(b))
        return r, dt

    def _as_reg(self, v, dt):
        """A register for v (an Imm, an f32 literal operand or a register)."""
        if isinstance(v, Imm):
            return self.reg(v, dt)
        if not isinstance(v, Name):    # an fimm literal
            r = self.new(dt)
            D.op("mov.f32")(r, v)
            return r
        return v

    def e_ternary(self, e, path, dest):
        c, cdt = self.expr(e.cond, path + ".cond")
        if cdt != "pred":
            raise CompileError(path + ".cond", f"select condition must be pred, got {cdt}", e.cond)
        a, da = self.expr(e.a, path + ".a")
        b, db = self.expr(e.b, path + ".b")
        if da != db:
            raise CompileError(path, f"select arms differ ({da} vs {db})", e)
        if isinstance(c, Imm):
            return (a if c.value else b), da
        r = dest or self.new(da)
        if da == "pred":
            a, b = self.reg(a, da), self.reg(b, da)
            D.op("mov.pred")(r, a, pred=c)
            D.op("mov.pred")(r, b, pred=~c)
            return r, da
        D.op("selp." + SELP[da])(r, _opnd(a), _opnd(b), c)
        return r, da

    def e_cast(self, e, path, dest):
        x, src = self.expr(e.a, path + ".a")
        dst = e.dtype
        if dst not in ir.VALUE_DTYPES:
            raise CompileError(path, f"unknown dtype {dst!r}", e)
        if src == dst:
            return x, dst
        if isinstance(x, Imm):
            from .dtypes import convert
            import numpy as np
            v = convert(np.asarray(x.value, {"pred": np.bool_, "s32": np.int64, "u32": np.int64}
                                   .get(src, np.float32)), src, dst)
            return Imm(dst, float(v) if dst in FLOAT else int(v)), dst
        if dst == "pred":
            r = dest or self.new("pred")
            if src in INT:
                D.op(f"setp.ne.{src}")(r, x, 0)
            else:
                D.op("setp.neu.f32")(r, self.f32(x, src), fimm("0f00000000"))
            return r, dst
        if src == "pred":
            r = dest or self.new(dst)
            if dst in INT:
                D.op("selp.b32")(r, 1, 0, x)
            elif dst == "f32":
                D.op("selp.f32")(r, fimm("0f3F800000"), fimm("0f00000000"), x)
            else:
                one = f16_bits(1.0) if dst == "f16" else bf16_bits(1.0)
                D.op("selp.b16")(r, imm("0x%04X" % one), imm("0x0000"), x)
            return r, dst
        if src in INT and dst in INT:
            return x, dst                     # same bits: s32 <-> u32 wraps
        if src in INT:                        # int -> float: signedness matters
            if dst == "f32":
                r = dest or self.new("f32")
                D.op(f"cvt.rn.f32.{src}")(r, x)
                return r, dst
            t = self.new("f32")
            D.op(f"cvt.rn.f32.{src}")(t, x)
            return self.round_to(t, dst, dest), dst
        if dst in INT:                        # float -> int: truncate, saturate, NaN -> 0
            f = self.f32(x, src)
            r = dest or self.new(dst)
            D.op(f"cvt.rzi.{dst}.f32")(r, f)
            return r, dst
        f = self.f32(x, src)                  # float -> float
        if dst == "f32":
            if dest is not None and f is not dest:
                D.op("mov.f32")(dest, f)
                return dest, dst
            return f, dst
        return self.round_to(f, dst, dest), dst

    def e_index(self, e, path, dest):
        if e.buffer in self.shared:
            shape = (self.shared[e.buffer][1],)
        elif e.buffer in self.bufs:
            shape = self.bufs[e.buffer][2]
        else:
            raise CompileError(path, f"unknown buffer {e.buffer!r}", e)
        if len(e.indices) != len(shape):
            raise CompileError(path, f"{e.buffer!r} has rank {len(shape)}, got {len(e.indices)} indices", e)
        flat = None
        for k, (ix, extent) in enumerate(zip(e.indices, shape)):
            v = self.index(ix, f"{path}.indices[{k}]")
            if flat is None:
                flat = v
                continue
            ext = self.extent(extent, path, e)
            last = k == len(shape) - 1
            if isinstance(flat, Imm) and isinstance(ext, Imm) and isinstance(v, Imm):
                flat = Imm("s32", _wrap(flat.value * ext.value + v.value, "s32"))
                continue
            if isinstance(flat, Imm):
                flat, ext = ext, flat
            r = (dest if last else None) or self.new("s32")
            if isinstance(flat, Imm):
                flat = self.reg(flat, "s32")
            D.op("mad.lo.s32")(r, flat, _opnd(ext), _opnd(v))
            flat = r
        return flat, "s32"

    def extent(self, d, path, node):
        if isinstance(d, int):
            return Imm("s32", d)
        if d not in self.params or self.params[d][1] not in INT:
            raise CompileError(path, f"size {d!r} is not an integer param", node)
        return self.params[d][0]

    def e_dim(self, e, path, dest):
        shape = (self.shared[e.buffer][1],) if e.buffer in self.shared else \
            self.bufs[e.buffer][2] if e.buffer in self.bufs else None
        if shape is None or not 0 <= e.axis < len(shape):
            raise CompileError(path, f"no axis {e.axis} in buffer {e.buffer!r}", e)
        return self.extent(shape[e.axis], path, e), "s32"

    def e_builtin(self, e, path, dest):
        name = e.name
        if name in ("laneid", "warpid"):
            t = self.linear_tid()
            r = dest or self.new("s32")
            if name == "laneid":
                D.op("and.b32")(r, t, 31)
            else:
                D.op("shr.u32")(r, t, 5)
            return r, "s32"
        if name not in ir.BUILTINS:
            raise CompileError(path, f"unknown builtin {name!r}", e)
        base, axis = name.split(".")
        if base in ("ntid",) and self.block is not None:
            return Imm("s32", self.block["xyz".index(axis)]), "s32"
        if base == "tid" and self.block is not None and self.block["xyz".index(axis)] == 1:
            return Imm("s32", 0), "s32"
        r = dest or self.new("s32")
        D.op("mov.u32")(r, getattr(getattr(sreg, base), axis))
        return r, "s32"

    def e_call(self, e, path, dest):
        arity = ir.CALL_ARITY.get(e.fn)
        if arity is None:
            raise CompileError(path, f"unknown function {e.fn!r}", e)
        if len(e.args) != arity:
            raise CompileError(path, f"{e.fn} takes {arity} arguments, got {len(e.args)}", e)
        vals = [self.expr(a, f"{path}.args[{i}]") for i, a in enumerate(e.args)]
        if e.fn in ("max", "min"):
            (a, da), (b, db) = vals
            return self.binary(e.fn, a, da, b, db, path, e, dest)
        if e.fn == "fma":
            dts = {dt for _, dt in vals}
            if len(dts) != 1 or next(iter(dts)) not in FLOAT:
                raise CompileError(path, f"fma needs three operands of one float dtype, got {sorted(dts)}", e)
            dt = vals[0][1]
            ops = [self.f32(v, dt) for v, _ in vals]
            ops[0] = self._as_reg(ops[0], "f32")
            out = None if dt in HALF else dest
            r = out or self.new("f32")
            D.op("fma.rn.f32")(r, *ops)
            return (self.round_to(r, dt, dest) if dt in HALF else r), dt
        (x, dt), = vals
        return self.unary(e.fn, x, dt, path, e, dest), dt


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


_STMT = {ir.Load: _Compiler.s_load, ir.Write: _Compiler.s_write, ir.Accum: _Compiler.s_accum,
         ir.Assign: _Compiler.s_assign, ir.StridedLoop: _Compiler.s_loop, ir.Loop: _Compiler.s_loop,
         ir.Cond: _Compiler.s_cond, ir.Sync: _Compiler.s_sync, ir.WarpShuffle: _Compiler.s_shuffle,
         ir.TreeHalve: _Compiler.s_tree, ir.CpAsyncCopy: _Compiler.s_cp_async,
         ir.CpAsyncCommit: _Compiler.s_commit, ir.CpAsyncWait: _Compiler.s_wait,
         ir.ZeroInit: _Compiler.s_zero}
_EXPR = {ir.Lit: _Compiler.e_lit, ir.Var: _Compiler.e_var, ir.Unary: _Compiler.e_unary,
         ir.Binary: _Compiler.e_binary, ir.Ternary: _Compiler.e_ternary, ir.Cast: _Compiler.e_cast,
         ir.Index: _Compiler.e_index, ir.Dim: _Compiler.e_dim, ir.Builtin: _Compiler.e_builtin,
         ir.Call: _Compiler.e_call}


def compile_module(kernel: ir.Kernel, target: str = "sm_90a"):
    """The compiled kernel as a ptxgrammar Module (before emitting)."""
    if not isinstance(kernel, ir.Kernel):
        from .load import load_kernel
        kernel = load_kernel(kernel)
    if not target.startswith("sm_") or int("".join(c for c in target[3:] if c.isdigit()) or 0) < 80:
        raise CompileError("target", f"target {target!r} is not sm_80 or newer (cp.async, bf16 need sm_80)")
    return _Compiler(kernel, target).run()


def compile_kernel(kernel: ir.Kernel, target: str = "sm_90a") -> str:
    """Compile a Kernel (or JSON path/str/dict) to PTX text."""
    return emit(compile_module(kernel, target))
