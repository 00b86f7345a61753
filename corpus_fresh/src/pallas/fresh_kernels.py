"""JAX Pallas (Triton backend) kernels that corpus/ does not contain (the fresh readability set,
scripts/make_fresh_set.py). Nothing in sugar/ or the style presets was fitted to these.

KERNELS: name -> (jax function, input ShapeDtypeStructs); each passes `compiler_params`, which
lets jax lower for CUDA without a GPU (see corpus/README.md, "Pallas path").
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton


def _params(num_warps, num_stages=1):
    return pltriton.CompilerParams(num_warps=num_warps, num_stages=num_stages)


# --- fused elementwise: SwiGLU over rows -------------------------------------------------------
def _swiglu_kernel(a_ref, b_ref, o_ref):
    a = a_ref[...].astype(jnp.float32)
    b = b_ref[...].astype(jnp.float32)
    o_ref[...] = (a * jax.nn.sigmoid(a) * b).astype(o_ref.dtype)


def swiglu(a, b, rows=8, num_warps=4):
    r, c = a.shape
    spec = pl.BlockSpec((rows, c), lambda i: (i, 0))
    return pl.pallas_call(_swiglu_kernel, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype), grid=(r // rows,),
                          in_specs=[spec, spec], out_specs=spec, compiler_params=_params(num_warps))(a, b)


# --- log-softmax with a residual add -----------------------------------------------------------
def _residual_log_softmax_kernel(x_ref, r_ref, o_ref):
    x = x_ref[...].astype(jnp.float32) + r_ref[...].astype(jnp.float32)
    m = jnp.max(x, axis=-1, keepdims=True)
    s = jnp.log(jnp.sum(jnp.exp(x - m), axis=-1, keepdims=True))
    o_ref[...] = (x - m - s).astype(o_ref.dtype)


def residual_log_softmax(x, res, rows=2, num_warps=8):
    r, c = x.shape
    spec = pl.BlockSpec((rows, c), lambda i: (i, 0))
    return pl.pallas_call(_residual_log_softmax_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(r // rows,), in_specs=[spec, spec], out_specs=spec,
                          compiler_params=_params(num_warps))(x, res)


# --- matmul with a bias + GELU epilogue (a K loop) ---------------------------------------------
def _matmul_bias_gelu_kernel(x_ref, w_ref, b_ref, o_ref, *, bk, k):
    def body(i, acc):
        xs = x_ref[:, pl.ds(i * bk, bk)]
        ws = w_ref[pl.ds(i * bk, bk), :]
        return acc + pl.dot(xs, ws)

    acc = jax.lax.fori_loop(0, k // bk, body, jnp.zeros(o_ref.shape, jnp.float32))
    y = acc + b_ref[...].astype(jnp.float32)
    o_ref[...] = jax.nn.gelu(y, approximate=True).astype(o_ref.dtype)


def matmul_bias_gelu(x, w, b, bm=64, bn=128, bk=32, num_warps=4, num_stages=2):
    m, k = x.shape
    _, n = w.shape
    return pl.pallas_call(functools.partial(_matmul_bias_gelu_kernel, bk=bk, k=k),
                          out_shape=jax.ShapeDtypeStruct((m, n), x.dtype), grid=(m // bm, n // bn),
                          in_specs=[pl.BlockSpec((bm, k), lambda i, j: (i, 0)),
                                    pl.BlockSpec((k, bn), lambda i, j: (0, j)),
                                    pl.BlockSpec((1, bn), lambda i, j: (0, j))],
                          out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
                          compiler_params=_params(num_warps, num_stages))(x, w, b)


# --- one attention block: softmax(q k^T * scale) v over the whole (short) key length -----------
def _attention_kernel(q_ref, k_ref, v_ref, o_ref, *, scale):
    q = q_ref[...]
    s = pl.dot(q, k_ref[...], trans_b=True) * scale
    m = jnp.max(s, axis=-1, keepdims=True)
    p = jnp.exp(s - m)
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    o_ref[...] = pl.dot(p.astype(v_ref.dtype), v_ref[...]).astype(o_ref.dtype)


def attention(q, k, v, bq=64, num_warps=4):
    lq, d = q.shape
    lk, _ = k.shape
    return pl.pallas_call(functools.partial(_attention_kernel, scale=d ** -0.5),
                          out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype), grid=(lq // bq,),
                          in_specs=[pl.BlockSpec((bq, d), lambda i: (i, 0)), pl.BlockSpec((lk, d), lambda i: (0, 0)),
                                    pl.BlockSpec((lk, d), lambda i: (0, 0))],
                          out_specs=pl.BlockSpec((bq, d), lambda i: (i, 0)), compiler_params=_params(num_warps))(q, k, v)


# --- column mean and max of a tall matrix (a reduction over the row axis) ----------------------
def _col_stats_kernel(x_ref, mean_ref, max_ref):
    x = x_ref[...].astype(jnp.float32)
    mean_ref[...] = jnp.mean(x, axis=0)
    max_ref[...] = jnp.max(x, axis=0)


def col_stats(x, cols=128, num_warps=8):
    r, c = x.shape
    vec = pl.BlockSpec((cols,), lambda j: (j,))
    return pl.pallas_call(_col_stats_kernel,
                          out_shape=(jax.ShapeDtypeStruct((c,), jnp.float32), jax.ShapeDtypeStruct((c,), jnp.float32)),
                          grid=(c // cols,), in_specs=[pl.BlockSpec((r, cols), lambda j: (0, j))],
                          out_specs=(vec, vec), compiler_params=_params(num_warps))(x)


# --- layer norm over rows with a residual add (normalisation: the kind corpus/ has as layernorm/rmsnorm)
def _residual_layernorm_kernel(x_ref, r_ref, g_ref, o_ref, *, eps):
    h = x_ref[...].astype(jnp.float32) + r_ref[...].astype(jnp.float32)
    mu = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(h - mu), axis=-1, keepdims=True)
    o_ref[...] = ((h - mu) * jax.lax.rsqrt(var + eps) * g_ref[...].astype(jnp.float32)).astype(o_ref.dtype)


def residual_layernorm(x, res, g, rows=4, eps=1e-6, num_warps=4):
    r, c = x.shape
    spec = pl.BlockSpec((rows, c), lambda i: (i, 0))
    return pl.pallas_call(functools.partial(_residual_layernorm_kernel, eps=eps),
                          out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(r // rows,),
                          in_specs=[spec, spec, pl.BlockSpec((1, c), lambda i: (0, 0))], out_specs=spec,
                          compiler_params=_params(num_warps))(x, res, g)


def _sds(shape, dtype):
    return jax.ShapeDtypeStruct(shape, dtype)


KERNELS = {
    "swiglu_bf16_r8": (swiglu, [_sds((4096, 2048), jnp.bfloat16)] * 2),
    "residual_log_softmax_f16_r2_w8": (residual_log_softmax, [_sds((2048, 2048), jnp.float16)] * 2),
    "matmul_bias_gelu_f16_64x128x32_s2": (matmul_bias_gelu, [_sds((1024, 512), jnp.float16), _sds((512, 1024), jnp.float16),
                                                             _sds((1, 1024), jnp.float16)]),
    "matmul_bias_gelu_bf16_128x64x64_w8s4": (functools.partial(matmul_bias_gelu, bm=128, bn=64, bk=64, num_warps=8, num_stages=4),
                                             [_sds((2048, 1024), jnp.bfloat16), _sds((1024, 2048), jnp.bfloat16),
                                              _sds((1, 2048), jnp.bfloat16)]),
    "attention_f16_q64_k128_d64": (attention, [_sds((1024, 64), jnp.float16), _sds((128, 64), jnp.float16),
                                               _sds((128, 64), jnp.float16)]),
    "col_stats_f32_1024x128_w8": (col_stats, [_sds((1024, 2048), jnp.float32)]),
    "residual_layernorm_bf16_r4": (residual_layernorm, [_sds((2048, 1024), jnp.bfloat16)] * 2 + [_sds((1, 1024), jnp.bfloat16)]),
    "matmul_bias_gelu_f32_32x64x16": (functools.partial(matmul_bias_gelu, bm=32, bn=64, bk=16, num_warps=4, num_stages=3),
                                      [_sds((512, 256), jnp.float32), _sds((256, 512), jnp.float32), _sds((1, 512), jnp.float32)]),
}
