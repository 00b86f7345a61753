"""CuTe DSL kernels for lint's fresh whole-file corpus (scripts/make_lint_corpus.py --cute).

Run as a script, once per target: the DSL reads its target and line-info switch from the environment
when it starts (CUTE_DSL_ARCH, CUTE_DSL_LINEINFO), so the generator starts one process per variant:

    CUTE_DSL_ARCH=sm_90a python corpus/lint-fresh/cute_kernels.py OUT_DIR

Each kernel is compiled against fake tensors (no GPU needed); the DSL keeps the PTX it built
(CUTE_DSL_KEEP=ptx) and this script copies it to OUT_DIR/<kernel>.ptx.
"""

import os
import sys
from pathlib import Path

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor


@cute.kernel
def add_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    i = bidx * bdim + tidx
    c[i] = a[i] * 2.0 + b[i]


@cute.jit
def elementwise(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    add_kernel(a, b, c).launch(grid=(8, 1, 1), block=(128, 1, 1))


@cute.kernel
def sum_kernel(x: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    v = x[bidx * 128 + tidx]
    v = cute.arch.warp_reduction_sum(v)
    if cute.arch.lane_idx() == 0:
        cute.arch.atomic_add(out.iterator, v)


@cute.jit
def warp_sum(x: cute.Tensor, out: cute.Tensor):
    sum_kernel(x, out).launch(grid=(8, 1, 1), block=(128, 1, 1))


@cute.kernel
def max_exp_kernel(x: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    v = x[bidx * 64 + tidx]
    m = cute.arch.warp_reduction_max(v)
    out[bidx * 64 + tidx] = cute.arch.exp(v - m)


@cute.jit
def max_exp(x: cute.Tensor, out: cute.Tensor):
    max_exp_kernel(x, out).launch(grid=(16, 1, 1), block=(64, 1, 1))


def _f32(n):
    return make_fake_compact_tensor(cutlass.Float32, (n,))


KERNELS = {
    "elementwise": (elementwise, lambda: (_f32(1024), _f32(1024), _f32(1024))),
    "warp_sum": (warp_sum, lambda: (_f32(1024), _f32(1))),
    "max_exp": (max_exp, lambda: (_f32(1024), _f32(1024))),
}


def main() -> int:
    out = Path(sys.argv[1])
    dump = Path(os.environ["CUTE_DSL_DUMP_DIR"])
    dump.mkdir(parents=True, exist_ok=True)  # the DSL writes nothing into a folder that is not there
    out.mkdir(parents=True, exist_ok=True)
    for name, (fn, args) in KERNELS.items():
        path = cute.compile(fn, *args()).__ptx__
        (out / f"{name}.ptx").write_text(Path(path).read_text() if os.path.isfile(path) else path)
        print(name, out / f"{name}.ptx")
    return 0


if __name__ == "__main__":
    sys.exit(main())
