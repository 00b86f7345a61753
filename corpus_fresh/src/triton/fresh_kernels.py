"""Triton kernels that corpus/ does not contain (the fresh readability set, scripts/make_fresh_set.py).
Nothing in sugar/ or the style presets was fitted to these."""
import triton
import triton.language as tl


@triton.jit
def linear_bias_relu(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, stride_xm, stride_wk, stride_ym,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(x_ptr + rm[:, None] * stride_xm + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        w = tl.load(w_ptr + (k0 + rk)[:, None] * stride_wk + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, w)
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    y = tl.maximum(acc + bias[None, :].to(tl.float32), 0.0)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], y.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def row_variance(x_ptr, mean_ptr, var_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    s2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        s += x
        s2 += x * x
    mean = tl.sum(s, 0) / N
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, tl.sum(s2, 0) / N - mean * mean)


@triton.jit
def transpose_2d(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[None, :] * M + rm[:, None], x, mask=mask)


@triton.jit
def decode_attention(q_ptr, k_ptr, v_ptr, o_ptr, L, scale, D: tl.constexpr, BL: tl.constexpr):
    h = tl.program_id(0)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + h * D + d).to(tl.float32)
    m = -float("inf")
    den = 0.0
    acc = tl.zeros((D,), dtype=tl.float32)
    for start in range(0, L, BL):
        rows = start + tl.arange(0, BL)
        msk = rows < L
        k = tl.load(k_ptr + h * L * D + rows[:, None] * D + d[None, :], mask=msk[:, None], other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], 1) * scale
        s = tl.where(msk, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, 0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m - m_new)
        v = tl.load(v_ptr + h * L * D + rows[:, None] * D + d[None, :], mask=msk[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        den = den * alpha + tl.sum(p, 0)
        m = m_new
    tl.store(o_ptr + h * D + d, (acc / den).to(tl.float16))


@triton.jit
def cross_entropy_fwd(logits_ptr, labels_ptr, loss_ptr, V, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    label = tl.load(labels_ptr + row)
    m = -float("inf")
    acc = 0.0
    for off in range(0, V, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + row * stride + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, 0))
        acc = acc * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
    target = tl.load(logits_ptr + row * stride + label).to(tl.float32)
    tl.store(loss_ptr + row, tl.log(acc) + m - target)
