#!/usr/bin/env python3
"""Launch sidecars (corpus/launch/<producer>/*.json) for the numba, clang and llvm kernels and
for the nvcc sources whose kernels build_nvcc.py's LAUNCH_SPECS does not describe, written from
the PTX already in corpus/ptx (no compiler needed). One sidecar per PTX file, except a build
variant (`X.sm_80.O0.ptx`, `.g`, `.G`, `.debug`, `.lineinfo`, `.fastmath`) whose plain build
`X.sm_80.ptx` exists: it shares that file's sidecar (corpus/scripts/corpus_check.build_variants);
numba variants have their own (the entry name carries the build's options).

    python corpus/scripts/launch_sidecars.py [numba clang llvm nvcc]

Launches follow the kernel sources in corpus/src; numba arrays are `array` arguments (the
data model's meminfo, parent, nitems, itemsize, data, shape, strides parameters). Sources left
without a sidecar, and why, are in NO_SIDECAR.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CORPUS, LAUNCH, PTX, write_json  # noqa: E402


def ptr(name, dtype, count, init="zeros"):
    return {"name": name, "kind": "pointer", "dtype": dtype, "count": count, "init": init}


def arr(name, dtype, shape, init="zeros"):
    return {"name": name, "kind": "array", "dtype": dtype, "shape": list(shape), "init": init}


def val(name, dtype, value):
    return {"name": name, "kind": "scalar", "dtype": dtype, "value": value}


def k(kernel, grid, block, args, shared=0):
    return {"kernel": kernel, "grid": list(grid) + [1] * (3 - len(grid)),
            "block": list(block) + [1] * (3 - len(block)), "shared": shared, "args": args}


N = 4096
# numba: one kernel a file, named by the stem's first part; the entry name is read from the PTX
NUMBA = {
    "saxpy_f32": k(None, [N // 256], [256], [arr("out", "fp32", [N]), val("a", "fp32", 2.5),
                                             arr("x", "fp32", [N], "randn"), arr("y", "fp32", [N], "randn")]),
    "saxpy_f64": k(None, [N // 256], [256], [arr("out", "fp64", [N]), val("a", "fp64", 2.5),
                                             arr("x", "fp64", [N], "randn"), arr("y", "fp64", [N], "randn")]),
    "vec_add_2d": k(None, [4, 4], [16, 16], [arr("a", "fp32", [64, 64], "randn"), arr("b", "fp32", [64, 64], "randn"),
                                            arr("c", "fp32", [64, 64])]),
    "block_sum": k(None, [N // 256], [256], [arr("x", "fp32", [N], "randn"), arr("out", "fp32", [1])]),
    "warp_reduce_max": k(None, [N // 256], [256], [arr("x", "fp32", [N], "randn"), arr("out", "fp32", [1])]),
    "histogram": k(None, [8], [256], [arr("data", "i32", [N], "randint"), arr("hist", "i32", [256])]),
    "matmul_shared": k(None, [2, 2], [16, 16], [arr("A", "fp32", [32, 32], "randn"),
                                                arr("B", "fp32", [32, 32], "randn"),
                                                arr("C", "fp32", [32, 32])]),
    "mandelbrot": k(None, [4, 2], [16, 16], [arr("img", "i32", [32, 64]), val("xmin", "fp64", -2.0),
                                             val("xmax", "fp64", 1.0), val("ymin", "fp64", -1.5),
                                             val("ymax", "fp64", 1.5), val("iters", "i32", 64)]),
    "softmax_rows": k(None, [8], [128], [arr("x", "fp32", [8, 300], "randn"), arr("out", "fp32", [8, 300])]),
    "xorshift_fill": k(None, [N // 256], [256], [arr("out", "u32", [N]), val("seed", "u32", 12345)]),
    "cas_counter": k(None, [4], [32], [arr("lock", "i32", [1]), arr("counter", "i32", [1])]),
    "stencil_1d": k(None, [N // 256], [256], [arr("a", "fp64", [N], "randn"), arr("out", "fp64", [N])]),
    "fp16_scale": k(None, [N // 256], [256], [arr("x", "fp16", [N], "randn"), arr("out", "fp16", [N]),
                                              val("s", "fp16", 1.5)]),
    "int_math": k(None, [N // 256], [256], [arr("a", "i32", [N], "randint"), arr("out", "i32", [N])]),
    "local_array_sort": k(None, [4], [128], [arr("x", "fp32", [512, 8], "randn"), arr("out", "fp32", [512, 8])]),
}

# clang / llvm / nvcc: source stem -> kernels (entry names are the same for every target)
CLANG = {
    "device_calls": [k("device_calls", [8], [128], [ptr("steps", "i32", 1024), ptr("vals", "fp32", 1024),
                                                    val("n", "i32", 1024)])],
    "elementwise": [
        k("_ZN6corpus4map2IfNS_4AxpyIfEEEEvT0_PKT_PS4_i", [4], [256],
          [val("f", "fp32", 2.5), ptr("x", "fp32", N, "randn"), ptr("y", "fp32", N, "randn"), val("n", "i32", N)]),
        k("_ZN6corpus4map2IdNS_4AxpyIdEEEEvT0_PKT_PS4_i", [4], [256],
          [val("f", "fp64", 2.5), ptr("x", "fp64", N, "randn"), ptr("y", "fp64", N, "randn"), val("n", "i32", N)]),
        k("_ZN6corpus4map2IiNS_4AxpyIiEEEEvT0_PKT_PS4_i", [4], [256],
          [val("f", "i32", 3), ptr("x", "i32", N, "randint"), ptr("y", "i32", N, "randint"), val("n", "i32", N)]),
        k("relu_inplace", [N // 256], [256], [ptr("x", "fp32", N, "randn"), val("n", "i32", N)]),
        k("fast_math", [N // 256], [256], [ptr("x", "fp32", N, "randn"), ptr("y", "fp32", N), val("n", "i32", N)]),
    ],
    "matmul": [
        k("_ZN6corpus4gemm5sgemmILi16ELi4EEEviiiPKfS3_Pf", [2, 2], [16, 16],
          [val("M", "i32", 128), val("N", "i32", 32), val("K", "i32", 32), ptr("A", "fp32", 128 * 32, "randn"),
           ptr("B", "fp32", 32 * 32, "randn"), ptr("C", "fp32", 128 * 32)]),
        k("_ZN6corpus4gemm5sgemmILi32ELi8EEEviiiPKfS3_Pf", [1, 1], [32, 32],
          [val("M", "i32", 256), val("N", "i32", 32), val("K", "i32", 32), ptr("A", "fp32", 256 * 32, "randn"),
           ptr("B", "fp32", 32 * 32, "randn"), ptr("C", "fp32", 256 * 32)]),
    ],
    "reduce": [
        k("_Z9block_sumILi256EEvPKfPfi", [4], [256], [ptr("x", "fp32", N, "randn"), ptr("out", "fp32", 1),
                                                      val("n", "i32", N)]),
        k("_Z9block_sumILi1024EEvPKfPfi", [2], [1024], [ptr("x", "fp32", N, "randn"), ptr("out", "fp32", 1),
                                                        val("n", "i32", N)]),
        k("int_histogram", [4], [256], [ptr("data", "u8", N, "randint"), ptr("hist", "u32", 256), val("n", "i32", N)]),
        k("cas_max", [N // 256], [256], [ptr("target", "i32", 1), ptr("x", "i32", N, "randint"), val("n", "i32", N)]),
    ],
}

LLVM = {
    # i = tid + ctaid: CTAs overlap, so one CTA (as many would race on x and f)
    "device_calls": [k("apply_kernel", [1], [64], [ptr("x", "fp32", 64, "randn"), ptr("f", "i32", 64),
                                                   val("kind", "i32", 0)])],
    # warp 0 loads partials[lane] for all 32 lanes (and selects 0 past ntid/32): a full 1024-thread
    # block writes every slot, a smaller one has warp 0 read never-written shared memory
    "reduce_shfl": [k("block_reduce_sum", [N // 1024], [1024], [ptr("x", "fp32", N, "randn"), ptr("out", "fp32", 1),
                                                              val("n", "i32", N)])],
    "saxpy_loop": [
        k("saxpy_grid_stride", [4], [256], [val("alpha", "fp32", 2.5), ptr("x", "fp32", N, "randn"),
                                            ptr("y", "fp32", N, "randn"), val("n", "i64", N)]),
        k("daxpy", [N // 256], [256], [val("alpha", "fp64", 2.5), ptr("x", "fp64", N, "randn"),
                                       ptr("y", "fp64", N, "randn"), val("n", "i32", N)]),
    ],
    "vadd": [k("vadd", [N // 256], [256], [ptr("a", "fp32", N, "randn"), ptr("b", "fp32", N, "randn"),
                                           ptr("c", "fp32", N), val("n", "i32", N)])],
    # half_axpy, float_misc and bits index by %tid.x alone: one CTA; bits' lock is one warp's
    "vector_math": [
        k("vec4_norm", [4], [256], [ptr("in", "fp32", 4 * 1024, "randn"), ptr("out", "fp32", 4 * 1024)]),
        k("half_axpy", [1], [256], [ptr("x", "fp16", 256, "randn"), ptr("y", "fp16", 256, "randn"),
                                    val("a", "fp16", 1.5)]),
        k("float_misc", [1], [256], [ptr("x", "fp32", 256, "randn")]),
        k("bits", [1], [32], [ptr("x", "i32", 32, "randint"), ptr("lock", "i32", 1)]),
    ],
}

GEMM = "_ZN6ptx2py4gemm12gemm_regtileI{t}{t}Li{bm}ELi{bn}ELi{bk}ELi{tm}ELi{tn}EEEviiiT0_PKT_S5_S2_PS3_"


def _gemm(t, bm, bn, bk, tm, tn):
    dt = {"f": "fp32", "d": "fp64"}[t]
    m, n, kk = bm, bn, 2 * bk
    return k(GEMM.format(t=t, bm=bm, bn=bn, bk=bk, tm=tm, tn=tn), [1, 1], [(bm // tm) * (bn // tn)],
             [val("M", "i32", m), val("N", "i32", n), val("K", "i32", kk), val("alpha", dt, 1.5),
              ptr("A", dt, m * kk, "randn"), ptr("B", dt, kk * n, "randn"), val("beta", dt, 0.5),
              ptr("C", dt, m * n, "randn")])


def _cub(kernel, block, args):
    return k(kernel, [2], [block], args)


NVCC = {
    "atomics": [
        k("atomic_zoo", [4], [256], [ptr("ints", "i32", 12), ptr("u64", "u64", 2), ptr("floats", "fp32", 2),
                                     ptr("doubles", "fp64", 1), ptr("x", "fp32", 1024, "randn"),
                                     val("n", "i32", 1000)]),
        k("spin_lock_counter", [4], [64], [ptr("lock", "i32", 1), ptr("counter", "i32", 1)]),
        k("libcu_atomic_ref", [4], [256], [ptr("data", "i32", 32), val("n", "i32", 1000)]),
    ],
    # c_weights / c_filter are __constant__ arrays the sidecar cannot set: they hold zeros
    "stencil": [
        k("conv5x5", [4, 2], [16, 16], [ptr("in", "fp32", 64 * 32, "randn"), ptr("out", "fp32", 64 * 32),
                                        val("w", "i32", 64), val("h", "i32", 32)]),
        k("jacobi3d", [1, 1], [16, 16], [ptr("in", "fp64", 18 * 18 * 6, "randn"), ptr("out", "fp64", 18 * 18 * 6),
                                         val("nx", "i32", 18), val("ny", "i32", 18), val("nz", "i32", 6)]),
        k("_Z9stencil2dILi32ELi8EEvPKfPfii", [2, 2], [32, 8], [ptr("in", "fp32", 64 * 16, "randn"),
                                                               ptr("out", "fp32", 64 * 16), val("w", "i32", 64),
                                                               val("h", "i32", 16)]),
        k("_Z9stencil2dILi16ELi16EEvPKfPfii", [2, 2], [16, 16], [ptr("in", "fp32", 32 * 32, "randn"),
                                                                 ptr("out", "fp32", 32 * 32), val("w", "i32", 32),
                                                                 val("h", "i32", 32)]),
    ],
    "matmul_tiled": [_gemm("f", 64, 64, 8, 4, 4), _gemm("f", 128, 128, 8, 8, 8), _gemm("f", 128, 64, 16, 8, 4),
                     _gemm("d", 64, 64, 8, 4, 4), _gemm("d", 64, 64, 16, 8, 8)],
    "cub_block": [
        _cub("_Z15warp_reduce_maxPKfPf", 256, [ptr("in", "fp32", 512, "randn"), ptr("out", "fp32", 16)]),
        _cub("_Z15block_histogramPKhPj", 128, [ptr("in", "u8", 1024, "randint"), ptr("hist", "u32", 256)]),
        _cub("_Z16block_reduce_sumILi128ELi4EEvPKfPf", 128, [ptr("in", "fp32", 1024, "randn"), ptr("out", "fp32", 2)]),
        _cub("_Z16block_reduce_sumILi256ELi8EEvPKfPf", 256, [ptr("in", "fp32", 4096, "randn"), ptr("out", "fp32", 2)]),
        _cub("_Z20block_scan_exclusiveILi128ELi4EEvPKiPi", 128, [ptr("in", "i32", 1024, "randint"),
                                                                  ptr("out", "i32", 1024)]),
        _cub("_Z20block_scan_exclusiveILi256ELi16EEvPKiPi", 256, [ptr("in", "i32", 8192, "randint"),
                                                                   ptr("out", "i32", 8192)]),
        _cub("_Z16block_radix_sortILi128ELi8EEvPjPf", 128, [ptr("keys", "u32", 2048, "randint"),
                                                             ptr("vals", "fp32", 2048, "randn")]),
    ],
    "printf_kernels": [
        k("hello", [2], [32], [val("iteration", "i32", 7)]),
        k("print_values", [2], [128], [ptr("x", "fp32", 256, "randn"), ptr("d", "fp64", 256, "randn"),
                                       val("n", "i64", 256)]),
        k("checked_index", [2], [128], [ptr("idx", "i32", 256, "randint"), ptr("out", "fp32", 256),
                                        val("n", "i32", 256)]),
    ],
    # the kernels call extern device functions and data of rdc_lib: a run needs the linked pair
    "rdc_main": [
        k("rdc_apply", [2], [128], [ptr("x", "fp32", 256, "randn"), ptr("y", "fp32", 256), val("n", "i32", 256),
                                    val("kind", "i32", 0)]),
        k("rdc_fib", [2], [128], [ptr("out", "i32", 256), val("n", "i32", 256)]),
    ],
}
EW = "_ZN6ptx2py2ew"
# kernels of the sources whose extern "C" kernels build_nvcc.py's LAUNCH_SPECS describes: added to
# those sidecars (build_nvcc.py writes them first)
NVCC_MORE = {
    "elementwise": [
        k(EW + "10saxpy_vec4EfPK6float4PS1_i", [4], [256], [val("alpha", "fp32", 2.5), ptr("x", "fp32", N, "randn"),
                                                           ptr("y", "fp32", N, "randn"), val("n4", "i32", N // 4)]),
        k(EW + "10half2_geluEPK7__half2PS1_i", [8], [256], [ptr("x", "fp16", N, "randn"), ptr("y", "fp16", N),
                                                           val("n2", "i32", N // 2)]),
        k(EW + "9bf16_siluEPK13__nv_bfloat16PS1_i", [16], [256], [ptr("x", "bf16", N, "randn"), ptr("y", "bf16", N),
                                                                 val("n", "i32", N)]),
        k(EW + "14transcendentalEPKdPdi", [16], [256], [ptr("x", "fp64", N, "randn"), ptr("y", "fp64", N),
                                                       val("n", "i32", N)]),
        k(EW + "7int_opsEPKjPji", [16], [256], [ptr("a", "u32", N, "randint"), ptr("out", "u32", N),
                                                val("n", "i32", N)]),
        *[k(EW + name, [4], [256], [ptr("a", dt, N, init), ptr("b", dt, N, init), ptr("out", dt, N),
                                    val("n", "i64", N)])
          for name, dt, init in [("6binaryIfNS0_3AddIfEEEEvPKT_S6_PS4_l", "fp32", "randn"),
                                 ("6binaryIdNS0_3MulIdEEEEvPKT_S6_PS4_l", "fp64", "randn"),
                                 ("6binaryIiNS0_3MaxIiEEEEvPKT_S6_PS4_l", "i32", "randint"),
                                 ("6binaryI6__halfNS0_3AddIS2_EEEEvPKT_S7_PS5_l", "fp16", "randn")]],
        *[k(EW + name, [16], [256], [val("alpha", dt, 2.5), ptr("x", dt, N, "randn"), ptr("y", dt, N, "randn"),
                                     val("n", "i32", N)])
          for name, dt in [("5saxpyIfEEvT_PKS2_PS2_i", "fp32"), ("5saxpyIdEEvT_PKS2_PS2_i", "fp64")]],
    ],
    "reduce": [
        k("cg_reduce", [4], [256], [ptr("x", "i32", N, "randint"), ptr("out", "i32", 1), val("n", "i32", N)]),
        *[k(f"_Z9block_sumILi{b}EEvPKfPfi", [4], [b], [ptr("x", "fp32", N, "randn"), ptr("out", "fp32", 1),
                                                       val("n", "i32", N)]) for b in (128, 256, 1024)],
    ],
    "scan_softmax": [
        *[k(f"_Z18hillis_steele_scanILi{b}EEvPKfPfS2_i", [N // b], [b],
            [ptr("in", "fp32", N, "randn"), ptr("out", "fp32", N), ptr("block_sums", "fp32", N // b),
             val("n", "i32", N)]) for b in (256, 1024)],
        k("_Z12softmax_warpIfLi1024EEvPKT_PS0_i", [4], [128], [ptr("x", "fp32", 16 * 1024, "randn"),
                                                               ptr("y", "fp32", 16 * 1024), val("rows", "i32", 16)]),
        k("_Z12softmax_warpI6__halfLi2048EEvPKT_PS1_i", [4], [128], [ptr("x", "fp16", 16 * 2048, "randn"),
                                                                     ptr("y", "fp16", 16 * 2048),
                                                                     val("rows", "i32", 16)]),
        *[k(f"_Z9layernormILi{b}EEvPKfS1_S1_Pfif", [8], [b],
            [ptr("x", "fp32", 8 * 1024, "randn"), ptr("gamma", "fp32", 1024, "randn"),
             ptr("beta", "fp32", 1024, "randn"), ptr("y", "fp32", 8 * 1024), val("cols", "i32", 1024),
             val("eps", "fp32", 1e-5)]) for b in (256, 512)],
    ],
}
# mma_sync: the sm_90a sidecar's kernels (mma.sync, ldmatrix, cp.async, wmma) for the other targets
MMA_FROM = LAUNCH / "nvcc" / "mma_sync.sm_90a.json"

# corpus sources with no sidecar, and why (emulate_corpus.py lists their kernels as not run)
NO_SIDECAR = {
    "nvcc/cub_device": "CUB device-wide algorithms: host-orchestrated kernel sequences whose by-value "
                       "ScanTileState/GridEvenShare/vsmem struct parameters the sidecar format cannot describe",
    "nvcc/thrust_kernels": "thrust algorithms: host-orchestrated CUB kernel sequences with by-value functor "
                           "and iterator structs the sidecar format cannot describe",
    "nvcc/texture_surface": "textures and surfaces: the parameters are cudaTextureObject_t/cudaSurfaceObject_t "
                            "handles, which the sidecar format (buffers and scalars) cannot make",
    "nvcc/cub_block": "cub's EmptyKernel: CUB's empty probe kernel, launched by no algorithm here",
    "nvcc/rdc_lib": "relocatable library half: lib_init_table only writes the extern lib_table, read by "
                    "rdc_main after linking (no standalone output)",
}

VARIANTS = {"O0", "g", "G", "debug", "lineinfo", "fastmath"}


def _target(name: str) -> str:
    return re.search(r"\.(sm_\d+a?)\b", name).group(1)


def _entries(text: str) -> list[str]:
    return re.findall(r"\.entry\s+([\w$]+)\s*\(", text)


def _shares_sidecar(ptx: Path) -> bool:
    """A build variant whose plain build exists reads that build's sidecar (not numba's: a
    debug build's entry name differs)."""
    parts = ptx.name.split(".")
    return (ptx.parent.name != "numba" and len(parts) > 3 and parts[-2] in VARIANTS
            and ptx.with_name(".".join(parts[:-2]) + ".ptx").is_file())


