"""Lowering of IR expressions (a mixin of the compiler, see compiler.py)."""
from __future__ import annotations

from . import ir
from . import ptxtext as D
from .dtypes import lit_value
from .lowering import FLOAT, HALF, INT, CompileError, Imm, _fold, _opnd, _wrap
from .ptxtext import Reg as Name
from .tables import ACCUM, ARITH, BITWISE, CMP_F32, CMP_INT, LN2, LOG2E, SELP, SWAP_CMP, UNARY_F32, bf16_bits, f16_bits


class ExpressionLowering:
    # ------------------------------------------------------------ expressions
    def expr(self, e, path, dest=None):
        """(operand, dtype): a register or an Imm; `dest` (if given) may receive it."""
        fn = _EXPR.get(type(e))
        if fn is None:
            raise CompileError(path, f"unknown expression kind {type(e).__name__!r}", e)
        return fn(self, e, path, dest)

    def e_lit(self, e, path, dest):
        # the repr tells True from 1 and -0.0 from 0.0, which compare equal
        key = (e.dtype, e.value.__class__, repr(e.value))
        imm = _LITS.get(key)
        if imm is None:
            if e.dtype not in ir.VALUE_DTYPES:
                raise CompileError(path, f"unknown dtype {e.dtype!r}", e)
            try:
                v = lit_value(e.value, e.dtype)
            except (ValueError, TypeError, OverflowError) as exc:
                raise CompileError(path, str(exc), e) from None
            imm = _LITS[key] = Imm(e.dtype, float(v) if e.dtype in FLOAT else int(v))
        return imm, e.dtype

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
            D.op("mul.rn.f32")(t, f, LOG2E)
            r = out or self.new("f32")
            D.op("ex2.approx.ftz.f32")(r, t)
        elif op == "log":
            t = self.new("f32")
            D.op("lg2.approx.ftz.f32")(t, f)
            r = out or self.new("f32")
            D.op("mul.rn.f32")(r, t, LN2)
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
            import numpy as np

            from .dtypes import convert
            v = convert(np.asarray(x.value, {"pred": np.bool_, "s32": np.int64, "u32": np.int64}
                                   .get(src, np.float32)), src, dst)
            return Imm(dst, float(v) if dst in FLOAT else int(v)), dst
        if dst == "pred":
            r = dest or self.new("pred")
            if src in INT:
                D.op(f"setp.ne.{src}")(r, x, 0)
            else:
                D.op("setp.neu.f32")(r, self.f32(x, src), "0f00000000")
            return r, dst
        if src == "pred":
            r = dest or self.new(dst)
            if dst in INT:
                D.op("selp.b32")(r, 1, 0, x)
            elif dst == "f32":
                D.op("selp.f32")(r, "0f3F800000", "0f00000000", x)
            else:
                one = f16_bits(1.0) if dst == "f16" else bf16_bits(1.0)
                D.op("selp.b16")(r, "0x%04X" % one, "0x0000", x)
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
        D.op("mov.u32")(r, "%" + name)
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


# Lit (dtype, class, repr) -> its Imm: the rounding of a literal is a pure function of it
_LITS: dict = {}

_EXPR = {ir.Lit: ExpressionLowering.e_lit, ir.Var: ExpressionLowering.e_var, ir.Unary: ExpressionLowering.e_unary,
         ir.Binary: ExpressionLowering.e_binary, ir.Ternary: ExpressionLowering.e_ternary,
         ir.Cast: ExpressionLowering.e_cast,
         ir.Index: ExpressionLowering.e_index, ir.Dim: ExpressionLowering.e_dim,
         ir.Builtin: ExpressionLowering.e_builtin,
         ir.Call: ExpressionLowering.e_call}
