"""numpy references for the corpus kernels with launch sidecars, written from their sources in
corpus/src (scripts/emulate_corpus.py, corpus/scripts/corpus_check.py).

A reference gets the run's seeded inputs, its outputs, scalars and launch shape (a reduced
launch computes only what its CTAs cover) and returns, per buffer, what the buffer must hold
after the run: `Exact` (bit for bit), `Close` (|got - want| <= atol + rtol |want|, for float
results whose rounding the kernel leaves open: fused multiply-adds, `.approx` functions, a sum's
order). `ORDER_DEPENDENT` buffers take a value that depends on the order of atomics (an exch, a
first-wins CAS, a float sum): the reference checks them by predicate and the schedule check
leaves them out. Kernels without an entry are checked only for the same result under every
schedule; NO_REFERENCE says why for those that have a sidecar.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Exact:
    want: np.ndarray


@dataclass
class Close:
    want: np.ndarray
    rtol: float
    atol: float
    bf16: bool = False       # the buffer holds bf16 bit patterns (uint16)


@dataclass
class Ctx:
    inp: dict            # buffer name -> seeded initial contents (storage dtype, flat)
    out: dict            # buffer name -> contents after the run
    scalars: dict        # scalar name -> value of the run
    shapes: dict         # array name -> shape (numba arrays)
    grid: list
    block: list
    constexprs: dict = field(default_factory=dict)   # a Triton kernel's constexprs

    @property
    def threads(self) -> int:
        """Threads of a 1-D launch."""
        return self.grid[0] * self.block[0]

    def a(self, name):
        x = self.inp[name]
        return x.reshape(self.shapes[name]) if name in self.shapes else x

    def zeros(self, name):
        return np.zeros_like(self.a(name))


@dataclass
class Ref:
    fn: object                                   # Ctx -> {buffer: Exact | Close}
    order_dependent: frozenset = field(default_factory=frozenset)


def check(ref: Ref, ctx: Ctx) -> list[str]:
    """The buffers that differ from the reference, each with its first differing index."""
    bad = []
    for name, exp in ref.fn(ctx).items():
        got = ctx.out[name].reshape(np.shape(exp.want))
        want = np.asarray(exp.want).astype(got.dtype) if isinstance(exp, Exact) else np.asarray(exp.want)
        if isinstance(exp, Exact):
            diff = got.view(np.uint8).reshape(got.shape + (-1,)) != want.view(np.uint8).reshape(want.shape + (-1,))
            diff = diff.any(-1) if diff.ndim else diff
        else:
            g = _bf16_values(got) if exp.bf16 else got.astype(np.float64)
            w = want.astype(np.float64)
            diff = ~(np.abs(g - w) <= exp.atol + exp.rtol * np.abs(w))
        if np.any(diff):
            i = tuple(int(v) for v in np.argwhere(diff)[0])
            bad.append(f"{name}: {int(np.sum(diff))} of {diff.size} differ, first at {list(i)}: "
                       f"got {got[i]!r}, want {want[i]!r}")
    return bad


# ------------------------------------------------------------------------------------ helpers
def _prefix(c: Ctx, name: str, m: int, values, exact=True, rtol=0.0, atol=0.0):
    want = c.a(name).copy()          # what the run did not cover keeps its initial contents
    want[:m] = values
    return Exact(want) if exact else Close(want, rtol, atol)


def _bf16_values(bits):
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _bitrev32(v):
    v = v.astype(np.uint32)
    return np.array([int(f"{int(x):032b}"[::-1], 2) for x in v], np.uint32)


def _clz32(v):
    v = v.astype(np.uint32)
    return np.array([32 - int(x).bit_length() for x in v], np.uint32)


def _popc32(v):
    return np.array([bin(int(x)).count("1") for x in v.astype(np.uint32)], np.uint32)


def _fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def _collatz(x):
    s = 0
    while x != 1 and s < 1000:
        x = 3 * x + 1 if x & 1 else x // 2
        s += 1
    return s


def _sum_close(values, dtype=np.float32, rtol=1e-5):
    v = np.asarray(values, np.float64)
    return Close(np.array([v.sum()], dtype), rtol, rtol * float(np.abs(v).sum()) + 1e-30)


# ------------------------------------------------------------------------------------ numba
def _saxpy(c):
    m = min(c.a("out").size, c.threads)
    a, x, y = c.scalars["a"], c.a("x")[:m], c.a("y")[:m]
    tol = 1e-6 if x.dtype == np.float32 else 1e-14
    return {"out": _prefix(c, "out", m, a * x.astype(np.float64) + y, False, tol,
                           tol * (abs(a) * np.abs(x) + np.abs(y)).max())}


def _vec_add_2d(c):
    i, j = c.grid[0] * c.block[0], c.grid[1] * c.block[1]
    want = c.zeros("c")
    want[:i, :j] = (c.a("a") + c.a("b"))[:i, :j]
    return {"c": Exact(want)}


def _numba_block_sum(c):
    return {"out": _sum_close(c.a("x")[: c.threads])}


def _warp_reduce_max(c):
    return {"out": Exact(np.array([max(0.0, c.a("x")[: c.threads].max())], np.float32))}


def _numba_histogram(c):
    return {"hist": Exact(np.bincount(c.a("data") & 255, minlength=256).astype(np.int32))}


def _matmul_shared(c):
    i, j = c.grid[0] * c.block[0], c.grid[1] * c.block[1]
    prod = c.a("A").astype(np.float64) @ c.a("B").astype(np.float64)
    want = np.zeros_like(prod)
    want[:i, :j] = prod[:i, :j]
    return {"C": Close(want.astype(np.float32), 1e-5, 1e-5)}


def _softmax_rows(c):
    rows = c.grid[0]
    x = c.a("x").astype(np.float64)[:rows]
    e = np.exp(x - x.max(1, keepdims=True))
    want = np.zeros(c.shapes["out"], np.float64)
    want[:rows] = e / e.sum(1, keepdims=True)
    return {"out": Close(want, 1e-5, 1e-7)}


def _xorshift(c):
    m = min(c.a("out").size, c.threads)
    i = np.arange(m, dtype=np.uint64)
    # numba widens uint32 shifts to 64 bits: s is a uint64 from the first `^=`, cut at the store
    s = np.uint64(c.scalars["seed"]) ^ ((i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF))
    s ^= s << np.uint64(13)
    s ^= s >> np.uint64(17)
    s ^= s << np.uint64(5)
    return {"out": _prefix(c, "out", m, (s & np.uint64(0xFFFFFFFF)).astype(np.uint32))}


def _one_per_cta(lock, counter):
    def fn(c):
        return {counter: Exact(np.array([c.grid[0]], np.int32)), lock: Exact(np.zeros(1, np.int32))}
    return fn


def _stencil_1d(c):
    a = c.a("a")
    m = min(a.size - 1, c.threads)
    want = np.zeros_like(a)
    want[1:m] = 0.25 * a[: m - 1] + 0.5 * a[1:m] + 0.25 * a[2: m + 1]
    return {"out": Close(want, 1e-15, 1e-15)}


def _fp16_scale(c):
    m = min(c.a("x").size, c.threads)
    s = np.float32(np.float16(c.scalars["s"]))
    return {"out": _prefix(c, "out", m, (c.a("x")[:m].astype(np.float32) * s).astype(np.float16))}


def _int_math(c):
    m = min(c.a("a").size, c.threads)
    v = c.a("a")[:m].astype(np.int64)
    r = _popc32(v).astype(np.int64) + _clz32(v) + _bitrev32(v) + v // 7 + v % 13
    return {"out": _prefix(c, "out", m, r.astype(np.uint32).view(np.int32))}


def _local_array_sort(c):
    rows = min(c.shapes["x"][0], c.threads)
    want = c.zeros("out")
    want[:rows] = np.sort(c.a("x")[:rows], axis=1)
    return {"out": Exact(want)}


# ------------------------------------------------------------------------------------ clang
def _device_calls(c):
    m = min(c.scalars["n"], c.threads)
    steps = np.zeros_like(c.a("steps"))
    steps[:m] = [_collatz(i + 1) for i in range(m)]
    return {"steps": Exact(steps), "vals": Exact(c.zeros("vals"))}    # c_table: never set, zeros


def _map2(c):
    n, f, x, y = c.scalars["n"], c.scalars["f"], c.a("x"), c.a("y")
    want = y.copy()
    if x.dtype.kind == "i":
        want[:n] = (f * x[:n].astype(np.int64) + y[:n]).astype(np.int32)
        return {"y": Exact(want)}
    want = want.astype(np.float64)
    want[:n] = f * x[:n].astype(np.float64) + y[:n]
    tol = 1e-6 if x.dtype == np.float32 else 1e-14
    return {"y": Close(want, tol, tol * 10)}


def _relu_inplace(c):
    m = min(c.scalars["n"], c.threads)
    x = c.a("x").copy()
    x[:m] = np.where(x[:m] > 0, x[:m], np.float32(0))
    return {"x": Exact(x)}


def _fast_math(c):
    m = min(c.scalars["n"], c.threads)
    x = c.a("x")[:m].astype(np.float64)
    want = np.zeros(c.a("y").size)
    want[:m] = np.exp2(x) + 1 / np.sqrt(x * x + 1) + np.maximum(x, 0)
    return {"y": Close(want, 1e-5, 1e-6)}


def _sgemm(tile, tm):
    def fn(c):
        m, n, k = c.scalars["M"], c.scalars["N"], c.scalars["K"]
        prod = c.a("A").reshape(m, k).astype(np.float64) @ c.a("B").reshape(k, n).astype(np.float64)
        want = np.zeros((m, n))
        rows, cols = c.grid[1] * tile * tm, c.grid[0] * tile
        want[:rows, :cols] = prod[:rows, :cols]
        return {"C": Close(want.reshape(-1), 1e-5, 1e-5)}
    return fn


def _grid_stride_sum(c):
    return {"out": _sum_close(c.a("x")[: c.scalars["n"]])}


def _int_histogram(c):
    return {"hist": Exact(np.bincount(c.a("data")[: c.scalars["n"]], minlength=256).astype(np.uint32))}


def _cas_max(c):
    m = min(c.scalars["n"], c.threads)
    return {"target": Exact(np.array([max(0, int(c.a("x")[:m].max()))], np.int32))}


# ------------------------------------------------------------------------------------- llvm
def _apply_kernel(c):          # kind 0: relu; one CTA, so i = %tid.x
    assert c.scalars["kind"] == 0 and c.grid[0] == 1
    t = c.block[0]
    x = c.a("x").copy()
    x[:t] = np.where(x[:t] > 0, x[:t], np.float32(0))
    f = c.zeros("f")
    f[:t] = [_fib(i & 15) for i in range(t)]
    return {"x": Exact(x), "f": Exact(f)}


def _block_reduce_sum(c):
    return {"out": _sum_close(c.a("x")[: min(c.scalars["n"], c.threads)])}


def _axpy(limit):
    def fn(c):
        m = limit(c)
        x, y, a = c.a("x"), c.a("y"), c.scalars["alpha"]
        want = y.astype(np.float64)
        want[:m] = a * x[:m].astype(np.float64) + y[:m]
        tol = 1e-7 if x.dtype == np.float32 else 1e-15
        return {"y": Close(want, tol, tol)}
    return fn


def _vadd(c):
    m = min(c.scalars["n"], c.threads)
    return {"c": _prefix(c, "c", m, c.a("a")[:m] + c.a("b")[:m])}


def _vec4_norm(c):
    v = c.a("in").reshape(-1, 4).astype(np.float64)
    m = min(len(v), c.grid[0] * 256)
    want = np.zeros_like(v)
    want[:m] = v[:m] / np.sqrt((v[:m] ** 2).sum(1, keepdims=True))
    return {"out": Close(want.reshape(-1), 2e-6, 1e-7)}


def _half_axpy(c):
    t = c.block[0]
    x, y = c.a("x").astype(np.float32), c.a("y").astype(np.float32)
    want = c.a("y").astype(np.float64)
    want[:t] = np.float32(np.float16(c.scalars["a"])) * x[:t] + y[:t]
    return {"y": Close(want, 1e-3, 1e-3)}         # f16 mul then add, or one f16 fma: an f16 ulp apart


def _float_misc(c):
    t = c.block[0]
    v = c.a("x").astype(np.float64)
    want = v.copy()
    want[:t] = np.maximum(np.minimum(np.sqrt(np.abs(v[:t])), np.exp2(v[:t])), 0.5) / v[:t]
    return {"x": Close(want, 2e-6, 0.0)}


def _bits(c):
    t = c.block[0]
    v = c.a("x")[:t].astype(np.uint32)
    br = _bitrev32(v)
    fs = (v << np.uint32(7)) | (br >> np.uint32(25))
    s2 = (_popc32(v) + _clz32(v)) ^ fs
    s3 = (s2 // np.uint32(7)).astype(np.int64) + np.fmod(v.view(np.int32).astype(np.int64), 13)
    s3 = s3.astype(np.uint32).view(np.int32)
    x = c.a("x").copy()
    x[:t] = s3
    # one warp: each lane's cas, then every lane's exch to 0, then every lane's max
    return {"x": Exact(x), "lock": Exact(np.array([max(0, int(s3.max()))], np.int32))}


# ------------------------------------------------------------------------------------- nvcc
def _atomic_zoo(c):
    m = min(c.scalars["n"], c.threads)
    got = c.out
    i = np.arange(m)
    xor = int(np.bitwise_xor.reduce(i)) if m else 0
    ints = [m, -m, max(0, m - 1), min(0, -(m - 1)), 0, -1 if m >= 32 else sum(1 << (j & 31) for j in range(m)),
            xor, int(got["ints"][7]) if 0 <= got["ints"][7] < m else -1, m % 1001, (1001 - m) % 1001, m, m]
    u1 = int(got["u64"][1]) if got["u64"][1] < m else 2**64 - 1
    x = c.a("x")[:m]
    return {"ints": Exact(np.array(ints, np.int64).astype(np.int32)),
            "u64": Exact(np.array([m * (m - 1) // 2, u1], np.uint64)),
            "floats": Close(np.array([x.astype(np.float64).sum(), max(0.0, x.max())]), 1e-5,
                            1e-5 * float(np.abs(x).sum())),
            "doubles": Close(np.array([x.astype(np.float64).sum()]), 1e-12, 1e-12 * float(np.abs(x).sum()))}


def _libcu_atomic_ref(c):
    m = min(c.scalars["n"], c.threads)
    got = c.out["data"]
    counts = np.bincount(np.arange(m) % 16, minlength=16)
    first = [int(got[16 + j]) if got[16 + j] % 16 == j and got[16 + j] < m else -1 for j in range(16)]
    return {"data": Exact(np.concatenate([counts, first]).astype(np.int32))}


def _zeros(*names):
    """Kernels whose weights are a __constant__ array the sidecar cannot set: zeros out."""
    return lambda c: {n: Exact(c.zeros(n)) for n in names}


def _jacobi3d(c):
    nx, ny, nz = c.scalars["nx"], c.scalars["ny"], c.scalars["nz"]
    a = c.a("in").reshape(nz, ny, nx)
    want = np.zeros_like(a)
    xs, ys = min(nx - 1, c.grid[0] * c.block[0] + 1), min(ny - 1, c.grid[1] * c.block[1] + 1)
    s = np.s_[1:nz - 1, 1:ys, 1:xs]
    want[s] = (a[1:nz - 1, 1:ys, 0:xs - 1] + a[1:nz - 1, 1:ys, 2:xs + 1] + a[1:nz - 1, 0:ys - 1, 1:xs]
               + a[1:nz - 1, 2:ys + 1, 1:xs] + a[0:nz - 2, 1:ys, 1:xs] + a[2:nz, 1:ys, 1:xs]) / 6.0
    return {"out": Close(want.reshape(-1), 1e-15, 0.0)}


def _gemm_regtile(c):
    m, n, k = c.scalars["M"], c.scalars["N"], c.scalars["K"]
    a, b, c0 = (c.a(x).astype(np.float64) for x in ("A", "B", "C"))
    want = c.scalars["alpha"] * (a.reshape(m, k) @ b.reshape(k, n)) + c.scalars["beta"] * c0.reshape(m, n)
    tol = 1e-5 if c.a("A").dtype == np.float32 else 1e-13
    return {"C": Close(want.reshape(-1), tol, tol)}


def _cub_scan(c):
    x = c.a("in").reshape(c.grid[0], -1).astype(np.int64)
    return {"out": Exact((np.cumsum(x, axis=1) - x).astype(np.int32).reshape(-1))}


def _cub_reduce(c):
    x = c.a("in").reshape(c.grid[0], -1).astype(np.float64)
    return {"out": Close(x.sum(1), 1e-5, 1e-5 * float(np.abs(x).sum()))}


def _cub_histogram(c):
    return {"hist": Exact(np.bincount(c.a("in")[: c.grid[0] * 512], minlength=256).astype(np.uint32))}


def _cub_warp_max(c):
    warps = c.grid[0] * c.block[0] // 32
    return {"out": Exact(c.a("in")[: warps * 32].reshape(warps, 32).max(1))}


def _cub_radix_sort(c):
    """SortBlockedToStriped then a striped store: each block's keys in rank order (stable, so
    equal keys keep their values' order), every (key, value) pair kept."""
    keys, vals = c.a("keys").reshape(c.grid[0], -1), c.a("vals").reshape(c.grid[0], -1)
    order = np.argsort(keys, axis=1, kind="stable")
    return {"keys": Exact(np.take_along_axis(keys, order, 1).reshape(-1)),
            "vals": Exact(np.take_along_axis(vals, order, 1).reshape(-1))}


