"""kernelir reference interpreter: the fifteen problems against numpy, GPU
semantics (shuffles, barriers, dtypes, cp.async), and refusals of undefined IR.

Slow tests (full problem sizes) run with ``-m slow``."""
import time

import numpy as np
import pytest

from ptx2py.kernelir import PROBLEM_NAMES, REFERENCES, IRError, ir, load_kernel, load_problem, make_inputs, run_kernel
from ptx2py.kernelir.dtypes import round_bf16
from ptx2py.kernelir.problems.dsl import B, V, add, div, eq, f, i, lt, mod, mul, sub

slow = pytest.mark.slow


def _check(name, sizes):
    kernel, meta = load_problem(name)
    params = {**meta["params"], **sizes}
    inputs = make_inputs(name, params)
    out = run_kernel(kernel, inputs, params)
    ref = REFERENCES[name](inputs, params)
    assert set(out) == set(ref)
    for key, want in ref.items():
        np.testing.assert_allclose(out[key].astype(np.float64), want.astype(np.float64),
                                   rtol=meta["rtol"], atol=meta["atol"], err_msg=f"{name}.{key}")


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_problem_matches_reference(name):
    _check(name, load_problem(name)[1]["test_params"])


@pytest.mark.parametrize("name, sizes", [
    ("vector_add", {"n": 1}), ("array_sum", {"n": 1}), ("row_sum", {"rows": 1, "cols": 1}),
    ("row_softmax", {"rows": 3, "cols": 1}), ("matmul_rect", {"M": 1, "N": 17, "K": 33}),
    ("matmul_512", {"M": 17, "N": 1, "K": 16}), ("attention_d64", {"S": 1}),
    ("sum_2p24", {"n": 4097}), ("scalar_add", {"n": 300 * 132 + 7}),
])
def test_problem_edge_sizes(name, sizes):
    _check(name, sizes)


def test_sum_2p24_describes_2_to_the_24():
    assert load_problem("sum_2p24")[1]["params"]["n"] == 1 << 24


def test_required_features_are_used():
    kinds = set()

    def walk(stmts):
        for s in stmts:
            kinds.add(type(s).__name__)
            for sub_ in ("body", "then", "else_"):
                walk(getattr(s, sub_, ()))
    for name in PROBLEM_NAMES:
        walk(load_problem(name)[0].body)
    assert {"CpAsyncCopy", "CpAsyncWait", "ZeroInit", "WarpShuffle", "TreeHalve",
            "Sync", "StridedLoop", "Loop", "Cond"} <= kinds


@slow
@pytest.mark.parametrize("name", ["sum_2p24", "matmul_rect", "matmul_512", "attention_d128",
                                  "row_softmax"])
def test_problem_full_size(name):
    sizes = {"row_softmax": {"rows": 256}}.get(name, {})
    _check(name, sizes)


# ---------------------------------------------------------------- small kernels
def mk(body, block=64, grid=1, out_dtype="s32", out_size=None, shared=(), buffers=()):
    bufs = (ir.Buffer("out", out_dtype, (out_size or block * grid,), "output"),) + tuple(buffers)
    return ir.Kernel("t", bufs, (), ir.Launch((grid, 1, 1), (block, 1, 1)),
                     tuple(body), tuple(shared))


TID = B("tid.x")


def run1(body, **kw):
    return run_kernel(mk(body, **kw), {}, {})["out"]


def test_warp_shuffle_is_a_butterfly():
    # combine = b takes the partner's value at each step: lane l ends with l^16^8^4^2^1.
    out = run1([ir.Assign("v", "s32", TID), ir.WarpShuffle("v", V("b"), 32),
                ir.Write("out", TID, V("v"))])
    assert (out == (np.arange(64) ^ 31)).all()
    out = run1([ir.Assign("v", "s32", TID), ir.WarpShuffle("v", V("b"), 8),
                ir.Write("out", TID, V("v"))])
    assert (out == (np.arange(64) ^ 7)).all()
    out = run1([ir.Assign("v", "s32", TID), ir.WarpShuffle("v", add(V("a"), V("b"))),
                ir.Write("out", TID, V("v"))])
    assert (out[:32] == sum(range(32))).all() and (out[32:] == sum(range(32, 64))).all()


def test_segmented_tree_halve_with_ragged_count():
    # 3 segments of 2 warps... count 2 per segment; plus a non-power-of-two count.
    body = [ir.Write("sh", TID, TID), ir.Sync(),
            ir.TreeHalve("sh", "r", "add", 32, 3), ir.Write("out", TID, V("r"))]
    out = run1(body, block=96, shared=[ir.Shared("sh", "s32", 96)])
    want = np.repeat([sum(range(s * 32, s * 32 + 32)) for s in range(3)], 32)
    assert (out == want).all()
    body = [ir.Write("sh", TID, TID), ir.Sync(),
            ir.TreeHalve("sh", "r", "max", 5), ir.Write("out", TID, V("r"))]
    assert (run1(body, block=32, shared=[ir.Shared("sh", "s32", 32)]) == 4).all()


