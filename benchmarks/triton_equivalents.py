"""Simple Triton kernels equivalent to the fifteen kernelir problems, for the
compile-time benchmark (bench_compile_ir.py) and, where a GPU exists, for
kernelir/gpu_check.py's reference timing.  Each entry of TRITON is
(jit function, signature, constexprs, num_warps) at the problems' default sizes."""
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def scalar_add(x, y, n, alpha, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m) + alpha, mask=m)


@triton.jit
def vector_add(x, y, z, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(z + o, tl.load(x + o, mask=m) + tl.load(y + o, mask=m), mask=m)


@triton.jit
def scale_shift(x, y, n, a, b, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(x + o, mask=m).to(tl.float32)
    tl.store(y + o, (a * v + b).to(tl.float16), mask=m)


@triton.jit
def relu_mul(x, y, z, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    xv = tl.load(x + o, mask=m, other=0.0).to(tl.float32)
    yv = tl.load(y + o, mask=m, other=0.0).to(tl.float32)
    tl.store(z + o, (tl.maximum(xv, 0.0) * yv).to(tl.bfloat16), mask=m)


@triton.jit
def block_sum(x, out, n, DIV: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, n, BLOCK):
        o = s + tl.arange(0, BLOCK)
        acc += tl.load(x + o, mask=o < n, other=0.0)
    total = tl.sum(acc, 0)
    if DIV:
        total = total / n.to(tl.float32)
    tl.store(out, total)


@triton.jit
def row_sum(x, out, rows, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, cols, BLOCK):
        o = s + tl.arange(0, BLOCK)
        acc += tl.load(x + r * cols + o, mask=o < cols, other=0.0)
    tl.store(out + r, tl.sum(acc, 0))


@triton.jit
def rmsnorm(x, w, y, rows, cols, eps, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, cols, BLOCK):
        o = s + tl.arange(0, BLOCK)
        v = tl.load(x + r * cols + o, mask=o < cols, other=0.0)
        acc += v * v
    inv = 1.0 / tl.sqrt(tl.sum(acc, 0) / cols + eps)
    for s in range(0, cols, BLOCK):
        o = s + tl.arange(0, BLOCK)
        m = o < cols
        v = tl.load(x + r * cols + o, mask=m, other=0.0)
        tl.store(y + r * cols + o, v * inv * tl.load(w + o, mask=m, other=0.0), mask=m)


@triton.jit
def row_softmax(x, y, rows, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    m = o < cols
    v = tl.load(x + r * cols + o, mask=m, other=-float("inf"))
    e = tl.exp(v - tl.max(v, 0))
    tl.store(y + r * cols + o, e / tl.sum(e, 0), mask=m)


@triton.jit
def l2norm(x, y, rows, cols, eps, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    m = o < cols
    v = tl.load(x + r * cols + o, mask=m, other=0.0).to(tl.float32)
    inv = 1.0 / tl.maximum(tl.sqrt(tl.sum(v * v, 0)), eps)
    tl.store(y + r * cols + o, (v * inv).to(tl.float16), mask=m)


@triton.jit
def matmul(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           GROUP: tl.constexpr):
    pid = tl.program_id(0)
    npm, npn = tl.cdiv(M, BM), tl.cdiv(N, BN)
    width = GROUP * npn
    first = (pid // width) * GROUP
    gsize = tl.minimum(npm - first, GROUP)
    pm = first + (pid % width) % gsize
    pn = (pid % width) // gsize
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(A + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(B + (k0 + rk)[:, None] * N + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def attention(Q, K, V, O, S, D: tl.constexpr, BS: tl.constexpr, SCALE: tl.constexpr):  # noqa: E741 (Q, K, V, O: attention's names)
    r = tl.program_id(0)
    d = tl.arange(0, D)
    j = tl.arange(0, BS)
    jm = j < S
    q = tl.load(Q + r * D + d)
    k = tl.load(K + j[:, None] * D + d[None, :], mask=jm[:, None], other=0.0)
    s = tl.where(jm, tl.sum(q[None, :] * k, 1) * SCALE, -float("inf"))
    p = tl.exp(s - tl.max(s, 0))
    v = tl.load(V + j[:, None] * D + d[None, :], mask=jm[:, None], other=0.0)
    o = tl.sum(p[:, None] * v, 0) / tl.sum(p, 0)
    tl.store(O + r * D + d, o)


def _sig(**kw):
    return kw


F32, F16, BF16, I32, FP = "*fp32", "*fp16", "*bf16", "i32", "fp32"
TRITON = {
    "scalar_add": (scalar_add, _sig(x=F32, y=F32, n=I32, alpha=FP), {"BLOCK": 1024}, 4),
    "vector_add": (vector_add, _sig(x=F32, y=F32, z=F32, n=I32), {"BLOCK": 1024}, 4),
    "scale_shift": (scale_shift, _sig(x=F16, y=F16, n=I32, a=FP, b=FP), {"BLOCK": 1024}, 4),
    "relu_mul": (relu_mul, _sig(x=BF16, y=BF16, z=BF16, n=I32), {"BLOCK": 1024}, 4),
    "array_sum": (block_sum, _sig(x=F32, out=F32, n=I32), {"DIV": False, "BLOCK": 1024}, 8),
    "sum_2p24": (block_sum, _sig(x=F32, out=F32, n=I32), {"DIV": False, "BLOCK": 4096}, 32),
    "mean": (block_sum, _sig(x=F32, out=F32, n=I32), {"DIV": True, "BLOCK": 1024}, 8),
    "row_sum": (row_sum, _sig(x=F32, out=F32, rows=I32, cols=I32), {"BLOCK": 1024}, 4),
    "rmsnorm": (rmsnorm, _sig(x=F32, w=F32, y=F32, rows=I32, cols=I32, eps=FP), {"BLOCK": 1024}, 8),
    "row_softmax": (row_softmax, _sig(x=F32, y=F32, rows=I32, cols=I32), {"BLOCK": 1024}, 4),
    "l2norm": (l2norm, _sig(x=F16, y=F16, rows=I32, cols=I32, eps=FP), {"BLOCK": 1024}, 4),
    "matmul_512": (matmul, _sig(A=F32, B=F32, C=F32, M=I32, N=I32, K=I32),
                   {"BM": 64, "BN": 64, "BK": 32, "GROUP": 8}, 4),
    "matmul_rect": (matmul, _sig(A=F32, B=F32, C=F32, M=I32, N=I32, K=I32),
                    {"BM": 32, "BN": 32, "BK": 32, "GROUP": 1}, 4),
    "attention_d64": (attention, _sig(Q=F32, K=F32, V=F32, O=F32, S=I32),
                      {"D": 64, "BS": 128, "SCALE": 0.125}, 4),
    "attention_d128": (attention, _sig(Q=F32, K=F32, V=F32, O=F32, S=I32),
                       {"D": 128, "BS": 256, "SCALE": 128 ** -0.5}, 4),
}


def compile_triton(name: str, cap: int = 90) -> str:
    """Compile the Triton equivalent of ``name`` offline; returns its PTX."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn, sig, consts, warps = TRITON[name]
    signature = {**sig, **{c: "constexpr" for c in consts}}
    src = ASTSource(fn=fn, signature=signature, constexprs=consts)
    k = triton.compile(src, target=GPUTarget("cuda", cap, 32), options={"num_warps": warps})
    return k.asm["ptx"]


def compile_triton_timed(name: str, cap: int = 90) -> tuple[float, float]:
    """Compile like ``compile_triton``; (seconds to PTX, seconds to cubin), from Triton's own
    per-stage compile times (its compilation listener): IR building and the stages up to
    and including "ptx", then all of them (ptxas included)."""
    captured = {}

    def listener(*, times, **_kw):
        captured["times"] = times

    old = triton.knobs.compilation.listener
    triton.knobs.compilation.listener = listener
    try:
        compile_triton(name, cap)
    finally:
        triton.knobs.compilation.listener = old
    t = captured["times"]
    to_ptx, total = t.ir_initialization, t.ir_initialization
    for stage, us in t.lowering_stages:
        total += us
        if stage in ("ttir", "ttgir", "llir", "ptx"):
            to_ptx += us
    return to_ptx / 1e6, (total + t.store_results) / 1e6
