"""Tiny constructors that keep the problem kernels in build.py readable."""
from __future__ import annotations

from ..ir import Binary, Builtin, Call, Cast, Cond, Index, Lit, Sync, TreeHalve, Unary, Var, WarpShuffle, Write


def i(v):
    return Lit(int(v), "s32")


def f(v, dtype="f32"):
    return Lit(v if isinstance(v, str) else float(v), dtype)


V, B = Var, Builtin


def _bin(op):
    return lambda a, b: Binary(op, a, b)


add, sub, mul, div, mod = _bin("add"), _bin("sub"), _bin("mul"), _bin("div"), _bin("mod")
lt, le, gt, ge, eq = _bin("lt"), _bin("le"), _bin("gt"), _bin("ge"), _bin("eq")
land, minimum, maximum = _bin("and"), _bin("min"), _bin("max")


def call(fn, *args):
    return Call(fn, tuple(args))


def un(op, a):
    return Unary(op, a)


def cast(dtype, a):
    return Cast(dtype, a)


def idx(buf, *ix):
    return Index(buf, tuple(ix))


def ceil_div(a, b):
    return div(add(a, sub(b, i(1))), b)


def gtid():
    """Global thread index along x."""
    return add(mul(B("ctaid.x"), B("ntid.x")), B("tid.x"))


COMBINE = {"add": add(V("a"), V("b")), "max": call("max", V("a"), V("b")),
           "min": call("min", V("a"), V("b")), "mul": mul(V("a"), V("b"))}


def block_reduce(var, op, partials, warps, segments=1):
    """Warp butterfly, one partial per warp into shared, then a tree over warps.
    Every thread must execute this (it contains barriers)."""
    return [WarpShuffle(var, COMBINE[op], 32),
            Cond(eq(B("laneid"), i(0)), (Write(partials, B("warpid"), V(var)),), ()),
            Sync(),
            TreeHalve(partials, var, op, warps // segments, segments)]