def test_integer_semantics_wrap_and_truncate():
    big = ir.Lit(2**31 - 1, "s32")
    vals = [add(big, i(1)), div(i(-7), i(2)), mod(i(-7), i(2)),
            ir.Binary("shr", i(-8), i(1)), ir.Binary("shl", i(1), i(40)),
            ir.Cast("s32", f(-2.7)), ir.Cast("s32", f(1e20))]
    body = [ir.Write("out", i(k), v) for k, v in enumerate(vals)]
    out = run1([ir.Cond(eq(TID, i(0)), tuple(body), ())], block=32, out_size=len(vals))
    assert out.tolist() == [-2**31, -3, -1, -4, 0, -2, 2**31 - 1]
    u = run1([ir.Cond(eq(TID, i(0)), (ir.Write("out", i(0), sub(ir.Lit(0, "u32"),
                                                                 ir.Lit(1, "u32"))),), ())],
             block=32, out_size=1, out_dtype="u32")
    assert u[0] == 2**32 - 1


def test_float_storage_rounding():
    assert round_bf16(np.float32(1 + 2**-8)) == 1.0            # tie -> even
    assert round_bf16(np.float32(1 + 3 * 2**-8)) == 1 + 2**-6  # tie -> even (up)
    body = [ir.Cond(eq(TID, i(0)), (ir.Write("out", i(0), ir.Cast("bf16", f(1 / 3))),), ())]
    assert run1(body, block=32, out_size=1, out_dtype="bf16")[0] == round_bf16(np.float32(1 / 3))
    body = [ir.Cond(eq(TID, i(0)), (ir.Write("out", i(0), add(ir.Lit(2048, "f16"),
                                                               ir.Lit(1, "f16"))),), ())]
    assert run1(body, block=32, out_size=1, out_dtype="f16")[0] == 2048   # f16 spacing is 2


def test_cp_async_lands_only_after_wait():
    src = ir.Buffer("src", "f32", (64,), "input")
    body = [ir.CpAsyncCopy("sh", mul(TID, i(4)), "src", mul(TID, i(4)), 16,
                           lt(TID, i(15))),   # thread 15 zero-fills
            ir.CpAsyncCommit(), ir.CpAsyncWait(0), ir.Sync(),
            ir.Load("v", "sh", TID), ir.Write("out", TID, V("v"))]
    k = mk(body, block=16, out_dtype="f32", shared=[ir.Shared("sh", "f32", 64)],
           buffers=[src], out_size=16)
    x = np.arange(64, dtype=np.float32) + 1
    out = run_kernel(k, {"src": x}, {})["out"]
    assert (out == x[:16]).all()
    k2 = mk(body[:2] + body[3:], block=16, out_dtype="f32", buffers=[src], out_size=16,
            shared=[ir.Shared("sh", "f32", 64)])   # no wait: shared still unwritten
    with pytest.raises(IRError, match=r"body\[3\]: read of never-written sh"):
        run_kernel(k2, {"src": x}, {})


# ---------------------------------------------------------------- refusals
def test_refuses_divergent_sync():
    body = [ir.Cond(lt(TID, i(16)), (ir.Sync(),), ()), ir.Write("out", TID, TID)]
    with pytest.raises(IRError, match=r"^body\[0\]\.then\[0\]: divergent barrier: Sync "
                                      r"reached by 16 of 64 threads of block 0"):
        run1(body)


def test_refuses_barrier_inside_divergent_loop():
    body = [ir.StridedLoop("k", TID, i(100), B("ntid.x"), (ir.Sync(),)),
            ir.Write("out", TID, TID)]
    with pytest.raises(IRError, match=r"^body\[0\]\.body\[0\]: divergent barrier"):
        run1(body)


def test_refuses_float_modulo():
    body = [ir.Assign("x", "f32", mod(f(5), f(2)))]
    with pytest.raises(IRError, match=r"^body\[0\]\.value: float modulo"):
        run1(body)


def test_refuses_unknown_statement_kind():
    data = {"kind": "Kernel", "name": "k", "buffers": [], "params": [],
            "launch": {"grid": [1, 1, 1], "block": [32, 1, 1]},
            "body": [{"kind": "Sync"}, {"kind": "Loop", "var": "i",
                                        "start": {"kind": "Lit", "value": 0, "dtype": "s32"},
                                        "stop": {"kind": "Lit", "value": 1, "dtype": "s32"},
                                        "step": {"kind": "Lit", "value": 1, "dtype": "s32"},
                                        "body": [{"kind": "Barrier"}]}]}
    with pytest.raises(IRError, match=r"^body\[1\]\.body\[0\]: unknown statement kind 'Barrier'"):
        load_kernel(data)

    class Bogus(ir.Stmt):
        pass
    with pytest.raises(IRError, match=r"^body\[0\]: unknown statement kind 'Bogus'"):
        run1([Bogus()])


