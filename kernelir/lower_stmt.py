"""Lowering of IR statements (a mixin of the compiler, see compiler.py)."""
from __future__ import annotations

from . import ir
from . import ptxtext as D
from .lowering import HALF, INT, ONES, CompileError, Imm, _opnd, _sign
from .ptxtext import Reg as Name
from .tables import ACCUM, ITEMSIZE, MEM, MOV


def _addr_text(parts) -> str:
    base, off = parts
    return f"[{base} + {off}]" if off else f"[{base}]"


class StatementLowering:
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
        """The address operand (`[...]`) of element idx (an s32 operand)."""
        return _addr_text(self.address_parts(name, shared, idx))

    def address_parts(self, name, shared, idx):
        """(base register or symbol, byte offset) of element idx."""
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
                return name, idx.value * size
            base = self.shared_base[name]
            a = self.new("u32")
            D.op("mad.lo.s32")(a, idx, size, base)
            return a, 0
        base, dt = self.bufs[name][0], self.bufs[name][1]
        size = ITEMSIZE[dt]
        if isinstance(idx, Imm):
            return base, idx.value * size
        w = self.new("u64")
        D.op("mul.wide.s32")(w, idx, size)
        a = self.new("u64")
        D.op("add.s64")(a, base, w)
        return a, 0

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
        D.label(head)
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
        D.op("bra")(end, pred=done)
        self.branch_body(s.body, path + ".body", path if self.uniform.loop_is_varying(s) else None)
        D.op(f"add.{t}")(v, v, _opnd(step))
        D.op("bra")(head)
        D.label(end)

    def s_cond(self, s, path):
        c, dt = self.expr(s.cond, path + ".cond")
        if dt != "pred":
            raise CompileError(path + ".cond", f"condition must be pred, got {dt}", s.cond)
        if isinstance(c, Imm):
            self.stmts(s.then if c.value else s.else_, path + (".then" if c.value else ".else"))
            return
        end = self.label()
        other = self.label() if s.else_ else end
        varying = path if self.uniform.is_varying(s.cond) else None
        D.op("bra")(other, pred=~c)
        self.branch_body(s.then, path + ".then", varying)
        if s.else_:
            D.op("bra")(end)
            D.label(other)
            self.branch_body(s.else_, path + ".else", varying)
        D.label(end)

    def branch_body(self, stmts, path, varying_branch):
        """Statements under a branch or loop; `varying_branch` names it when threads may
        take it differently (no barrier may be reached there)."""
        if varying_branch is not None:
            self.divergent.append(varying_branch)
        try:
            self.stmts(stmts, path)
        finally:
            if varying_branch is not None:
                self.divergent.pop()

    def no_divergent_barrier(self, s, path, what):
        if self.divergent:
            raise CompileError(path, f"{what} under the thread-dependent branch at {self.divergent[-1]}: threads "
                                     "that skip it leave bar.sync undefined (hoist it out of the branch)", s)

    def s_sync(self, s, path):
        self.no_divergent_barrier(s, path, "Sync (bar.sync)")
        D.op("bar.sync")(0)

    def s_shuffle(self, s, path):
        threads = None if self.block is None else self.block[0] * self.block[1] * self.block[2]
        if threads is not None and threads % 32:
            raise CompileError(path, f"full-mask shuffle in a block of {threads} threads: the last warp has only "
                                     f"{threads % 32} lanes, so shfl.sync with mask 0xffffffff is undefined", s)
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
        D.op("mov.u32")(x, "%tid.x")
        b = self.block
        if b is not None and b[1] == 1 and b[2] == 1:
            return x
        y = self.new("s32")
        D.op("mov.u32")(y, "%tid.y")
        if b is not None and b[2] == 1:
            t = self.new("s32")
            D.op("mad.lo.s32")(t, y, b[0], x)
            return t
        z = self.new("s32")
        D.op("mov.u32")(z, "%tid.z")
        nx, ny = self.new("s32"), self.new("s32")
        D.op("mov.u32")(nx, "%ntid.x")
        D.op("mov.u32")(ny, "%ntid.y")
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
            D.op("mov.u32")(q, "%ntid." + ax)
        t = self.new("s32")
        D.op("mul.lo.s32")(t, r[0], r[1])
        D.op("mul.lo.s32")(t, t, r[2])
        return t

    def s_tree(self, s, path):
        self.no_divergent_barrier(s, path, "TreeHalve (its barriers)")
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
                D.op("bra")(skip, pred=act)
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
                D.label(skip)
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
        sparts = self.address_parts(s.src, False, src)
        saddr = _addr_text(sparts)
        kind = "cg" if s.bytes == 16 else "ca"
        cp = D.op(f"cp.async.{kind}.shared.global")
        if g is None or g is True:
            cp(daddr, saddr, s.bytes)
            return
        if g is False:
            cp(daddr, f"[{self.bufs[s.src][0]}]", s.bytes, 0)
            return
        # guard false: zero-fill (src-size 0) from the buffer's base address
        sz = self.new("u32")
        D.op("selp.b32")(sz, s.bytes, 0, g)
        sa = self.new("u64")
        D.op("selp.b64")(sa, self.addr_reg(sparts), self.bufs[s.src][0], g)
        cp(daddr, f"[{sa}]", s.bytes, sz)

    def addr_reg(self, parts):
        """A register holding the address base + offset (of `address_parts`)."""
        base, off = parts
        if not off:
            return base
        r = self.new("u64")
        D.op("add.s64")(r, base, off)
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
        D.label(head)
        done = self.new("pred")
        D.op("setp.ge.s32")(done, e, size)
        D.op("bra")(end, pred=done)
        D.op(f"st.shared.{MEM[dt]}")(self.address(s.shared, True, e), zero)
        D.op("add.s32")(e, e, _opnd(nt))
        D.op("bra")(head)
        D.label(end)


_STMT = {ir.Load: StatementLowering.s_load, ir.Write: StatementLowering.s_write, ir.Accum: StatementLowering.s_accum,
         ir.Assign: StatementLowering.s_assign, ir.StridedLoop: StatementLowering.s_loop,
         ir.Loop: StatementLowering.s_loop,
         ir.Cond: StatementLowering.s_cond, ir.Sync: StatementLowering.s_sync,
         ir.WarpShuffle: StatementLowering.s_shuffle,
         ir.TreeHalve: StatementLowering.s_tree, ir.CpAsyncCopy: StatementLowering.s_cp_async,
         ir.CpAsyncCommit: StatementLowering.s_commit, ir.CpAsyncWait: StatementLowering.s_wait,
         ir.ZeroInit: StatementLowering.s_zero}
