#!/usr/bin/env python3
"""Compile corpus/src/numba/kernels.py with numba-cuda's compile_ptx (no GPU needed) for several
compute capabilities and options."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import launch_sidecars  # noqa: E402
from common import PTX, SRC, clean_dir, record, update_manifest  # noqa: E402

sys.path.insert(0, str(SRC / "numba"))
import kernels as K  # noqa: E402
import numba  # noqa: E402
import numba_cuda  # noqa: E402
from numba import cuda  # noqa: E402

KERNELS = [
    ("saxpy_f32", K.saxpy, "void(float32[:], float32, float32[:], float32[:])", ["elementwise"]),
    ("saxpy_f64", K.saxpy, "void(float64[:], float64, float64[:], float64[:])", ["elementwise"]),
    ("vec_add_2d", K.vec_add_2d, "void(float32[:,:], float32[:,:], float32[:,:])", ["elementwise"]),
    ("block_sum", K.block_sum, "void(float32[:], float32[:])", ["reduction", "atomics"]),
    ("warp_reduce_max", K.warp_reduce_max, "void(float32[:], float32[:])", ["reduction", "shuffle"]),
    ("histogram", K.histogram, "void(int32[:], int32[:])", ["atomics"]),
    ("matmul_shared", K.matmul_shared, "void(float32[:,:], float32[:,:], float32[:,:])", ["matmul"]),
    ("mandelbrot", K.mandelbrot, "void(int32[:,:], float64, float64, float64, float64, int32)", []),
    ("softmax_rows", K.softmax_rows, "void(float32[:,:], float32[:,:])", ["softmax"]),
    ("xorshift_fill", K.xorshift_fill, "void(uint32[:], uint32)", []),
    ("cas_counter", K.cas_counter, "void(int32[:], int32[:])", ["atomics", "atomic_cas"]),
    ("stencil_1d", K.stencil_1d, "void(float64[:], float64[:])", ["stencil"]),
    ("fp16_scale", K.fp16_scale, "void(float16[:], float16[:], float16)", ["fp16"]),
    ("int_math", K.int_math, "void(int32[:], int32[:])", []),
    ("local_array_sort", K.local_array_sort, "void(float32[:,:], float32[:,:])", []),
]
CCS = [(7, 5), (8, 0), (8, 6), (9, 0), (10, 0), (12, 0)]


def jobs():
    for idx, (name, fn, sig, tags) in enumerate(KERNELS):
        yield name, fn, sig, tags, (8, 0), {}
        yield name, fn, sig, tags, (9, 0), {}
        extra = CCS[idx % len(CCS)]
        if extra not in ((8, 0), (9, 0)):
            yield name, fn, sig, tags, extra, {}
    for name, fn, sig, tags in [KERNELS[i] for i in (3, 6, 8)]:
        yield name, fn, sig, tags, (8, 6), {"lineinfo": True}
        yield name, fn, sig, tags, (8, 0), {"debug": True, "opt": False}
        yield name, fn, sig, tags, (8, 9), {"fastmath": True}


def main():
    outdir = PTX / "numba"
    clean_dir(outdir, "*.ptx")
    version = f"numba-cuda {numba_cuda.__version__} (numba {numba.__version__})"
    records, failures = [], []
    for name, fn, sig, tags, cc, opts in jobs():
        suffix = "".join(f".{k}" for k in sorted(opts) if k != "opt")
        fname = f"{name}.sm_{cc[0]}{cc[1]}{suffix}.ptx"
        try:
            ptx, _ = cuda.compile_ptx(fn, sig, cc=cc, **opts)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{fname}: {type(e).__name__}: {e}")
            continue
        path = outdir / fname
        path.write_text(ptx)
        ftags = (tags + ["numba"] + (["lineinfo"] if opts.get("lineinfo") else [])
                 + (["debug"] if opts.get("debug") else []) + (["fast-math"] if opts.get("fastmath") else []))
        records.append(record(path, "numba", version, features=ftags, source=f"src/numba/kernels.py::{fn.__name__}",
                              signature=sig, options={k: v for k, v in sorted(opts.items())}))
    update_manifest("numba", records)
    launch_sidecars.write(["numba"])   # sidecars of the kernels LAUNCH tables describe
    for f in failures:
        print("FAILED", f, file=sys.stderr)
    print(f"numba: {len(records)} PTX files, {len(failures)} failures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
