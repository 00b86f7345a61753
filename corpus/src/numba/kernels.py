"""numba-cuda kernels owned by the ptx2py corpus (compiled to PTX offline by build_numba.py)."""
import math

from numba import cuda, float32, int32, uint32


def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def vec_add_2d(a, b, c):
    i, j = cuda.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        c[i, j] = a[i, j] + b[i, j]


def block_sum(x, out):
    sm = cuda.shared.array(256, dtype=float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    sm[tid] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 128
    while s > 0:
        if tid < s:
            sm[tid] += sm[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, sm[0])


def warp_reduce_max(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else -math.inf
    off = 16
    while off > 0:
        v = max(v, cuda.shfl_down_sync(0xFFFFFFFF, v, off))
        off //= 2
    if cuda.laneid == 0:
        cuda.atomic.max(out, 0, v)


def histogram(data, hist):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < data.size:
        cuda.atomic.add(hist, data[i] & 255, 1)
        i += stride


def matmul_shared(A, B, C):
    TPB = 16
    sA = cuda.shared.array((16, 16), dtype=float32)
    sB = cuda.shared.array((16, 16), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.0)
    for t in range((A.shape[1] + TPB - 1) // TPB):
        sA[ty, tx] = A[x, t * TPB + ty] if x < A.shape[0] and t * TPB + ty < A.shape[1] else 0.0
        sB[ty, tx] = B[t * TPB + tx, y] if y < B.shape[1] and t * TPB + tx < B.shape[0] else 0.0
        cuda.syncthreads()
        for k in range(TPB):
            acc += sA[k, tx] * sB[ty, k]
        cuda.syncthreads()
    if x < C.shape[0] and y < C.shape[1]:
        C[x, y] = acc


def mandelbrot(img, xmin, xmax, ymin, ymax, iters):
    x, y = cuda.grid(2)
    h, w = img.shape
    if x < w and y < h:
        cr = xmin + x * (xmax - xmin) / w
        ci = ymin + y * (ymax - ymin) / h
        zr = 0.0
        zi = 0.0
        n = 0
        while n < iters and zr * zr + zi * zi < 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        img[y, x] = n


def softmax_rows(x, out):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(128, dtype=float32)
    m = -math.inf
    for c in range(tid, x.shape[1], 128):
        m = max(m, x[row, c])
    sm[tid] = m
    cuda.syncthreads()
    if tid == 0:
        mm = sm[0]
        for k in range(1, 128):
            mm = max(mm, sm[k])
        sm[0] = mm
    cuda.syncthreads()
    m = sm[0]
    cuda.syncthreads()
    s = 0.0
    for c in range(tid, x.shape[1], 128):
        s += math.exp(x[row, c] - m)
    sm[tid] = s
    cuda.syncthreads()
    if tid == 0:
        t = 0.0
        for k in range(128):
            t += sm[k]
        sm[0] = t
    cuda.syncthreads()
    for c in range(tid, x.shape[1], 128):
        out[row, c] = math.exp(x[row, c] - m) / sm[0]


def xorshift_fill(out, seed):
    i = cuda.grid(1)
    if i < out.size:
        s = uint32(seed) ^ uint32(i * 2654435761)
        s ^= s << uint32(13)
        s ^= s >> uint32(17)
        s ^= s << uint32(5)
        out[i] = s


def cas_counter(lock, counter):
    if cuda.threadIdx.x == 0:
        while cuda.atomic.compare_and_swap(lock, 0, 1) != 0:
            pass
        cuda.threadfence()
        counter[0] += 1
        cuda.threadfence()
        cuda.atomic.exch(lock, 0, 0)


def stencil_1d(a, out):
    i = cuda.grid(1)
    n = a.size
    if 1 <= i < n - 1:
        out[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]


def fp16_scale(x, out, s):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * s


def int_math(a, out):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        out[i] = cuda.popc(v) + cuda.clz(v) + cuda.brev(v) + (v // int32(7)) + (v % int32(13))


def local_array_sort(x, out):
    i = cuda.grid(1)
    buf = cuda.local.array(8, dtype=float32)
    if i < x.shape[0]:
        for k in range(8):
            buf[k] = x[i, k]
        for a in range(8):
            for b in range(7 - a):
                if buf[b] > buf[b + 1]:
                    buf[b], buf[b + 1] = buf[b + 1], buf[b]
        for k in range(8):
            out[i, k] = buf[k]