def test_refuses_unguarded_out_of_bounds_load():
    kernel, meta = load_problem("vector_add")
    unguarded = kernel.body[:1] + kernel.body[1].then   # drop the tail Cond
    k = ir.Kernel(kernel.name, kernel.buffers, kernel.params, kernel.launch, unguarded)
    p = {"n": 1000}
    with pytest.raises(IRError, match=r"^body\[1\]\.index: out-of-bounds load of x\[1000\] "
                                      r"\(size 1000\) by thread 232 of block 3"):
        run_kernel(k, make_inputs("vector_add", p), p)


@pytest.mark.parametrize("body, pattern", [
    ([ir.Write("out", TID, V("nope"))], r"^body\[0\]\.value: read of undefined variable 'nope'"),
    ([ir.Cond(lt(TID, i(3)), (ir.Assign("v", "s32", TID),), ()), ir.Write("out", TID, V("v"))],
     r"^body\[1\]\.value: read of unassigned variable 'v' by thread 3 of block 0"),
    ([ir.Assign("v", "s32", add(TID, f(1)))], r"^body\[0\]\.value: operand dtypes differ"),
    ([ir.Assign("v", "f32", TID)], r"^body\[0\]: value is s32, declared f32"),
    ([ir.Assign("v", "s32", div(i(1), sub(TID, i(5))))], r"^body\[0\]\.value: integer div by zero"),
    ([ir.Cond(lt(TID, i(40)), (ir.Assign("v", "s32", TID), ir.WarpShuffle("v", V("b"))), ())],
     r"^body\[0\]\.then\[1\]: divergent shuffle"),
    ([ir.Cond(lt(TID, i(3)), (ir.Write("out", TID, TID),), ())],
     r"^buffers\[0\]: output 'out' element 3 was never written"),
    ([ir.Write("out", add(TID, i(1)), TID)], r"^body\[0\]\.index: out-of-bounds write to out\[64\]"),
])
def test_refuses_undefined(body, pattern):
    with pytest.raises(IRError, match=pattern):
        run1(body)


def test_refuses_write_to_input_and_uninitialised_shared():
    src = ir.Buffer("src", "s32", (64,), "input")
    k = mk([ir.Write("src", TID, TID)], buffers=[src])
    with pytest.raises(IRError, match=r"^body\[0\]: write to input buffer 'src'"):
        run_kernel(k, {"src": np.zeros(64, np.int32)}, {})
    body = [ir.Sync(), ir.TreeHalve("sh", "r", "add", 4), ir.Write("out", TID, V("r"))]
    with pytest.raises(IRError, match=r"^body\[1\]: TreeHalve reads never-written sh\[0\]"):
        run1(body, shared=[ir.Shared("sh", "s32", 4)])


def _without(stmts, drop):
    return tuple(s for k, s in enumerate(stmts) if k != drop)


def _replace_body(kernel, body):
    return ir.Kernel(kernel.name, kernel.buffers, kernel.params, kernel.launch, tuple(body),
                     kernel.shared)


@pytest.mark.parametrize("name, edit, pattern", [
    # matmul without the trailing Sync: next tile overwrites values others still read
    ("matmul_rect", lambda b: b[:3] + (ir.Loop(**{**b[3].__dict__, "body": b[3].body[:-1]}),)
     + b[4:], r"^body\[3\]\.body\[1\]: shared-memory race on As: overwrite of a value read by"),
    # cp.async tiles read before the Sync that publishes them
    ("matmul_512", lambda b: b[:10] + (ir.Loop(**{**b[10].__dict__,
                                                  "body": _without(b[10].body, 4)}),) + b[11:],
     r"^body\[10\]\.body\[4\]\.body\[0\]: shared-memory race on As: read of a value written"),
    # per-warp partials reduced without the Sync after writing them
    ("array_sum", lambda b: _without(b, 4), r"^body\[4\]: shared-memory race on partials"),
])
def test_refuses_missing_sync(name, edit, pattern):
    kernel, meta = load_problem(name)
    params = {**meta["params"], **meta["test_params"]}
    with pytest.raises(IRError, match=pattern):
        run_kernel(_replace_body(kernel, edit(kernel.body)), make_inputs(name, params), params)


def test_interp_suite_budget():
    """The default (non-slow) problem runs stay well inside the time budget."""
    t = time.time()
    for name in PROBLEM_NAMES:
        _check(name, load_problem(name)[1]["test_params"])
    assert time.time() - t < 30
