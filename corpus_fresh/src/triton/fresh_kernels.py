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


# --- the kinds corpus/ has that the kernels above do not: elementwise, random numbers, fused
# normalisation, atomics, scans with a user combine, fp32/bf16/fp8 matmuls, host and on-device
# tensor descriptors, a persistent matmul, a softmax with a mask, flash-style attention -----------
@triton.jit
def softplus_clamp(x_ptr, y_ptr, n, beta, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    bx = beta * x
    sp = tl.where(bx > 20.0, x, tl.log(1.0 + tl.exp(bx)) / beta)
    tl.store(y_ptr + offs, tl.minimum(tl.maximum(sp, lo), hi).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def gaussian_noise(x_ptr, y_ptr, n, sigma, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    noise = tl.randn(seed, offs)
    keep = tl.rand(seed + 1, offs) > 0.1
    tl.store(y_ptr + offs, tl.where(keep, x + sigma * noise, 0.0), mask=m)


@triton.jit
def residual_rmsnorm(x_ptr, res_ptr, w_ptr, y_ptr, out_res_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    h = tl.load(x_ptr + row * N + cols, mask=m, other=0.0).to(tl.float32) \
        + tl.load(res_ptr + row * N + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(out_res_ptr + row * N + cols, h.to(out_res_ptr.dtype.element_ty), mask=m)
    inv = 1.0 / tl.sqrt(tl.sum(h * h, 0) / N + eps)
    w = tl.load(w_ptr + cols, mask=m, other=1.0).to(tl.float32)
    tl.store(y_ptr + row * N + cols, (h * inv * w).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def segment_sum_atomic(seg_ptr, val_ptr, out_ptr, count_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rm = rows < n
    seg = tl.load(seg_ptr + rows, mask=rm, other=0)
    d = tl.arange(0, D)
    v = tl.load(val_ptr + rows[:, None] * D + d[None, :], mask=rm[:, None], other=0.0)
    tl.atomic_add(out_ptr + seg[:, None] * D + d[None, :], v, mask=rm[:, None])
    tl.atomic_add(count_ptr + seg, 1, mask=rm)


@triton.jit
def _argmax_step(v1, i1, v2, i2):
    take = v2 > v1
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@triton.jit
def running_argmax(x_ptr, val_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=-float("inf"))
    v, i = tl.associative_scan((x, cols), 0, _argmax_step)
    tl.store(val_ptr + row * n + cols, v, mask=cols < n)
    tl.store(idx_ptr + row * n + cols, i, mask=cols < n)


@triton.jit
def cumprod_rows(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.arange(0, BN)
    x = tl.load(x_ptr + r[:, None] * BN + c[None, :])
    tl.store(y_ptr + r[:, None] * BN + c[None, :], tl.cumprod(x, axis=1))


@triton.jit
def batched_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A: [batch, M, K], B: [batch, K, N], C: [batch, M, N], all contiguous
    bid = tl.program_id(2)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + bid * M * K + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + bid * K * N + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + bid * M * N + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def tma_gemm_scaled(a_desc, b_desc, c_desc, K, alpha, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # host tensor descriptors: A [M, K], B [K, N] (N-major), C [M, N]
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
    c_desc.store([om, on], (acc * alpha).to(c_desc.dtype))


@triton.jit
def devdesc_gemm_relu(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # tensor descriptors made on the device (a global scratch buffer at launch)
    ad = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    bd = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    cd = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = tl.program_id(1) * BM
    on = tl.program_id(0) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK):
        acc = tl.dot(ad.load([om, k]), bd.load([k, on]), acc)
    cd.store([om, on], tl.maximum(acc, 0.0).to(cd.dtype))


@triton.jit
def persistent_gemm_bias(a_desc, b_desc, c_desc, bias_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                         BK: tl.constexpr, GRID: tl.constexpr):
    # one program per SM walks the output tiles (host descriptors; B is [K, N])
    tiles_n = tl.cdiv(N, BN)
    total = tl.cdiv(M, BM) * tiles_n
    for t in tl.range(tl.program_id(0), total, GRID, flatten=True):
        om = (t // tiles_n) * BM
        on = (t % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in tl.range(0, K, BK):
            acc = tl.dot(a_desc.load([om, k]), b_desc.load([k, on]), acc)
        bias = tl.load(bias_ptr + on + tl.arange(0, BN)).to(tl.float32)
        c_desc.store([om, on], (acc + bias[None, :]).to(c_desc.dtype))


@triton.jit
def masked_scaled_softmax(x_ptr, y_ptr, n_cols, stride, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    valid = (cols < n_cols) & (cols <= row)  # causal: row r sees columns 0..r
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32) * scale
    x = tl.where(valid, x, -float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * stride + cols, (e / tl.sum(e, 0)).to(y_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def alibi_attention(q_ptr, k_ptr, v_ptr, o_ptr, T, slope_ptr, scale, D: tl.constexpr, BQ: tl.constexpr,
                    BKV: tl.constexpr):
    # flash-style forward with an ALiBi distance bias; q/k/v/o are [heads, T, D]
    h = tl.program_id(1)
    qi = tl.program_id(0) * BQ + tl.arange(0, BQ)
    d = tl.arange(0, D)
    base = h * T * D
    q = tl.load(q_ptr + base + qi[:, None] * D + d[None, :], mask=qi[:, None] < T, other=0.0)
    slope = tl.load(slope_ptr + h)
    m_i = tl.full((BQ,), -float("inf"), tl.float32)
    l_i = tl.zeros((BQ,), tl.float32)
    acc = tl.zeros((BQ, D), tl.float32)
    for s in range(0, T, BKV):
        kj = s + tl.arange(0, BKV)
        kt = tl.load(k_ptr + base + kj[None, :] * D + d[:, None], mask=kj[None, :] < T, other=0.0)
        qk = tl.dot(q, kt) * scale - slope * tl.abs(qi[:, None] - kj[None, :]).to(tl.float32)
        qk = tl.where(kj[None, :] < T, qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        corr = tl.exp(m_i - m_new)
        v = tl.load(v_ptr + base + kj[:, None] * D + d[None, :], mask=kj[:, None] < T, other=0.0)
        acc = acc * corr[:, None] + tl.dot(p.to(v.dtype), v)
        l_i = l_i * corr + tl.sum(p, 1)
        m_i = m_new
    tl.store(o_ptr + base + qi[:, None] * D + d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty),
             mask=qi[:, None] < T)
