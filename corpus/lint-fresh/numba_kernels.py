"""numba-cuda kernels for lint's fresh whole-file corpus (scripts/make_lint_corpus.py --numba).

Written to reach what corpus/src/numba does not: atomics of several types and operations, shared and
warp reductions with syncwarp, every shfl flavour, fp16 arithmetic, libdevice math on f32/f64, signed
and unsigned division, 3D grids, local arrays, vote/ballot/match, cbrt and fma. Each entry of KERNELS
is (name, function, signature); the generator compiles each for several compute capabilities.
"""

import math

from numba import cuda, float32, float64, int32, int64, uint32, uint64


def atomics_mixed(i32, u32, i64, u64, f32, f64):
    i = cuda.grid(1)
    cuda.atomic.add(i32, 0, 1)
    cuda.atomic.sub(i32, 1, 2)
    cuda.atomic.max(i32, 2, int32(i))
    cuda.atomic.min(u32, 0, uint32(i))
    cuda.atomic.and_(u32, 1, uint32(i))
    cuda.atomic.or_(u32, 2, uint32(i))
    cuda.atomic.xor(u32, 3, uint32(i))
    cuda.atomic.inc(u32, 4, uint32(100))
    cuda.atomic.dec(u32, 5, uint32(100))
    cuda.atomic.add(i64, 0, int64(i))
    cuda.atomic.max(i64, 1, int64(i))
    cuda.atomic.add(u64, 0, uint64(i))
    cuda.atomic.exch(u64, 1, uint64(i))
    cuda.atomic.add(f32, 0, float32(1.5))
    cuda.atomic.max(f32, 1, float32(i))
    cuda.atomic.min(f32, 2, float32(i))
    cuda.atomic.add(f64, 0, float64(2.5))
    cuda.atomic.nanmax(f64, 1, float64(i))
    cuda.atomic.compare_and_swap(i32, 0, int32(i))
    cuda.atomic.cas(u64, 2, uint64(0), uint64(i))