def _checked_index(c):
    m = min(c.scalars["n"], c.threads)
    out = c.zeros("out")
    out[:m] = c.a("idx")[:m].astype(np.float32)
    return {"out": Exact(out)}


def _rdc_fib(c):
    m = min(c.scalars["n"], c.threads)
    out = c.zeros("out")
    out[:m] = [_fib(i % 20) for i in range(m)]
    return {"out": Exact(out)}


def _vector_add(c):
    m = min(c.scalars["n"], c.threads)
    return {"c": _prefix(c, "c", m, c.a("a")[:m] + c.a("b")[:m])}


def _float4_copy(c):
    """mma_sync.cu pipeline_primitives_copy: thread i < n copies float4 in[i] to out[i] through
    shared memory (cp.async)."""
    m = 4 * min(c.scalars["n"], c.threads)
    return {"out": _prefix(c, "out", m, c.a("in")[:m])}


def _shared_tree_max(c):
    x, n, span = c.a("x"), c.scalars["n"], 2 * c.block[0]
    out = c.zeros("out")
    for b in range(c.grid[0]):
        part = x[b * span: min((b + 1) * span, n)]
        out[b] = part.max() if part.size else -np.inf
    return {"out": Exact(out)}


def _histogram256(c):
    return {"hist": Exact(np.bincount(c.a("data")[: c.scalars["n"]], minlength=256).astype(np.uint32))}


