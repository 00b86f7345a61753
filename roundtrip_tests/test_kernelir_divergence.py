"""Defect 10: the IR compiler refuses what is undefined on a GPU (and what its
interpreter refuses): a barrier under a thread-dependent branch or loop, and a
full-mask shuffle in a block that is not whole warps. The error names the node."""

from __future__ import annotations

import pytest

from ptx2py.kernelir import CompileError, compile_kernel, ir
from ptx2py.kernelir.problems.dsl import V, i

TID = ir.Builtin("tid.x")


def kernel(body, block=(128, 1, 1)):
    return ir.Kernel("k", (ir.Buffer("x", "f32", ("n",), "input"), ir.Buffer("y", "f32", ("n",), "output")),
                     (ir.Param("n", "s32"),), ir.Launch((1, 1, 1), block), tuple(body),
                     (ir.Shared("s", "f32", 128),))


@pytest.mark.parametrize("body, where", [
    ([ir.Cond(ir.Binary("lt", TID, i(16)), (ir.Sync(),), ())], r"^body\[0\]\.then\[0\] \(Sync\)"),
    ([ir.Assign("t", "s32", TID), ir.Cond(ir.Binary("lt", V("t"), i(16)), (), (ir.Sync(),))],
     r"^body\[1\]\.else\[0\] \(Sync\)"),
    ([ir.Load("v", "x", i(0)), ir.Cond(ir.Binary("gt", V("v"), ir.Lit(0.0, "f32")), (ir.Sync(),), ())],
     r"^body\[1\]\.then\[0\]"),
    ([ir.Loop("j", TID, V("n"), i(128), (ir.Sync(),))], r"^body\[0\]\.body\[0\] \(Sync\)"),
    ([ir.Cond(ir.Binary("lt", TID, i(16)), (ir.TreeHalve("s", "acc", "add"),), ())],
     r"^body\[0\]\.then\[0\] \(TreeHalve add\)"),
])
def test_a_barrier_under_a_thread_dependent_branch_is_refused(body, where):
    with pytest.raises(CompileError, match=where) as info:
        compile_kernel(kernel(body))
    assert "thread-dependent" in str(info.value)


def test_a_barrier_under_a_uniform_branch_compiles():
    text = compile_kernel(kernel([ir.Cond(ir.Binary("lt", ir.Builtin("ctaid.x"), V("n")), (ir.Sync(),), ()),
                                  ir.Loop("j", i(0), V("n"), i(1), (ir.Sync(),))]))
    assert text.count("bar.sync") == 2


def test_a_full_mask_shuffle_in_a_partial_warp_is_refused():
    body = [ir.Assign("acc", "f32", ir.Lit(1.0, "f32")),
            ir.WarpShuffle("acc", ir.Binary("add", V("a"), V("b")))]
    with pytest.raises(CompileError, match=r"^body\[1\] \(WarpShuffle\): full-mask shuffle in a block of 48"):
        compile_kernel(kernel(body, block=(48, 1, 1)))
    assert "shfl.sync" in compile_kernel(kernel(body, block=(64, 1, 1)))
