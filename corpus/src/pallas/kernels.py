"""JAX Pallas (Triton backend) kernels owned by the ptx2py corpus.

Each entry of KERNELS maps a name to (jax function, list of input ShapeDtypeStructs). build_pallas.py
lowers them for CUDA without a GPU, extracts the Triton IR from the `__gpu$xla.gpu.triton` custom
call and compiles it to PTX with Triton.
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton


def _params(num_warps=4, num_stages=2):
    return pltriton.CompilerParams(num_warps=num_warps, num_stages=num_stages)


# --- elementwise -------------------------------------------------------------------------------
def _add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def add(x, y, block=1024, num_warps=4):
    spec = pl.BlockSpec((block,), lambda i: (i,))
    return pl.pallas_call(_add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // block,),
                          in_specs=[spec, spec], out_specs=spec, compiler_params=_params(num_warps))(x, y)


def _gelu_kernel(x_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    o_ref[...] = (0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))).astype(o_ref.dtype)


def gelu(x, block=2048, num_warps=8):
    spec = pl.BlockSpec((block,), lambda i: (i,))
    return pl.pallas_call(_gelu_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // block,),
                          in_specs=[spec], out_specs=spec, compiler_params=_params(num_warps))(x)


# --- softmax / norms ---------------------------------------------------------------------------
def _softmax_kernel(x_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    m = jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    o_ref[...] = (e / jnp.sum(e, axis=-1, keepdims=True)).astype(o_ref.dtype)


def softmax(x, rows_per_block=4, num_warps=4):
    r, c = x.shape
    spec = pl.BlockSpec((rows_per_block, c), lambda i: (i, 0))
    return pl.pallas_call(_softmax_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(r // rows_per_block,),
                          in_specs=[spec], out_specs=spec, compiler_params=_params(num_warps))(x)


def _layernorm_kernel(x_ref, w_ref, b_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    xc = x - mean
    var = jnp.mean(xc * xc, axis=-1, keepdims=True)
    y = xc * jax.lax.rsqrt(var + eps) * w_ref[...].astype(jnp.float32) + b_ref[...].astype(jnp.float32)
    o_ref[...] = y.astype(o_ref.dtype)


def layernorm(x, w, b, eps=1e-5, num_warps=8):
    r, c = x.shape
    row = pl.BlockSpec((1, c), lambda i: (i, 0))
    vec = pl.BlockSpec((1, c), lambda i: (0, 0))
    return pl.pallas_call(functools.partial(_layernorm_kernel, eps=eps), out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(r,), in_specs=[row, vec, vec], out_specs=row, compiler_params=_params(num_warps))(x, w, b)


def _rmsnorm_kernel(x_ref, w_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    y = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w_ref[...].astype(jnp.float32)
    o_ref[...] = y.astype(o_ref.dtype)


def rmsnorm(x, w, num_warps=4):
    r, c = x.shape
    row = pl.BlockSpec((1, c), lambda i: (i, 0))
    vec = pl.BlockSpec((1, c), lambda i: (0, 0))
    return pl.pallas_call(_rmsnorm_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(r,),
                          in_specs=[row, vec], out_specs=row, compiler_params=_params(num_warps))(x, w)


# --- matmul ------------------------------------------------------------------------------------
def _matmul_kernel(x_ref, y_ref, o_ref, *, bk, k):
    acc = jnp.zeros(o_ref.shape, jnp.float32)

    def body(i, acc):
        xs = x_ref[:, pl.ds(i * bk, bk)]
        ys = y_ref[pl.ds(i * bk, bk), :]
        return acc + pl.dot(xs, ys)

    acc = jax.lax.fori_loop(0, k // bk, body, acc)
    o_ref[...] = acc.astype(o_ref.dtype)


def matmul(x, y, bm=64, bn=64, bk=32, num_warps=4, num_stages=3):
    m, k = x.shape
    _, n = y.shape
    return pl.pallas_call(functools.partial(_matmul_kernel, bk=bk, k=k), out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
                          grid=(m // bm, n // bn),
                          in_specs=[pl.BlockSpec((bm, k), lambda i, j: (i, 0)), pl.BlockSpec((k, bn), lambda i, j: (0, j))],
                          out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
                          compiler_params=_params(num_warps, num_stages))(x, y)


# --- reductions --------------------------------------------------------------------------------
def _row_sum_max_kernel(x_ref, s_ref, m_ref):
    x = x_ref[...].astype(jnp.float32)
    s_ref[...] = jnp.sum(x, axis=1)
    m_ref[...] = jnp.max(x, axis=1)


def row_sum_max(x, rows_per_block=16, num_warps=4):
    r, c = x.shape
    vec = pl.BlockSpec((rows_per_block,), lambda i: (i,))
    return pl.pallas_call(_row_sum_max_kernel,
                          out_shape=(jax.ShapeDtypeStruct((r,), jnp.float32), jax.ShapeDtypeStruct((r,), jnp.float32)),
                          grid=(r // rows_per_block,), in_specs=[pl.BlockSpec((rows_per_block, c), lambda i: (i, 0))],
                          out_specs=(vec, vec), compiler_params=_params(num_warps))(x)


def _sds(shape, dtype):
    return jax.ShapeDtypeStruct(shape, dtype)


KERNELS = {
    "add_f32": (add, [_sds((1 << 20,), jnp.float32)] * 2),
    "add_bf16_b4096_w8": (functools.partial(add, block=4096, num_warps=8), [_sds((1 << 20,), jnp.bfloat16)] * 2),
    "gelu_f16": (gelu, [_sds((1 << 20,), jnp.float16)]),
    "softmax_f32_1024": (softmax, [_sds((4096, 1024), jnp.float32)]),
    "softmax_f16_4096_w8": (functools.partial(softmax, rows_per_block=1, num_warps=8), [_sds((1024, 4096), jnp.float16)]),
    "layernorm_f32_4096": (layernorm, [_sds((2048, 4096), jnp.float32), _sds((1, 4096), jnp.float32), _sds((1, 4096), jnp.float32)]),
    "rmsnorm_bf16_2048": (rmsnorm, [_sds((2048, 2048), jnp.bfloat16), _sds((1, 2048), jnp.bfloat16)]),
    "matmul_f16_64x64x32": (matmul, [_sds((1024, 1024), jnp.float16), _sds((1024, 1024), jnp.float16)]),
    "matmul_bf16_128x128x64_w8": (functools.partial(matmul, bm=128, bn=128, bk=64, num_warps=8, num_stages=3),
                                  [_sds((2048, 2048), jnp.bfloat16), _sds((2048, 2048), jnp.bfloat16)]),
    "matmul_f32_32x32x32": (functools.partial(matmul, bm=32, bn=32, bk=32), [_sds((512, 512), jnp.float32), _sds((512, 512), jnp.float32)]),
    "row_sum_max_f32": (row_sum_max, [_sds((4096, 512), jnp.float32)]),
}