def _dot_double(c):
    n = c.scalars["n"]
    p = c.a("a")[:n] * c.a("b")[:n]
    return {"out": Close(np.array([p.sum()]), 1e-12, 1e-12 * float(np.abs(p).sum()))}


def _rmsnorm_half(c):
    rows, cols = c.grid[0], c.scalars["cols"]
    x = c.a("x").reshape(-1, cols).astype(np.float64)
    want = c.a("y").reshape(-1, cols).astype(np.float64)
    r = 1 / np.sqrt((x[:rows] ** 2).mean(1, keepdims=True) + c.scalars["eps"])
    want[:rows] = x[:rows] * r * c.a("w")[:cols].astype(np.float64)
    return {"y": Close(want.reshape(-1), 2e-3, 1e-3)}     # f16 output; rsqrtf is .approx


def _saxpy_vec4(c):
    m = 4 * min(c.scalars["n4"], c.threads)
    x, y = c.a("x").astype(np.float64), c.a("y").astype(np.float64)
    want = y.copy()
    want[:m] = c.scalars["alpha"] * x[:m] + y[:m]
    return {"y": Close(want, 1e-6, 1e-6)}


def _half2_gelu(c):
    m = 2 * min(c.scalars["n2"], c.threads)
    v = c.a("x")[:m].astype(np.float64)
    want = np.zeros(c.a("y").size)
    want[:m] = 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))
    return {"y": Close(want, 2e-3, 1e-3)}       # f16 output; tanhf


