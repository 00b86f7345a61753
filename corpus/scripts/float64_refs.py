"""float64 numpy references for the corpus's Triton and Pallas kernels whose interpreter result
is not trusted (make_oracle_refs.FAULTS: bf16 and fp8 conversions, bf16 tl.dot), written from
their sources (corpus/src): computed in float64 from the seeded inputs at the reduced launch and
rounded once to the output's storage dtype by ml_dtypes (round to nearest even). Each takes
(reduced launch spec, seeded inputs) and returns {buffer: contents after the run} for the
buffers the kernel writes; keyed by the Triton source function, or the Pallas KERNELS name."""
from __future__ import annotations

import ml_dtypes
import numpy as np

STORE = {"bf16": ml_dtypes.bfloat16, "bfloat16": ml_dtypes.bfloat16, "fp16": np.float16, "float16": np.float16,
         "fp32": np.float32, "float32": np.float32, "fp8e4nv": ml_dtypes.float8_e4m3fn, "fp8e5": ml_dtypes.float8_e5m2}


class Launch:
    """The reduced launch's scalars, constexprs, grid and buffers, decoded to float64."""

    def __init__(self, small: dict, inputs: dict):
        self.args = {a["name"]: a for a in small["args"]}
        self.s = {n: a["value"] for n, a in self.args.items() if a["kind"] == "scalar"}
        self.c = dict(small.get("constexprs") or {})
        self.grid = [int(g) for g in small["grid"]]
        self.inputs = inputs

    def f64(self, name: str) -> np.ndarray:
        data = self.inputs[name]
        return data.view(STORE[self.args[name]["dtype"]]).astype(np.float64)

    def store(self, name: str, flat_idx: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The buffer after writing `values` (float64) at `flat_idx`, rounded once to its dtype."""
        out = self.inputs[name].copy()
        out[flat_idx] = np.asarray(values).astype(STORE[self.args[name]["dtype"]]).view(out.dtype)
        return out


def _elementwise(fn, x: str, out: str):
    def ref(small, inputs):
        L = Launch(small, inputs)
        m = min(L.s["n_elements"], L.grid[0] * L.c["BLOCK"])
        idx = np.arange(m)
        return {out: L.store(out, idx, fn(L, idx))}
    return ref


def _gelu(L, idx):
    x = L.f64("x_ptr")[idx]
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _triton_rmsnorm(small, inputs):
    L = Launch(small, inputs)
    n, stride = L.s["N"], L.s["stride"]
    rows = np.arange(L.grid[0])
    idx = (rows[:, None] * stride + np.arange(n)[None, :]).reshape(-1)
    x = L.f64("X")[idx].reshape(len(rows), n)
    y = x / np.sqrt((x * x).mean(1, keepdims=True) + L.s["eps"]) * L.f64("W")[:n]
    return {"Y": L.store("Y", idx, y.reshape(-1))}


def _grouped_tile(pid: int, m: int, n: int, bm: int, bn: int, group: int) -> tuple[int, int]:
    """matmul_kernel's program -> (tile row, tile column): GROUP_M rows of tiles at a time."""
    pm, pn = -(-m // bm), -(-n // bn)
    in_group = group * pn
    first = pid // in_group * group
    size = min(pm - first, group)
    return first + (pid % in_group) % size, (pid % in_group) // size


def _tiles_out(L, out, tiles, a, b, bm, bn, act=None):
    m, n = L.s["M"], L.s["N"]
    idx_all, val_all = [], []
    for tm, tn in tiles:
        rows, cols = np.arange(tm * bm, min((tm + 1) * bm, m)), np.arange(tn * bn, min((tn + 1) * bn, n))
        c = a[rows] @ b[:, cols]
        if act == "leaky_relu":
            c = np.where(c >= 0, c, 0.01 * c)
        idx_all.append((rows[:, None] * n + cols[None, :]).reshape(-1))
        val_all.append(c.reshape(-1))
    return {out: L.store(out, np.concatenate(idx_all), np.concatenate(val_all))}


def _triton_matmul(small, inputs):
    """C tile = A[:, :K] @ B[:K, :] (row-major strides of the launch), K the reduced extent."""
    L = Launch(small, inputs)
    m, n, k = L.s["M"], L.s["N"], L.s["K"]
    a = L.f64("a_ptr")[: m * L.s["stride_am"]].reshape(m, -1)[:, :k]
    b = L.f64("b_ptr")[: k * L.s["stride_bk"]].reshape(k, -1)
    tiles = [_grouped_tile(p, m, n, L.c["BM"], L.c["BN"], L.c["GROUP_M"]) for p in range(L.grid[0])]
    return _tiles_out(L, "c_ptr", tiles, a, b, L.c["BM"], L.c["BN"], L.c.get("ACT"))


def _desc_matmul(a_name, b_name, c_name, k_stride_is_k):
    """matmul_tma_kernel / matmul_device_desc_kernel: CTA (x, y) computes C tile (x, y) of A (M x K)
    @ B (N x K)^T over ceil(K / BK) * BK columns: a host descriptor holds the full K columns
    (its loads past K read real data), an on-device one is K wide (zeros past K)."""
    def ref(small, inputs):
        L = Launch(small, inputs)
        m, n, k, bk = L.s["M"], L.s["N"], L.s["K"], L.c["BK"]
        if k_stride_is_k:
            a, b = L.f64(a_name)[: m * k].reshape(m, k), L.f64(b_name)[: n * k].reshape(n, k)
        else:
            width = L.args[a_name]["shape"][1]
            cols = min(-(-k // bk) * bk, width)
            a = L.f64(a_name).reshape(m, width)[:, :cols]
            b = L.f64(b_name).reshape(n, width)[:, :cols]
        tiles = [(x, y) for y in range(L.grid[1]) for x in range(L.grid[0])]
        return _tiles_out(L, c_name, tiles, a, b.T, L.c["BM"], L.c["BN"])
    return ref


# Pallas: the reduced grid's programs write their blocks (corpus/src/pallas/kernels.py)
def _pallas_add(block):
    def ref(small, inputs):
        L = Launch(small, inputs)
        idx = np.arange(L.grid[0] * block)
        return {"out0": L.store("out0", idx, L.f64("in0")[idx] + L.f64("in1")[idx])}
    return ref


def _pallas_rmsnorm(small, inputs):
    L = Launch(small, inputs)
    r, c = L.args["in0"]["shape"]
    x = L.f64("in0").reshape(r, c)[: L.grid[0]]
    y = x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6) * L.f64("in1")[:c]
    return {"out0": L.store("out0", np.arange(x.size), y.reshape(-1))}


def _pallas_matmul(bm, bn):
    def ref(small, inputs):
        L = Launch(small, inputs)
        (m, k), (_, n) = L.args["in0"]["shape"], L.args["in1"]["shape"]
        L.s.update(M=m, N=n)
        a, b = L.f64("in0").reshape(m, k), L.f64("in1").reshape(k, n)
        tiles = [(x, y) for y in range(L.grid[1]) for x in range(L.grid[0])]
        return _tiles_out(L, "out0", tiles, a, b, bm, bn)
    return ref


FLOAT64_REFS = {
    "add_kernel": _elementwise(lambda L, i: L.f64("x_ptr")[i] + L.f64("y_ptr")[i], "x_ptr", "out_ptr"),
    "gelu_kernel": _elementwise(_gelu, "x_ptr", "out_ptr"),
    "rmsnorm_kernel": _triton_rmsnorm,
    "matmul_kernel": _triton_matmul,
    "matmul_tma_kernel": _desc_matmul("a_desc", "b_desc", "c_desc", False),
    "matmul_device_desc_kernel": _desc_matmul("a_ptr", "b_ptr", "c_ptr", True),
    "add_bf16_b4096_w8": _pallas_add(4096),
    "rmsnorm_bf16_2048": _pallas_rmsnorm,
    "matmul_bf16_128x128x64_w8": _pallas_matmul(128, 128),
}