def shared_tree_f64(x, out):
    sm = cuda.shared.array(128, dtype=float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    sm[tid] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 64
    while s > 32:
        if tid < s:
            sm[tid] += sm[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        v = sm[tid] + sm[tid + 32]
        cuda.syncwarp()
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
            off //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = v


def shuffles(xi, xf, xd, out_i, out_f, out_d):
    i = cuda.grid(1)
    lane = cuda.laneid
    a = xi[i]
    b = xf[i]
    c = xd[i]
    out_i[i] = (cuda.shfl_sync(0xFFFFFFFF, a, 0) + cuda.shfl_up_sync(0xFFFFFFFF, a, 1)
                + cuda.shfl_xor_sync(0xFFFFFFFF, a, lane & 7))
    out_f[i] = cuda.shfl_xor_sync(0x0000FFFF, b, 1) + cuda.shfl_down_sync(0xFFFFFFFF, b, 3)
    out_d[i] = cuda.shfl_sync(0xFFFFFFFF, c, 31 - lane) + cuda.shfl_up_sync(0xFFFFFFFF, c, 2)


def votes(x, out):
    i = cuda.grid(1)
    v = x[i]
    mask = cuda.activemask()
    b = cuda.ballot_sync(mask, v > 0)
    out[i, 0] = cuda.all_sync(mask, v > 0)
    out[i, 1] = cuda.any_sync(mask, v < 0)
    out[i, 2] = cuda.eq_sync(mask, v & 1)
    out[i, 3] = b
    out[i, 4] = cuda.match_any_sync(mask, v)
    m, pred = cuda.match_all_sync(mask, v)
    out[i, 5] = m + pred
    out[i, 6] = cuda.popc(b) + cuda.ffs(b)
    cuda.syncwarp(mask)
    out[i, 7] = cuda.lanemask_lt()


def fp16_ops(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        x = a[i]
        y = b[i]
        t = cuda.fp16.hfma(x, y, x)
        t = cuda.fp16.hadd(t, cuda.fp16.hmul(x, y))
        t = cuda.fp16.hsub(t, cuda.fp16.hneg(y))
        t = cuda.fp16.habs(t)
        t = cuda.fp16.hmax(t, cuda.fp16.hmin(x, y))
        if cuda.fp16.hgt(t, x) or cuda.fp16.heq(x, y):
            t = cuda.fp16.hsqrt(cuda.fp16.habs(t))
        t = cuda.fp16.hexp(t) + cuda.fp16.hlog(cuda.fp16.habs(y)) + cuda.fp16.hsin(x) + cuda.fp16.hcos(y)
        out[i] = cuda.fp16.hdiv(t, y)


def math_f32(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = (math.sin(v) + math.cos(v) + math.exp(v) + math.log(v + float32(2.0)) + math.pow(v, float32(1.7))
                  + math.tanh(v) + math.atan2(v, float32(3.0)) + math.sqrt(abs(v)) + math.erf(v) + math.floor(v))


def math_f64(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = (math.sin(v) + math.exp(v) + math.log1p(abs(v)) + math.pow(v, 2.5) + cuda.cbrt(v)
                  + cuda.fma(v, v, 1.0) + math.hypot(v, 2.0) + math.asinh(v) + math.lgamma(abs(v) + 1.0))


def cbrt_fma_f32(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.cbrt(x[i]) + cuda.fma(x[i], y[i], float32(0.5)) + cuda.fma(y[i], y[i], x[i])


def int_divmod(a, b, q, r, uq):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i] | 1
        q[i] = x // y
        r[i] = x % y
        ux = uint64(x)
        uy = uint64(y)
        uq[i] = (ux // uy) + (ux % uint64(10)) + uint64(cuda.popc(x))


def grid3d(a, out):
    x, y, z = cuda.grid(3)
    nx, ny, nz = cuda.gridsize(3)
    if x < a.shape[0] and y < a.shape[1] and z < a.shape[2]:
        out[x, y, z] = a[x, y, z] * (cuda.blockDim.z + cuda.blockIdx.z) + nx + ny * nz


def local_prefix(x, out):
    i = cuda.grid(1)
    acc = cuda.local.array(16, dtype=int64)
    if i < x.shape[0]:
        acc[0] = x[i, 0]
        for k in range(1, 16):
            acc[k] = acc[k - 1] + x[i, k]
        for k in range(16):
            out[i, k] = acc[15 - k]


def shared_2d_transpose(a, out):
    tile = cuda.shared.array((32, 33), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    if x < a.shape[1] and y < a.shape[0]:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    x2 = cuda.blockIdx.y * 32 + tx
    y2 = cuda.blockIdx.x * 32 + ty
    if x2 < out.shape[1] and y2 < out.shape[0]:
        out[y2, x2] = tile[tx, ty]
    cuda.threadfence_block()


def fences_and_clock(out):
    i = cuda.grid(1)
    cuda.nanosleep(uint32(100))
    cuda.threadfence_system()
    cuda.threadfence()
    out[i] = uint64(cuda.laneid) + uint64(cuda.brev(uint32(i))) + uint64(cuda.clz(int32(i)))
    if cuda.syncthreads_or(i & 1):
        out[i] += uint64(1)
    out[i] += uint64(cuda.syncthreads_count(int32(i > 3)) + cuda.syncthreads_and(int32(i > 1)))


KERNELS = [
    ("atomics_mixed", atomics_mixed,
     "void(int32[:], uint32[:], int64[:], uint64[:], float32[:], float64[:])"),
    ("shared_tree_f64", shared_tree_f64, "void(float64[:], float64[:])"),
    ("shuffles", shuffles, "void(int32[:], float32[:], float64[:], int32[:], float32[:], float64[:])"),
    ("votes", votes, "void(int32[:], uint32[:,:])"),
    ("fp16_ops", fp16_ops, "void(float16[:], float16[:], float16[:])"),
    ("math_f32", math_f32, "void(float32[:], float32[:])"),
    ("math_f64", math_f64, "void(float64[:], float64[:])"),
    ("cbrt_fma_f32", cbrt_fma_f32, "void(float32[:], float32[:], float32[:])"),
    ("int_divmod", int_divmod, "void(int64[:], int64[:], int64[:], int64[:], uint64[:])"),
    ("grid3d", grid3d, "void(float32[:,:,:], float32[:,:,:])"),
    ("local_prefix", local_prefix, "void(int64[:,:], int64[:,:])"),
    ("shared_2d_transpose", shared_2d_transpose, "void(float32[:,:], float32[:,:])"),
    ("fences_and_clock", fences_and_clock, "void(uint64[:])"),
]
