"""Source of the fifteen problem files: ``python -m kernelir.problems.build``
rewrites problems/*.json (a test checks the checked-in files match)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from ..ir import (
    Accum,
    Assign,
    Buffer,
    Cond,
    CpAsyncCommit,
    CpAsyncCopy,
    CpAsyncWait,
    Kernel,
    Launch,
    Load,
    Loop,
    Param,
    Shared,
    StridedLoop,
    Swizzle,
    Sync,
    Write,
    ZeroInit,
)
from ..load import dump_kernel
from .dsl import (
    B,
    V,
    add,
    block_reduce,
    call,
    cast,
    ceil_div,
    div,
    eq,
    f,
    gtid,
    i,
    idx,
    land,
    lt,
    maximum,
    minimum,
    mod,
    mul,
    sub,
    un,
)

HERE = Path(__file__).parent
PROBLEMS: dict = {}   # name -> (kernel, meta)


def problem(category, params, test_params, rtol, atol, description):
    def deco(fn):
        PROBLEMS[fn.__name__] = (fn(), dict(
            category=category, description=description, params=params,
            test_params=test_params, rtol=rtol, atol=atol))
        return fn
    return deco


def vec(name, dtype="f32", role="input", size="n"):
    return Buffer(name, dtype, (size,), role)


def L1(grid, block):
    return Launch((grid, 1, 1), (block, 1, 1))


N = Param("n", "s32")
BIG = 1 << 20


# ---------------------------------------------------------------- pointwise
@problem("pointwise", {"n": BIG, "alpha": 1.5}, {"n": 40000}, 1e-6, 1e-6,
         "y = x + alpha, grid-stride loop over a capped grid")
def scalar_add():
    return Kernel("scalar_add", (vec("x"), vec("y", role="output")),
                  (N, Param("alpha", "f32")),
                  L1(minimum(ceil_div(V("n"), i(256)), i(132)), 256),
                  (StridedLoop("k", gtid(), V("n"), mul(B("ntid.x"), B("nctaid.x")), (
                      Load("xv", "x", V("k")),
                      Write("y", V("k"), add(V("xv"), V("alpha"))))),))


@problem("pointwise", {"n": BIG}, {"n": 1001}, 1e-6, 1e-6,
         "z = x + y, one element per thread, tail guarded by Cond")
def vector_add():
    return Kernel("vector_add", (vec("x"), vec("y"), vec("z", role="output")), (N,),
                  L1(ceil_div(V("n"), i(256)), 256),
                  (Assign("k", "s32", gtid()),
                   Cond(lt(V("k"), V("n")), (
                       Load("xv", "x", V("k")), Load("yv", "y", V("k")),
                       Write("z", V("k"), add(V("xv"), V("yv")))), ())))


@problem("pointwise", {"n": BIG, "a": 0.75, "b": -0.25}, {"n": 777}, 2e-3, 2e-3,
         "y = a*x + b on f16 data, computed in f32 with fma")
def scale_shift():
    return Kernel("scale_shift", (vec("x", "f16"), vec("y", "f16", "output")),
                  (N, Param("a", "f32"), Param("b", "f32")),
                  L1(ceil_div(V("n"), i(128)), 128),
                  (StridedLoop("k", gtid(), V("n"), mul(B("ntid.x"), B("nctaid.x")), (
                      Load("xv", "x", V("k")),
                      Assign("yv", "f32", call("fma", cast("f32", V("xv")), V("a"), V("b"))),
                      Write("y", V("k"), cast("f16", V("yv"))))),))


@problem("pointwise", {"n": BIG}, {"n": 999}, 1e-2, 1e-2,
         "z = relu(x) * y on bf16 data, guarded loads with fallback")
def relu_mul():
    ok = lt(V("k"), V("n"))
    return Kernel("relu_mul", (vec("x", "bf16"), vec("y", "bf16"), vec("z", "bf16", "output")),
                  (N,), L1(ceil_div(V("n"), i(256)), 256),
                  (Assign("k", "s32", gtid()),
                   Load("xv", "x", V("k"), ok, f(0, "bf16")),
                   Load("yv", "y", V("k"), ok, f(0, "bf16")),
                   Write("z", V("k"), mul(maximum(V("xv"), f(0, "bf16")), V("yv")), ok)))


# ---------------------------------------------------------------- reductions
def _sum_body(threads, out_value):
    return (ZeroInit(("acc",), "f32"),
            StridedLoop("k", B("tid.x"), V("n"), B("ntid.x"), (
                Load("v", "x", V("k")), Accum("acc", "add", V("v")))),
            *block_reduce("acc", "add", "partials", threads // 32),
            Cond(eq(B("tid.x"), i(0)), (Write("out", i(0), out_value),), ()))


@problem("reduction", {"n": BIG}, {"n": 5003}, 1e-5, 1e-5,
         "out[0] = sum(x): block-stride loop, warp shuffle, tree over warps")
def array_sum():
    return Kernel("array_sum", (vec("x"), Buffer("out", "f32", (1,), "output")), (N,),
                  L1(1, 1024), _sum_body(1024, V("acc")),
                  (Shared("partials", "f32", 32),))


@problem("reduction", {"n": 1 << 24}, {"n": 70001}, 1e-5, 1e-5,
         "out[0] = sum(x) over 2^24 elements; four independent accumulators per "
         "thread so no f32 partial sum grows past 2^24 ulp trouble")
def sum_2p24():
    acc = [f"acc{j}" for j in range(4)]
    stride = mul(i(4), B("ntid.x"))
    loads = []
    for j in range(4):
        k = add(V("k"), mul(i(j), B("ntid.x")))
        loads += [Load(f"v{j}", "x", k, lt(k, V("n")), f(0)), Accum(acc[j], "add", V(f"v{j}"))]
    return Kernel("sum_2p24", (vec("x"), Buffer("out", "f32", (1,), "output")), (N,),
                  L1(1, 1024),
                  (ZeroInit(tuple(acc), "f32"),
                   StridedLoop("k", B("tid.x"), V("n"), stride, tuple(loads)),
                   Assign("acc", "f32", add(add(V("acc0"), V("acc1")), add(V("acc2"), V("acc3")))),
                   *block_reduce("acc", "add", "partials", 32),
                   Cond(eq(B("tid.x"), i(0)), (Write("out", i(0), V("acc")),), ())),
                  (Shared("partials", "f32", 32),))


@problem("reduction", {"n": BIG}, {"n": 4099}, 1e-5, 1e-6, "out[0] = mean(x)")
def mean():
    return Kernel("mean", (vec("x"), Buffer("out", "f32", (1,), "output")), (N,),
                  L1(1, 256), _sum_body(256, div(V("acc"), cast("f32", V("n")))),
                  (Shared("partials", "f32", 8),))


@problem("reduction", {"rows": 4096, "cols": 1024}, {"rows": 37, "cols": 300}, 1e-5, 1e-5,
         "out[r] = sum(x[r, :]); two rows per block: segmented TreeHalve")
def row_sum():
    row = V("row")
    return Kernel("row_sum",
                  (Buffer("x", "f32", ("rows", "cols"), "input"),
                   Buffer("out", "f32", ("rows",), "output")),
                  (Param("rows", "s32"), Param("cols", "s32")),
                  Launch((ceil_div(V("rows"), i(2)), 1, 1), (128, 2, 1)),
                  (Assign("row", "s32", add(mul(B("ctaid.x"), i(2)), B("tid.y"))),
                   ZeroInit(("acc",), "f32"),
                   Cond(lt(row, V("rows")), (   # ragged last block: idle threads still reduce
                       StridedLoop("c", B("tid.x"), V("cols"), B("ntid.x"), (
                           Load("v", "x", idx("x", row, V("c"))),
                           Accum("acc", "add", V("v")))),), ()),
                   *block_reduce("acc", "add", "partials", 8, segments=2),
                   Cond(land(eq(B("tid.x"), i(0)), lt(row, V("rows"))),
                        (Write("out", row, V("acc")),), ())),
                  (Shared("partials", "f32", 8),))


# ---------------------------------------------------------------- normalization
def _rows(dtype="f32"):
    return (Buffer("x", dtype, ("rows", "cols"), "input"),)


RC = (Param("rows", "s32"), Param("cols", "s32"))


def _row_loop(body):
    return StridedLoop("c", B("tid.x"), V("cols"), B("ntid.x"), tuple(body))


def _x(name="xv"):
    return Load(name, "x", idx("x", B("ctaid.x"), V("c")))


@problem("normalization", {"rows": 4096, "cols": 4096, "eps": 1e-6},
         {"rows": 13, "cols": 333}, 1e-5, 1e-5,
         "y = x * rsqrt(mean(x^2) + eps) * w, one row per block")
def rmsnorm():
    return Kernel("rmsnorm",
                  _rows() + (Buffer("w", "f32", ("cols",), "input"),
                             Buffer("y", "f32", ("rows", "cols"), "output")),
                  RC + (Param("eps", "f32"),),
                  L1(V("rows"), 256),
                  (ZeroInit(("ss",), "f32"),
                   _row_loop([_x(), Accum("ss", "add", mul(V("xv"), V("xv")))]),
                   *block_reduce("ss", "add", "partials", 8),
                   Assign("r", "f32", un("rsqrt", add(div(V("ss"), cast("f32", V("cols"))),
                                                       V("eps")))),
                   _row_loop([_x(), Load("wv", "w", V("c")),
                              Write("y", idx("y", B("ctaid.x"), V("c")),
                                    mul(mul(V("xv"), V("r")), V("wv")))])),
                  (Shared("partials", "f32", 8),))


@problem("normalization", {"rows": 4096, "cols": 1000}, {"rows": 17, "cols": 257},
         1e-5, 1e-6, "y = softmax(x) along rows: max pass, exp-sum pass, write pass")
def row_softmax():
    e = call("exp", sub(V("xv"), V("m")))
    return Kernel("row_softmax", _rows() + (Buffer("y", "f32", ("rows", "cols"), "output"),),
                  RC, L1(V("rows"), 128),
                  (Assign("m", "f32", f("-inf")),
                   _row_loop([_x(), Accum("m", "max", V("xv"))]),
                   *block_reduce("m", "max", "partials", 4),
                   ZeroInit(("s",), "f32"),
                   _row_loop([_x(), Accum("s", "add", e)]),
                   *block_reduce("s", "add", "partials", 4),
                   _row_loop([_x(), Write("y", idx("y", B("ctaid.x"), V("c")),
                                          div(e, V("s")))])),
                  (Shared("partials", "f32", 4),))


@problem("normalization", {"rows": 2048, "cols": 768, "eps": 1e-12},
         {"rows": 11, "cols": 129}, 2e-3, 1e-3,
         "y = x / max(||x||_2, eps) row-wise; f16 data, f32 accumulation")
def l2norm():
    xf = cast("f32", V("xv"))
    return Kernel("l2norm", _rows("f16") + (Buffer("y", "f16", ("rows", "cols"), "output"),),
                  RC + (Param("eps", "f32"),), L1(V("rows"), 64),
                  (ZeroInit(("ss",), "f32"),
                   _row_loop([_x(), Accum("ss", "add", mul(xf, xf))]),
                   *block_reduce("ss", "add", "partials", 2),
                   Assign("inv", "f32", div(f(1), call("max", un("sqrt", V("ss")), V("eps")))),
                   _row_loop([_x(), Write("y", idx("y", B("ctaid.x"), V("c")),
                                          cast("f16", mul(xf, V("inv"))))])),
                  (Shared("partials", "f32", 2),))


# ---------------------------------------------------------------- matmul
T = 16
MNK = (Param("M", "s32"), Param("N", "s32"), Param("K", "s32"))
MM_BUFS = (Buffer("A", "f32", ("M", "K"), "input"), Buffer("B", "f32", ("K", "N"), "input"),
           Buffer("C", "f32", ("M", "N"), "output"))
TILES = (Shared("As", "f32", T * T), Shared("Bs", "f32", T * T))
TX, TY = B("tid.x"), B("tid.y")
SLOT = add(mul(TY, i(T)), TX)


def _inner_product():
    return Loop("kk", i(0), i(T), i(1), (
        Load("a", "As", add(mul(TY, i(T)), V("kk"))),
        Load("b", "Bs", add(mul(V("kk"), i(T)), TX)),
        Assign("acc", "f32", call("fma", V("a"), V("b"), V("acc")))))


@problem("matmul", {"M": 512, "N": 512, "K": 512}, {"M": 70, "N": 50, "K": 40},
         1e-4, 1e-4, "C = A @ B, 16x16 shared tiles filled by cp.async (zero-fill "
         "guards), grouped (2-D swizzled) block order for L2 locality")
def matmul_512():
    G = 8
    grp = V("group_w")
    swz = [Assign("npm", "s32", ceil_div(V("M"), i(T))),
           Assign("npn", "s32", ceil_div(V("N"), i(T))),
           Assign("group_w", "s32", mul(i(G), V("npn"))),
           Assign("first_m", "s32", mul(div(B("ctaid.x"), grp), i(G))),
           Assign("gsize", "s32", minimum(sub(V("npm"), V("first_m")), i(G))),
           Assign("pid_m", "s32", add(V("first_m"), mod(mod(B("ctaid.x"), grp), V("gsize")))),
           Assign("pid_n", "s32", div(mod(B("ctaid.x"), grp), V("gsize"))),
           Assign("row", "s32", add(mul(V("pid_m"), i(T)), TY)),
           Assign("col", "s32", add(mul(V("pid_n"), i(T)), TX))]
    ka, kb = add(V("k0"), TX), add(V("k0"), TY)
    return Kernel("matmul_512", MM_BUFS, MNK,
                  Launch((mul(ceil_div(V("M"), i(T)), ceil_div(V("N"), i(T))), 1, 1), (T, T, 1)),
                  (*swz, ZeroInit(("acc",), "f32"),
                   Loop("k0", i(0), V("K"), i(T), (
                       CpAsyncCopy("As", SLOT, "A", idx("A", V("row"), ka), 4,
                                   land(lt(V("row"), V("M")), lt(ka, V("K")))),
                       CpAsyncCopy("Bs", SLOT, "B", idx("B", kb, V("col")), 4,
                                   land(lt(kb, V("K")), lt(V("col"), V("N")))),
                       CpAsyncCommit(), CpAsyncWait(0), Sync(),
                       _inner_product(),
                       Sync())),
                   Write("C", idx("C", V("row"), V("col")), V("acc"),
                         land(lt(V("row"), V("M")), lt(V("col"), V("N"))), Swizzle("block2d", G))),
                  TILES)


@problem("matmul", {"M": 300, "N": 200, "K": 150}, {"M": 61, "N": 45, "K": 37},
         1e-4, 1e-4, "C = A @ B on a ragged shape: guarded loads into xor-swizzled "
         "shared tiles; every thread reaches every Sync")
def matmul_rect():
    row, col = add(mul(B("ctaid.y"), i(T)), TY), add(mul(B("ctaid.x"), i(T)), TX)
    ka, kb = add(V("k0"), TX), add(V("k0"), TY)
    xor = Swizzle("xor", T)
    return Kernel("matmul_rect", MM_BUFS, MNK,
                  Launch((ceil_div(V("N"), i(T)), ceil_div(V("M"), i(T)), 1), (T, T, 1)),
                  (Assign("row", "s32", row), Assign("col", "s32", col),
                   ZeroInit(("acc",), "f32"),
                   Loop("k0", i(0), V("K"), i(T), (
                       Load("av", "A", idx("A", V("row"), ka),
                            land(lt(V("row"), V("M")), lt(ka, V("K"))), f(0)),
                       Write("As", SLOT, V("av"), swizzle=xor),
                       Load("bv", "B", idx("B", kb, V("col")),
                            land(lt(kb, V("K")), lt(V("col"), V("N"))), f(0)),
                       Write("Bs", SLOT, V("bv"), swizzle=xor),
                       Sync(),
                       _inner_product(),
                       Sync())),
                   Cond(land(lt(V("row"), V("M")), lt(V("col"), V("N"))),
                        (Write("C", idx("C", V("row"), V("col")), V("acc")),), ())),
                  TILES)


# ---------------------------------------------------------------- attention
def _attention(name, d):
    S_MAX, W = 256, 4   # scores row held in shared; 128 threads = 4 warps
    row = B("ctaid.x")
    keys = lambda body: StridedLoop("j", B("tid.x"), V("S"), B("ntid.x"), tuple(body))  # noqa: E731
    return Kernel(name,
                  tuple(Buffer(n, "f32", ("S", d), "output" if n == "O" else "input")
                        for n in ("Q", "K", "V", "O")),
                  (Param("S", "s32"),), L1(V("S"), 128),
                  (StridedLoop("c", B("tid.x"), i(d), B("ntid.x"), (   # stage q row
                      Load("qv", "Q", idx("Q", row, V("c"))), Write("qs", V("c"), V("qv")))),
                   Sync(),
                   Assign("m", "f32", f("-inf")),
                   keys([ZeroInit(("dot",), "f32"),
                         Loop("c", i(0), i(d), i(1), (
                             Load("qc", "qs", V("c")), Load("kc", "K", idx("K", V("j"), V("c"))),
                             Assign("dot", "f32", call("fma", V("qc"), V("kc"), V("dot"))))),
                         Assign("sv", "f32", mul(V("dot"), f(1 / math.sqrt(d)))),
                         Write("sc", V("j"), V("sv")), Accum("m", "max", V("sv"))]),
                   *block_reduce("m", "max", "partials", W),
                   ZeroInit(("l",), "f32"),
                   keys([Load("sv", "sc", V("j")),
                         Assign("p", "f32", call("exp", sub(V("sv"), V("m")))),
                         Write("sc", V("j"), V("p")), Accum("l", "add", V("p"))]),
                   *block_reduce("l", "add", "partials", W),   # its barriers publish sc
                   StridedLoop("c", B("tid.x"), i(d), B("ntid.x"), (
                       ZeroInit(("o",), "f32"),
                       Loop("j", i(0), V("S"), i(1), (
                           Load("p", "sc", V("j")), Load("vv", "V", idx("V", V("j"), V("c"))),
                           Assign("o", "f32", call("fma", V("p"), V("vv"), V("o"))))),
                       Write("O", idx("O", row, V("c")), div(V("o"), V("l")))))),
                  (Shared("qs", "f32", d), Shared("sc", "f32", S_MAX),
                   Shared("partials", "f32", W)))


@problem("attention", {"S": 128}, {"S": 100}, 1e-4, 1e-5,
         "O = softmax(Q K^T / sqrt(64)) V, single head, one query row per block")
def attention_d64():
    return _attention("attention_d64", 64)


@problem("attention", {"S": 256}, {"S": 77}, 1e-4, 1e-5,
         "O = softmax(Q K^T / sqrt(128)) V, single head, one query row per block")
def attention_d128():
    return _attention("attention_d128", 128)


def problem_json(name) -> dict:
    kernel, meta = PROBLEMS[name]
    return {"kernel": dump_kernel(kernel), "problem": meta}


def write_all() -> None:
    for name in PROBLEMS:
        (HERE / f"{name}.json").write_text(json.dumps(problem_json(name), indent=1) + "\n")


if __name__ == "__main__":
    write_all()