def sidecar(producer: str, ptx: Path) -> dict | None:
    stem = ptx.name.split(".")[0]
    text = ptx.read_text()
    if producer == "numba":
        if stem not in NUMBA:
            return None
        kernels = [{**NUMBA[stem], "kernel": _entries(text)[0]}]
    elif producer == "nvcc" and stem == "mma_sync":
        if not MMA_FROM.is_file():
            return None
        kernels = json.loads(MMA_FROM.read_text())["kernels"]
    elif producer == "nvcc" and stem in NVCC_MORE:
        side = LAUNCH / "nvcc" / (ptx.name[: -len(".ptx")] + ".json")
        more = {x["kernel"] for x in NVCC_MORE[stem]}
        first = [x for x in json.loads(side.read_text())["kernels"] if x["kernel"] not in more] \
            if side.is_file() else []
        kernels = first + NVCC_MORE[stem]
    else:
        kernels = {"clang": CLANG, "llvm": LLVM, "nvcc": NVCC}[producer].get(stem)
        if kernels is None:
            return None
    have = set(_entries(text))
    kernels = [x for x in kernels if x["kernel"] in have]
    if not kernels:
        return None
    return {"ptx": f"ptx/{producer}/{ptx.name}", "target": _target(ptx.name), "seed": 0, "kernels": kernels}


def write(producers) -> int:
    n = 0
    for producer in producers:
        for ptx in sorted((PTX / producer).glob("*.ptx")):
            if _shares_sidecar(ptx):
                continue
            data = sidecar(producer, ptx)
            out = LAUNCH / producer / (ptx.name[: -len(".ptx")] + ".json")
            if data is None or (producer == "nvcc" and out.is_file() and not _ours(out)):
                continue
            write_json(out, data)
            n += 1
    return n


def _ours(path: Path) -> bool:
    """nvcc sidecars this script writes (build_nvcc.py writes those of its LAUNCH_SPECS)."""
    stem = path.name.split(".")[0]
    return stem in NVCC or stem in NVCC_MORE or (stem == "mma_sync" and path != MMA_FROM and "sm_90a" not in path.name
                            and "sm_100a" not in path.name)


def main(argv=None) -> int:
    producers = (argv if argv is not None else sys.argv[1:]) or ["numba", "clang", "llvm", "nvcc"]
    print(f"{write(producers)} launch sidecars written under {LAUNCH.relative_to(CORPUS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