def _bf16_silu(c):
    m = min(c.scalars["n"], c.threads)
    v = _bf16_values(c.a("x")[:m])
    want = np.zeros(c.a("y").size)
    want[:m] = v / (1 + np.exp(-v))
    return {"y": Close(want, 1e-2, 1e-2, bf16=True)}   # bf16 output: 8 bits of mantissa


def _transcendental(c):
    m = min(c.scalars["n"], c.threads)
    x = c.a("x")[:m]
    want = np.zeros_like(c.a("y"))
    want[:m] = np.sin(x) * np.cos(x) + np.exp(-x * x) + np.log1p(np.abs(x)) + np.sqrt(np.abs(x))
    return {"y": Close(want, 1e-13, 1e-13)}


def _int_ops(c):
    m = min(c.scalars["n"], c.threads)
    v = c.a("a")[:m].astype(np.uint32)
    funnel = (~v << np.uint32(7)) | (v >> np.uint32(25))        # __funnelshift_l(v, ~v, 7)
    hi = ((v.astype(np.uint64) * np.uint64(2654435761)) >> np.uint64(32)).astype(np.uint32)
    r = _popc32(v) + _clz32(v) + _bitrev32(v) + v + funnel + hi   # __byte_perm(v, v >> 3, 0x3210) == v
    return {"out": _prefix(c, "out", m, r)}


