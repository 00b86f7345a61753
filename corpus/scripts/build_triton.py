#!/usr/bin/env python3
"""Compile the Triton kernels in corpus/src/triton/kernels.py to PTX without a GPU, for several
compute capabilities and configurations, and write launch sidecars (corpus/launch/triton/*.json)."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
_cache = tempfile.mkdtemp(prefix="ptx2py-triton-cache-")
os.environ["TRITON_CACHE_DIR"] = _cache  # fresh cache: always compile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LAUNCH, PTX, SRC, clean_dir, record, update_manifest, write_json  # noqa: E402

sys.path.insert(0, str(SRC / "triton"))
import kernels as K  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

CAPS = [80, 89, 90, 100, 120]
TMA_CAPS = [90, 100, 120]
FP8_CAPS = [89, 90, 100, 120]

ELEM_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8e4nv": 1, "fp8e5": 1, "i32": 4, "i64": 8, "i8": 1, "u8": 1}


def P(name, dtype, count, init="randn"):
    return {"name": name, "kind": "pointer", "dtype": dtype, "count": int(count), "init": init}


def S(name, dtype, value):
    return {"name": name, "kind": "scalar", "dtype": dtype, "value": value}


def D(name, dtype, shape, block, init="randn"):
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return {"name": name, "kind": "tma-descriptor", "dtype": dtype, "shape": list(shape), "strides": strides,
            "block_shape": list(block), "count": int(__import__("math").prod(shape)), "init": init}


def sig_of(args, constexprs):
    sig = {}
    for a in args:
        if a["kind"] == "pointer":
            sig[a["name"]] = "*" + a["dtype"]
        elif a["kind"] == "scalar":
            sig[a["name"]] = a["dtype"]
        else:
            sig[a["name"]] = f"tensordesc<{a['dtype']}[{','.join(map(str, a['block_shape']))}]>"
    for c in constexprs:
        sig[c] = "constexpr"
    return sig


def cdiv(a, b):
    return (a + b - 1) // b


CONFIGS = []


def add(name, fn, args, constexprs, grid, num_warps=4, num_stages=3, caps=CAPS, tags=(), note=None):
    for cap in caps:
        CONFIGS.append(dict(name=f"{name}_sm{cap}", fn=fn, args=args, constexprs=constexprs, grid=list(grid),
                            num_warps=num_warps, num_stages=num_stages, cap=cap, tags=list(tags), note=note))


def define():
    n = 1 << 20
    # elementwise
    for dt in ["fp32", "fp16", "bf16"]:
        add(f"add_{dt}", K.add_kernel, [P("x_ptr", dt, n), P("y_ptr", dt, n), P("out_ptr", dt, n, "zeros"),
                                        S("n_elements", "i32", n)],
            {"BLOCK": 1024}, (cdiv(n, 1024), 1, 1), tags=["elementwise"])
    add("add_fp32_b4096_w8", K.add_kernel, [P("x_ptr", "fp32", n), P("y_ptr", "fp32", n),
                                            P("out_ptr", "fp32", n, "zeros"), S("n_elements", "i32", n)],
        {"BLOCK": 4096}, (cdiv(n, 4096), 1, 1), num_warps=8, tags=["elementwise"])
    for dt in ["fp16", "bf16"]:
        add(f"gelu_{dt}", K.gelu_kernel, [P("x_ptr", dt, n), P("out_ptr", dt, n, "zeros"), S("n_elements", "i32", n)],
            {"BLOCK": 1024}, (cdiv(n, 1024), 1, 1), tags=["elementwise"])
    add("swiglu_fp16_b2048_w8", K.swiglu_kernel, [P("a_ptr", "fp16", n), P("b_ptr", "fp16", n),
                                                  P("out_ptr", "fp16", n, "zeros"), S("n_elements", "i32", n)],
        {"BLOCK": 2048}, (cdiv(n, 2048), 1, 1), num_warps=8, tags=["elementwise"])
    add("dropout_fp32", K.dropout_kernel, [P("x_ptr", "fp32", n), P("out_ptr", "fp32", n, "zeros"),
                                           S("n_elements", "i32", n),
                                            S("p", "fp32", 0.25), S("seed", "i32", 1234)],
        {"BLOCK": 1024}, (cdiv(n, 1024), 1, 1), tags=["elementwise", "philox"])
    M = N = 1024
    add("transpose_fp32_64x64", K.transpose_kernel, [P("x_ptr", "fp32", M * N), P("out_ptr", "fp32", M * N, "zeros"),
                                                     S("M", "i32", M), S("N", "i32", N),
                                                      S("stride_xm", "i32", N), S("stride_om", "i32", M)],
        {"BM": 64, "BN": 64}, (M // 64, N // 64, 1), tags=["elementwise"])
    # softmax / norms
    rows = 4096
    for dt, cols, blk, nw in [("fp32", 1000, 1024, 4), ("fp16", 4096, 4096, 8)]:
        add(f"softmax_{dt}_b{blk}_w{nw}", K.softmax_kernel,
            [P("out_ptr", dt, rows * cols, "zeros"), P("in_ptr", dt, rows * cols), S("in_stride", "i32", cols),
             S("out_stride", "i32", cols),
             S("n_rows", "i32", rows), S("n_cols", "i32", cols)], {"BLOCK": blk}, (256, 1, 1), num_warps=nw,
            tags=["softmax", "reduction"])
    add("softmax_fp32_b16384_w16", K.softmax_kernel,
        [P("out_ptr", "fp32", 256 * 16384, "zeros"), P("in_ptr", "fp32", 256 * 16384), S("in_stride", "i32", 16384),
         S("out_stride", "i32", 16384),
         S("n_rows", "i32", 256), S("n_cols", "i32", 16384)], {"BLOCK": 16384}, (128, 1, 1), num_warps=16, caps=[90],
        tags=["softmax", "reduction"])
    for dt, cols, blk, nw in [("fp16", 4096, 1024, 4), ("fp32", 8192, 4096, 8)]:
        add(f"layernorm_{dt}_b{blk}_w{nw}", K.layernorm_fwd_kernel,
            [P("X", dt, rows * cols), P("Y", dt, rows * cols, "zeros"), P("W", dt, cols, "ones"),
             P("B", dt, cols, "zeros"),
             P("Mean", "fp32", rows, "zeros"), P("Rstd", "fp32", rows, "zeros"), S("stride", "i32", cols),
             S("N", "i32", cols), S("eps", "fp32", 1e-5)],
            {"BLOCK": blk}, (rows, 1, 1), num_warps=nw, tags=["layernorm", "reduction"])
    for dt, cols, blk, nw in [("fp16", 2048, 2048, 8), ("bf16", 8192, 8192, 16)]:
        add(f"rmsnorm_{dt}_b{blk}_w{nw}", K.rmsnorm_kernel,
            [P("X", dt, rows * cols), P("Y", dt, rows * cols, "zeros"), P("W", dt, cols, "ones"),
             S("stride", "i32", cols), S("N", "i32", cols),
             S("eps", "fp32", 1e-6)], {"BLOCK": blk}, (rows, 1, 1), num_warps=nw, tags=["rmsnorm", "reduction"])
    # reductions / atomics / scans
    add("row_reduce_fp32", K.row_reduce_kernel,
        [P("x_ptr", "fp32", rows * 1000), P("sum_ptr", "fp32", rows, "zeros"), P("max_ptr", "fp32", rows, "zeros"),
         P("argmax_ptr", "i32", rows, "zeros"),
         S("n_cols", "i32", 1000), S("stride", "i32", 1000)], {"BLOCK": 1024}, (rows, 1, 1), tags=["reduction"])
    add("atomic_sum_fp32", K.atomic_sum_kernel, [P("x_ptr", "fp32", n), P("out_ptr", "fp32", 1, "zeros"),
                                                 S("n_elements", "i32", n)],
        {"BLOCK": 1024}, (cdiv(n, 1024), 1, 1), tags=["atomics", "reduction"])
    add("histogram_i32", K.histogram_kernel, [P("x_ptr", "i32", n, "randint"), P("hist_ptr", "i32", 256, "zeros"),
                                              S("n_elements", "i32", n)],
        {"NBINS": 256, "BLOCK": 1024}, (cdiv(n, 1024), 1, 1), tags=["atomics"])
    add("atomic_minmax_i32", K.atomic_minmax_kernel, [P("x_ptr", "i32", n, "randint"),
                                                      P("min_ptr", "i32", 16, "zeros"),
                                                      P("max_ptr", "i32", 32, "zeros"),
                                                       S("n_elements", "i32", n)], {"BLOCK": 1024},
        (cdiv(n, 1024), 1, 1), tags=["atomics"])
    add("atomic_cas_lock", K.atomic_cas_lock_kernel, [P("lock_ptr", "i32", 1, "zeros"),
                                                      P("count_ptr", "i32", 1, "zeros"),
                                                      P("data_ptr", "i32", 64 * 128, "zeros")],
        {"BLOCK": 128}, (64, 1, 1), num_warps=4, tags=["atomics", "atomic_cas"])
    add("cumsum_fp32_b1024", K.cumsum_kernel, [P("x_ptr", "fp32", rows * 1024),
                                               P("out_ptr", "fp32", rows * 1024, "zeros"), S("n_cols", "i32", 1024),
                                                S("stride", "i32", 1024)], {"BLOCK": 1024}, (rows, 1, 1), tags=["scan"])
    add("cumsum_i32_b4096_w8", K.cumsum_kernel, [P("x_ptr", "i32", 512 * 4096, "randint"),
                                                 P("out_ptr", "i32", 512 * 4096, "zeros"), S("n_cols", "i32", 4096),
                                                  S("stride", "i32", 4096)], {"BLOCK": 4096}, (512, 1, 1), num_warps=8,
        tags=["scan"])
    add("linear_recurrence_fp32", K.linear_recurrence_kernel,
        [P("a_ptr", "fp32", 1024 * 1000, "rand"), P("b_ptr", "fp32", 1024 * 1000),
         P("out_ptr", "fp32", 1024 * 1000, "zeros"),
                                                               S("n_cols", "i32", 1000)], {"BLOCK": 1024},
        (1024, 1, 1), tags=["scan", "associative_scan"])
    add("cummax_2d_fp32", K.cummax_2d_kernel, [P("x_ptr", "fp32", 32 * 128), P("out_ptr", "fp32", 32 * 128, "zeros")],
        {"BM": 32, "BN": 128}, (1, 1, 1),
        tags=["scan", "associative_scan"])
    # matmul (pointer based)
    M = N = K_ = 2048

    def mm_args(dt, cdt):
        return [P("a_ptr", dt, M * K_), P("b_ptr", dt, K_ * N), P("c_ptr", cdt, M * N, "zeros"), S("M", "i32", M),
                S("N", "i32", N), S("K", "i32", K_),
                S("stride_am", "i32", K_), S("stride_ak", "i32", 1), S("stride_bk", "i32", N), S("stride_bn", "i32", 1),
                S("stride_cm", "i32", N), S("stride_cn", "i32", 1)]
    for dt, cdt, bm, bn, bk, nw, ns, act, caps in [
        ("fp16", "fp16", 128, 128, 64, 8, 3, "", CAPS),
        ("fp16", "fp16", 64, 64, 32, 4, 4, "", CAPS),
        ("fp16", "fp16", 128, 256, 64, 8, 3, "", CAPS),
        ("fp16", "fp16", 128, 64, 64, 4, 4, "leaky_relu", CAPS),
        ("fp32", "fp32", 64, 64, 32, 4, 3, "", CAPS),
        ("bf16", "fp32", 128, 128, 32, 4, 4, "", CAPS),
        ("fp8e4nv", "fp16", 128, 128, 128, 8, 3, "", FP8_CAPS),
        ("fp8e5", "fp16", 128, 256, 128, 8, 3, "", [90, 100]),
    ]:
        nm = f"matmul_{dt}_{bm}x{bn}x{bk}_w{nw}s{ns}" + (f"_{act}" if act else "")
        add(nm, K.matmul_kernel, mm_args(dt, cdt), {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8, "ACT": act},
            (cdiv(M, bm) * cdiv(N, bn), 1, 1), num_warps=nw, num_stages=ns, caps=caps,
            tags=["matmul"] + (["fp8"] if "fp8" in dt else []))
    # matmul with host TMA descriptors
    for dt, cdt, bm, bn, bk, nw, ns, tag, caps in [
        ("fp16", "fp16", 128, 128, 64, 8, 3, "", TMA_CAPS + [80, 89]),
        ("fp16", "fp16", 128, 256, 64, 8, 3, "_128x256x64", [90, 100]),
        ("bf16", "bf16", 128, 128, 64, 4, 4, "", TMA_CAPS),
        ("fp8e4nv", "fp16", 128, 128, 128, 8, 3, "", TMA_CAPS),
    ]:
        args = [D("a_desc", dt, [M, K_], [bm, bk]), D("b_desc", dt, [N, K_], [bn, bk]),
                D("c_desc", cdt, [M, N], [bm, bn], "zeros"),
                S("M", "i32", M), S("N", "i32", N), S("K", "i32", K_)]
        add(f"matmul_tma_{dt}{tag}", K.matmul_tma_kernel, args, {"BM": bm, "BN": bn, "BK": bk},
            (cdiv(M, bm), cdiv(N, bn), 1),
            num_warps=nw, num_stages=ns, caps=caps, tags=["matmul", "tma-descriptor-host"])
    for dt, cdt, bm, bn, bk, nw in [("fp16", "fp16", 128, 128, 64, 8), ("fp8e4nv", "fp16", 128, 128, 128, 8)]:
        args = [P("a_ptr", dt, M * K_), P("b_ptr", dt, N * K_), P("c_ptr", cdt, M * N, "zeros"), S("M", "i32", M),
                S("N", "i32", N), S("K", "i32", K_)]
        add(f"matmul_devdesc_{dt}", K.matmul_device_desc_kernel, args, {"BM": bm, "BN": bn, "BK": bk},
            (cdiv(M, bm), cdiv(N, bn), 1),
            num_warps=nw, num_stages=3, caps=TMA_CAPS, tags=["matmul", "tma-descriptor-device"])
    args = [D("a_desc", "fp16", [M, K_], [128, 64]), D("b_desc", "fp16", [N, K_], [128, 64]),
            D("c_desc", "fp16", [M, N], [128, 128], "zeros"),
            S("M", "i32", M), S("N", "i32", N), S("K", "i32", K_)]
    add("matmul_persistent_tma_fp16", K.matmul_persistent_tma_kernel, args,
        {"BM": 128, "BN": 128, "BK": 64, "NUM_SMS": 132}, (132, 1, 1),
        num_warps=8, num_stages=3, caps=[90, 100], tags=["matmul", "persistent", "tma-descriptor-host"])
    # attention forward
    H, NCTX = 16, 1024
    for hd, bm, bn, nw, ns, causal, caps in [(64, 128, 64, 4, 3, False, CAPS), (64, 128, 64, 8, 3, True, CAPS),
                                             (128, 128, 64, 8, 3, True, [90, 100])]:
        args = [P("Q", "fp16", H * NCTX * hd), P("K", "fp16", H * NCTX * hd), P("V", "fp16", H * NCTX * hd),
                P("Out", "fp16", H * NCTX * hd, "zeros"),
                S("sm_scale", "fp32", 1.0 / hd ** 0.5), S("stride_qh", "i32", NCTX * hd), S("stride_qm", "i32", hd),
                S("N_CTX", "i32", NCTX)]
        add(f"attn_fwd_fp16_d{hd}_w{nw}" + ("_causal" if causal else ""), K.attn_fwd_kernel, args,
            {"HEAD_DIM": hd, "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": causal}, (cdiv(NCTX, bm), H, 1), num_warps=nw,
            num_stages=ns,
            caps=caps, tags=["attention"])


def main():
    define()
    outdir = PTX / "triton"
    ldir = LAUNCH / "triton"
    clean_dir(outdir, "*.ptx")
    clean_dir(ldir, "*.json")
    version = triton.__version__
    records, failures = [], []
    for cfg in sorted(CONFIGS, key=lambda c: c["name"]):
        sig = sig_of(cfg["args"], cfg["constexprs"])
        try:
            src = ASTSource(fn=cfg["fn"], signature=sig, constexprs=cfg["constexprs"])
            k = triton.compile(src, target=GPUTarget("cuda", cfg["cap"], 32),
                               options={"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]})
        except Exception as e:  # noqa: BLE001
            failures.append(f"{cfg['name']}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            continue
        path = outdir / f"{cfg['name']}.ptx"
        path.write_text(k.asm["ptx"])
        md = k.metadata
        sidecar = {
            "ptx": f"ptx/triton/{cfg['name']}.ptx",
            "kernel": md.name,
            "source": f"src/triton/kernels.py::{cfg['fn'].__name__}",
            "target": {"backend": "cuda", "capability": cfg["cap"], "warp_size": 32},
            "signature": sig,
            "constexprs": cfg["constexprs"],
            "args": cfg["args"],
            "grid": cfg["grid"],
            "block": [cfg["num_warps"] * 32, 1, 1],
            "num_warps": cfg["num_warps"],
            "num_stages": cfg["num_stages"],
            "num_ctas": md.num_ctas,
            "shared": md.shared,
            "global_scratch_size": md.global_scratch_size,
            "global_scratch_align": md.global_scratch_align,
            "profile_scratch_size": getattr(md, "profile_scratch_size", 0),
            "tensordesc_meta": getattr(md, "tensordesc_meta", None) or [],
            "hidden_args": ["global_scratch (u64 pointer)", "profile_scratch (u64 pointer)"],
            "seed": 0,
            "notes": ("PTX params: each tensordesc arg expands to a 128-byte CUtensorMap (.param .align 64 .b8[128]) "
                      "followed by its "
                      "shape (i32 per dim) and strides (i64 per dim); "
                      "two hidden pointer params (global/profile scratch) are appended. "
                      "Pass null hidden pointers unless global_scratch_size > 0."),
        }
        write_json(ldir / f"{cfg['name']}.json", sidecar)
        records.append(record(path, "triton", version, features=cfg["tags"] + ["triton"],
                              source=sidecar["source"], launch=f"launch/triton/{cfg['name']}.json",
                              config={"capability": cfg["cap"], "num_warps": cfg["num_warps"],
                                      "num_stages": cfg["num_stages"],
                                      "constexprs": cfg["constexprs"]}))
    update_manifest("triton", records)
    for f in failures:
        print("FAILED", f, file=sys.stderr)
    print(f"triton {version}: {len(records)} PTX files, {len(failures)} failures")
    import shutil
    shutil.rmtree(_cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
