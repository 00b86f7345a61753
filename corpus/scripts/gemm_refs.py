"""numpy references for the corpus's tensor-core GEMMs and float-atomic sums, written from their
CUDA sources (corpus/src/nvcc), with error bounds derived from the accumulation order, for the
sweeps of corpus_check.run_case (corpus_refs.py holds the element-wise and exact references): a kernel whose float
outputs legitimately depend on the schedule
(float atomics) or whose products the sweep should check is compared with its reference under
every schedule. Each reference returns {"ok", "max_err", "what"}; the bound is stated with it.

f32 accumulation bound (the engine's documented order, emulate/semantics/matrix.py and wmma.py):
one f32 rounding per MMA instruction of partial sums <= sum_k |a*b|, a GPU's order as much again:
|C - A @ B| <= 2 * (K / k_step) * 2**-24 * (|A| @ |B|) + 2**-30.
"""
from __future__ import annotations

import re

import numpy as np
from gallery import host_values

U = 2.0 ** -24          # f32 unit roundoff


def _values(spec):
    return {a["name"]: a.get("value") for a in spec["args"]}, {a["name"]: a["dtype"] for a in spec["args"]}


def _grid(spec):
    g = list(spec.get("grid", [1])) + [1, 1]
    b = list(spec.get("block", [1])) + [1, 1]
    return g[:3], b[:3]


def _verdict(got, want, bound, what):
    err = np.abs(got - want)
    return {"ok": bool((err <= bound).all()), "max_err": float(err.max()) if err.size else 0.0, "what": what}


def _gemm_bound(a, b, k_step=16):
    """a (M, K), b (K, N)."""
    return 2 * max(a.shape[1] / k_step, 1) * U * (np.abs(a) @ np.abs(b)) + 2.0 ** -30


def wmma_gemm_f16(outputs, spec):
    """mma_sync.cu wmma_gemm_f16: warp (warpM, warpN) computes C[16 warpM.., 16 warpN..] of
    A (M x K, row-major) @ B (stored N x K, the col-major K x N operand); the rest of C stays 0."""
    v, _ = _values(spec)
    m, n, k = v["M"], v["N"], v["K"]
    (gx, gy, _), (bx, by, _) = _grid(spec)
    a = outputs["A"].astype(np.float64)[: m * k].reshape(m, k)
    b = outputs["B"].astype(np.float64)[: n * k].reshape(n, k).T
    rows = min(gx * bx // 32 * 16, m)
    cols = min(gy * by * 16, n)
    want = np.zeros((m, n))
    bound = np.zeros((m, n))
    want[:rows, :cols] = (a @ b)[:rows, :cols]
    bound[:rows, :cols] = _gemm_bound(a, b)[:rows, :cols]
    got = outputs["C"][: m * n].reshape(m, n).astype(np.float64)
    return _verdict(got, want, bound, f"C[:{rows}, :{cols}] = A @ B (K={k}), zeros elsewhere")


def _tf32_rna(x):
    """cvt.rna.tf32.f32: 10 mantissa bits, round to nearest, ties away from zero (finite x)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)).view(np.float32).astype(np.float64)


def wmma_gemm_bf16_tf32(outputs, spec):
    """mma_sync.cu wmma_gemm_bf16_tf32 (one warp): C[0:256] = A (16 x K, ld K) @ B (K x 16, ld 16)
    in bf16; C[256:512] = tf32(X[0:128]) (16 x 8) @ tf32(X[128:256]) (8 x 16)."""
    v, dt = _values(spec)
    k = v["K"]
    a = host_values(outputs["A"], dt["A"])[: 16 * k].reshape(16, k)
    b = host_values(outputs["B"], dt["B"])[: k * 16].reshape(k, 16)
    x = outputs["X"].astype(np.float32)
    ta, tb = _tf32_rna(x[:128]).reshape(16, 8), _tf32_rna(x[128:256]).reshape(8, 16)
    c = outputs["C"].astype(np.float64)
    want = np.concatenate([(a @ b).reshape(-1), (ta @ tb).reshape(-1)])
    bound = np.concatenate([_gemm_bound(a, b).reshape(-1), _gemm_bound(ta, tb, 8).reshape(-1)])
    return _verdict(c[:512], want, bound, f"bf16 16x{k}x16 and tf32 16x8x16 products")


def mma_pipeline_gemm(outputs, spec):
    """mma_sync.cu mma_pipeline_gemm<STAGES>: CTA (x, y) computes the 64x64 tile C[64y.., 64x..]
    of A (M x K, row-major) @ B (K x N, row-major); the rest of C stays 0."""
    v, _ = _values(spec)
    m, n, k = v["M"], v["N"], v["K"]
    (gx, gy, _), _ = _grid(spec)
    a = outputs["A"].astype(np.float64)[: m * k].reshape(m, k)
    b = outputs["B"].astype(np.float64)[: k * n].reshape(k, n)
    rows, cols = min(64 * gy, m), min(64 * gx, n)
    want, bound = np.zeros((m, n)), np.zeros((m, n))
    want[:rows, :cols] = (a @ b)[:rows, :cols]
    bound[:rows, :cols] = _gemm_bound(a, b)[:rows, :cols]
    got = outputs["C"][: m * n].reshape(m, n).astype(np.float64)
    return _verdict(got, want, bound, f"C[:{rows}, :{cols}] = A @ B (K={k}), zeros elsewhere")


def warp_specialized_sum(outputs, spec):
    """wgmma_tma_sm90.cu warp_specialized_sum<STAGES>: CTA c sums rows [64 c tiles, 64 (c+1) tiles)
    of x (64 columns) into out[0]: each of 256 consumer threads adds tiles*4096/256 elements in
    f32 in order, then one float atomicAdd a thread, in the order the schedule gives. Bound: the
    longest chain of f32 additions from an element to out[0] is m = tiles*16 + 256*CTAs
    additions, so |out - sum x| <= m * 2**-24 * sum |x| (first order, any order)."""
    v, _ = _values(spec)
    (gx, _, _), _ = _grid(spec)
    tiles = v["tiles"]
    x = outputs["x"].astype(np.float64).reshape(-1, 64)[: 64 * tiles * gx]
    chain = tiles * 4096 // 256 + 256 * gx
    bound = chain * U * np.abs(x).sum()
    return _verdict(np.array([outputs["out"][0]], np.float64), np.array([x.sum()]), bound,
                    f"out[0] = sum of {x.size} elements within {chain} * 2**-24 * sum|x|")


# kernel name (regular expression, full match) -> reference
REFERENCES = {
    r"wmma_gemm_f16": wmma_gemm_f16,
    r"wmma_gemm_bf16_tf32": wmma_gemm_bf16_tf32,
    r"_Z17mma_pipeline_gemmILi\d+EEvPK6__halfS2_Pfiii": mma_pipeline_gemm,
    r"_ZN6ptx2py4sm9020warp_specialized_sumILi\d+EEEv14CUtensorMap_stPfi": warp_specialized_sum,
}


def reference_for(kernel: str):
    return next((f for rx, f in REFERENCES.items() if re.fullmatch(rx, kernel)), None)