def _binary(op):
    def fn(c):
        n = c.scalars["n"]
        out = c.zeros("out")
        out[:n] = op(c.a("a")[:n], c.a("b")[:n])
        return {"out": Exact(out)}
    return fn


def _saxpy_t(c):
    m = min(c.scalars["n"], c.threads)
    x, y = c.a("x"), c.a("y")
    want = y.astype(np.float64)
    want[:m] = c.scalars["alpha"] * x[:m].astype(np.float64) + y[:m]
    tol = 1e-6 if x.dtype == np.float32 else 1e-15
    return {"y": Close(want, tol, tol)}


def _int_sum(c):
    return {"out": Exact(np.array([c.a("x")[: c.scalars["n"]].astype(np.int64).sum()], np.int64).astype(np.int32))}


def _hillis_steele(c):
    b, n = c.block[0], c.scalars["n"]
    x = c.a("in").astype(np.float64)
    out, sums = np.zeros(c.a("out").size), np.zeros(c.a("block_sums").size)
    for g in range(c.grid[0]):
        part = np.where(np.arange(g * b, (g + 1) * b) < n, x[g * b:(g + 1) * b], 0.0)
        scan = np.cumsum(part)
        k = max(0, min(b, n - g * b))
        out[g * b: g * b + k] = scan[:k]
        sums[g] = scan[-1]
    return {"out": Close(out, 1e-5, 1e-5), "block_sums": Close(sums, 1e-5, 1e-5)}


def _softmax_warp(cols, rtol, atol):
    def fn(c):
        rows = min(c.scalars["rows"], c.grid[0] * c.block[0] // 32)
        x = c.a("x").reshape(-1, cols).astype(np.float64)
        want = np.zeros_like(x)
        e = np.exp(x[:rows] - x[:rows].max(1, keepdims=True))
        want[:rows] = e / e.sum(1, keepdims=True)
        return {"y": Close(want.reshape(-1), rtol, atol)}
    return fn


def _layernorm(c):
    rows, cols = c.grid[0], c.scalars["cols"]
    x = c.a("x").reshape(-1, cols).astype(np.float64)
    want = np.zeros_like(x)
    mean = x[:rows].mean(1, keepdims=True)
    var = (x[:rows] ** 2).mean(1, keepdims=True) - mean ** 2
    want[:rows] = (x[:rows] - mean) / np.sqrt(var + c.scalars["eps"]) * c.a("gamma")[:cols] + c.a("beta")[:cols]
    return {"y": Close(want.reshape(-1), 1e-4, 1e-4)}


def _bf16_round(x):
    """float64 -> bf16 bit patterns, round to nearest even (via f32, as Triton's store)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + np.uint64(0x7FFF) + ((b >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)


def _triton_add(c):
    m = min(c.scalars["n_elements"], c.grid[0] * c.constexprs["BLOCK"])
    x, y = c.a("x_ptr")[:m], c.a("y_ptr")[:m]
    if x.dtype == np.uint16:                     # bf16: f32 sum, rounded once
        values = _bf16_round(_bf16_values(x) + _bf16_values(y))
    else:
        values = x + y
    return {"out_ptr": _prefix(c, "out_ptr", m, values)}


def _triton_gelu(c):
    m = min(c.scalars["n_elements"], c.grid[0] * c.constexprs["BLOCK"])
    raw = c.a("x_ptr")[:m]
    bf16 = raw.dtype == np.uint16
    x = _bf16_values(raw) if bf16 else raw.astype(np.float64)
    want = np.zeros(c.a("out_ptr").size)
    want[:m] = 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    return {"out_ptr": Close(want, 1e-2 if bf16 else 2e-3, 1e-2 if bf16 else 1e-3, bf16=bf16)}


def _triton_cas_lock(c):
    """Programs take the spin lock one at a time and bump the counter: it ends at the program
    count, the lock free. The data slots are not checked: every thread loads the counter, one
    stores it, and no barrier orders the other warps' loads after that store, so which slot a
    warp writes depends on the warps' interleaving (on the GPU too)."""
    return {"count_ptr": Exact(np.array([c.grid[0]], np.int32)), "lock_ptr": Exact(np.zeros(1, np.int32))}


EW = "_ZN6ptx2py2ew"
GEMM = "_ZN6ptx2py4gemm12gemm_regtileI{t}{t}Li{bm}ELi{bn}ELi{bk}ELi{tm}ELi{tn}EEEviiiT0_PKT_S5_S2_PS3_"

# (producer, source stem, kernel) -> Ref; numba kernels are keyed by stem alone (their entry
# names carry a per-build hash)
REFS = {
    ("numba", "saxpy_f32", None): Ref(_saxpy),
    ("numba", "saxpy_f64", None): Ref(_saxpy),
    ("numba", "vec_add_2d", None): Ref(_vec_add_2d),
    ("numba", "block_sum", None): Ref(_numba_block_sum, frozenset({"out"})),
    ("numba", "warp_reduce_max", None): Ref(_warp_reduce_max),
    ("numba", "histogram", None): Ref(_numba_histogram),
    ("numba", "matmul_shared", None): Ref(_matmul_shared),
    ("numba", "softmax_rows", None): Ref(_softmax_rows),
    ("numba", "xorshift_fill", None): Ref(_xorshift),
    ("numba", "cas_counter", None): Ref(_one_per_cta("lock", "counter")),
    ("numba", "stencil_1d", None): Ref(_stencil_1d),
    ("numba", "fp16_scale", None): Ref(_fp16_scale),
    ("numba", "int_math", None): Ref(_int_math),
    ("numba", "local_array_sort", None): Ref(_local_array_sort),
    ("clang", "device_calls", "device_calls"): Ref(_device_calls),
    ("clang", "elementwise", "_ZN6corpus4map2IfNS_4AxpyIfEEEEvT0_PKT_PS4_i"): Ref(_map2),
    ("clang", "elementwise", "_ZN6corpus4map2IdNS_4AxpyIdEEEEvT0_PKT_PS4_i"): Ref(_map2),
    ("clang", "elementwise", "_ZN6corpus4map2IiNS_4AxpyIiEEEEvT0_PKT_PS4_i"): Ref(_map2),
    ("clang", "elementwise", "relu_inplace"): Ref(_relu_inplace),
    ("clang", "elementwise", "fast_math"): Ref(_fast_math),
    ("clang", "matmul", "_ZN6corpus4gemm5sgemmILi16ELi4EEEviiiPKfS3_Pf"): Ref(_sgemm(16, 4)),
    ("clang", "matmul", "_ZN6corpus4gemm5sgemmILi32ELi8EEEviiiPKfS3_Pf"): Ref(_sgemm(32, 8)),
    ("clang", "reduce", "_Z9block_sumILi256EEvPKfPfi"): Ref(_grid_stride_sum, frozenset({"out"})),
    ("clang", "reduce", "_Z9block_sumILi1024EEvPKfPfi"): Ref(_grid_stride_sum, frozenset({"out"})),
    ("clang", "reduce", "int_histogram"): Ref(_int_histogram),
    ("clang", "reduce", "cas_max"): Ref(_cas_max),
    ("llvm", "device_calls", "apply_kernel"): Ref(_apply_kernel),
    ("llvm", "reduce_shfl", "block_reduce_sum"): Ref(_block_reduce_sum, frozenset({"out"})),
    ("llvm", "saxpy_loop", "saxpy_grid_stride"): Ref(_axpy(lambda c: c.scalars["n"])),
    ("llvm", "saxpy_loop", "daxpy"): Ref(_axpy(lambda c: min(c.scalars["n"], c.threads))),
    ("llvm", "vadd", "vadd"): Ref(_vadd),
    ("llvm", "vector_math", "vec4_norm"): Ref(_vec4_norm),
    ("llvm", "vector_math", "half_axpy"): Ref(_half_axpy),
    ("llvm", "vector_math", "float_misc"): Ref(_float_misc),
    ("llvm", "vector_math", "bits"): Ref(_bits),
    ("nvcc", "elementwise", "vector_add"): Ref(_vector_add),
    ("nvcc", "reduce", "shared_tree_max"): Ref(_shared_tree_max),
    ("nvcc", "mma_sync", "pipeline_primitives_copy"): Ref(_float4_copy),
    ("nvcc", "reduce", "histogram256"): Ref(_histogram256),
    ("nvcc", "reduce", "dot_double"): Ref(_dot_double, frozenset({"out"})),
    ("nvcc", "scan_softmax", "rmsnorm_half"): Ref(_rmsnorm_half),
    ("nvcc", "elementwise", EW + "10saxpy_vec4EfPK6float4PS1_i"): Ref(_saxpy_vec4),
    ("nvcc", "elementwise", EW + "10half2_geluEPK7__half2PS1_i"): Ref(_half2_gelu),
    ("nvcc", "elementwise", EW + "9bf16_siluEPK13__nv_bfloat16PS1_i"): Ref(_bf16_silu),
    ("nvcc", "elementwise", EW + "14transcendentalEPKdPdi"): Ref(_transcendental),
    ("nvcc", "elementwise", EW + "7int_opsEPKjPji"): Ref(_int_ops),
    ("nvcc", "elementwise", EW + "6binaryIfNS0_3AddIfEEEEvPKT_S6_PS4_l"): Ref(_binary(np.add)),
    ("nvcc", "elementwise", EW + "6binaryIdNS0_3MulIdEEEEvPKT_S6_PS4_l"): Ref(_binary(np.multiply)),
    ("nvcc", "elementwise", EW + "6binaryIiNS0_3MaxIiEEEEvPKT_S6_PS4_l"): Ref(_binary(np.maximum)),
    ("nvcc", "elementwise", EW + "6binaryI6__halfNS0_3AddIS2_EEEEvPKT_S7_PS5_l"): Ref(_binary(np.add)),
    ("nvcc", "elementwise", EW + "5saxpyIfEEvT_PKS2_PS2_i"): Ref(_saxpy_t),
    ("nvcc", "elementwise", EW + "5saxpyIdEEvT_PKS2_PS2_i"): Ref(_saxpy_t),
    ("nvcc", "reduce", "cg_reduce"): Ref(_int_sum),
    **{("nvcc", "reduce", f"_Z9block_sumILi{b}EEvPKfPfi"): Ref(_grid_stride_sum, frozenset({"out"}))
       for b in (128, 256, 1024)},
    **{("nvcc", "scan_softmax", f"_Z18hillis_steele_scanILi{b}EEvPKfPfS2_i"): Ref(_hillis_steele)
       for b in (256, 1024)},
    ("nvcc", "scan_softmax", "_Z12softmax_warpIfLi1024EEvPKT_PS0_i"): Ref(_softmax_warp(1024, 1e-5, 1e-7)),
    ("nvcc", "scan_softmax", "_Z12softmax_warpI6__halfLi2048EEvPKT_PS1_i"): Ref(_softmax_warp(2048, 2e-3, 1e-4)),
    **{("nvcc", "scan_softmax", f"_Z9layernormILi{b}EEvPKfS1_S1_Pfif"): Ref(_layernorm) for b in (256, 512)},
    ("triton", "*", "add_kernel"): Ref(_triton_add),
    ("triton", "*", "gelu_kernel"): Ref(_triton_gelu),
    ("triton", "*", "atomic_cas_lock_kernel"): Ref(_triton_cas_lock, frozenset({"data_ptr"})),
    ("nvcc", "atomics", "atomic_zoo"): Ref(_atomic_zoo, frozenset({"ints", "u64", "floats", "doubles"})),
    ("nvcc", "atomics", "spin_lock_counter"): Ref(_one_per_cta("lock", "counter")),
    ("nvcc", "atomics", "libcu_atomic_ref"): Ref(_libcu_atomic_ref, frozenset({"data"})),
    ("nvcc", "stencil", "conv5x5"): Ref(_zeros("out")),
    ("nvcc", "stencil", "jacobi3d"): Ref(_jacobi3d),
    ("nvcc", "stencil", "_Z9stencil2dILi32ELi8EEvPKfPfii"): Ref(_zeros("out")),
    ("nvcc", "stencil", "_Z9stencil2dILi16ELi16EEvPKfPfii"): Ref(_zeros("out")),
    **{("nvcc", "matmul_tiled", GEMM.format(t=t, bm=bm, bn=bn, bk=bk, tm=tm, tn=tn)): Ref(_gemm_regtile)
       for t, bm, bn, bk, tm, tn in [("f", 64, 64, 8, 4, 4), ("f", 128, 128, 8, 8, 8), ("f", 128, 64, 16, 8, 4),
                                     ("d", 64, 64, 8, 4, 4), ("d", 64, 64, 16, 8, 8)]},
    ("nvcc", "cub_block", "_Z15warp_reduce_maxPKfPf"): Ref(_cub_warp_max),
    ("nvcc", "cub_block", "_Z15block_histogramPKhPj"): Ref(_cub_histogram),
    ("nvcc", "cub_block", "_Z16block_reduce_sumILi128ELi4EEvPKfPf"): Ref(_cub_reduce),
    ("nvcc", "cub_block", "_Z16block_reduce_sumILi256ELi8EEvPKfPf"): Ref(_cub_reduce),
    ("nvcc", "cub_block", "_Z20block_scan_exclusiveILi128ELi4EEvPKiPi"): Ref(_cub_scan),
    ("nvcc", "cub_block", "_Z20block_scan_exclusiveILi256ELi16EEvPKiPi"): Ref(_cub_scan),
    ("nvcc", "cub_block", "_Z16block_radix_sortILi128ELi8EEvPjPf"): Ref(_cub_radix_sort),
    ("nvcc", "printf_kernels", "checked_index"): Ref(_checked_index),
    ("nvcc", "rdc_main", "rdc_fib"): Ref(_rdc_fib),
}

NO_REFERENCE = {
    ("numba", "mandelbrot"): "the escape-time loop's f64 fused multiply-adds decide the iteration count at "
                             "the set's boundary; numpy has no fma",
    ("nvcc", "printf_kernels"): "hello and print_values only print",
}


def reference_for(producer: str, stem: str, kernel: str) -> Ref | None:
    """Triton references are keyed by kernel alone ("*": every build and configuration)."""
    return REFS.get((producer, stem, None if producer == "numba" else kernel)) or REFS.get((producer, "*", kernel))
