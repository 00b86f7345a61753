"""Numpy references and seeded input generators for the fifteen problems.

REFERENCES[name](inputs, params) -> outputs; make_inputs(name, params, seed).
References compute in float64 and round to the output dtype; tolerances live
in each problem file ("rtol"/"atol").
"""
from __future__ import annotations

import zlib

import numpy as np

from ..dtypes import round_bf16


def _f16(x):
    return np.asarray(x, np.float64).astype(np.float16)


def _d(x):
    return np.asarray(x, np.float64)


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _attention(inp, p):
    q, k, v = _d(inp["Q"]), _d(inp["K"]), _d(inp["V"])
    return {"O": (_softmax(q @ k.T / np.sqrt(q.shape[1])) @ v).astype(np.float32)}


def _rmsnorm(inp, p):
    x = _d(inp["x"])
    r = 1.0 / np.sqrt((x * x).mean(1, keepdims=True) + p["eps"])
    return {"y": (x * r * _d(inp["w"])).astype(np.float32)}


def _l2norm(inp, p):
    x = _d(inp["x"])
    return {"y": _f16(x / np.maximum(np.sqrt((x * x).sum(1, keepdims=True)), p["eps"]))}


def _sum(inp, p):
    return {"out": np.array([_d(inp["x"]).sum()], np.float32)}


REFERENCES = {
    "scalar_add": lambda i, p: {"y": (_d(i["x"]) + p["alpha"]).astype(np.float32)},
    "vector_add": lambda i, p: {"z": (_d(i["x"]) + _d(i["y"])).astype(np.float32)},
    "scale_shift": lambda i, p: {"y": _f16(p["a"] * _d(i["x"]) + p["b"])},
    "relu_mul": lambda i, p: {"z": round_bf16(np.maximum(_d(i["x"]), 0) * _d(i["y"]))},
    "array_sum": _sum,
    "sum_2p24": _sum,
    "mean": lambda i, p: {"out": np.array([_d(i["x"]).mean()], np.float32)},
    "row_sum": lambda i, p: {"out": _d(i["x"]).sum(1).astype(np.float32)},
    "rmsnorm": _rmsnorm,
    "row_softmax": lambda i, p: {"y": _softmax(_d(i["x"])).astype(np.float32)},
    "l2norm": _l2norm,
    "matmul_512": lambda i, p: {"C": (_d(i["A"]) @ _d(i["B"])).astype(np.float32)},
    "matmul_rect": lambda i, p: {"C": (_d(i["A"]) @ _d(i["B"])).astype(np.float32)},
    "attention_d64": _attention,
    "attention_d128": _attention,
}


def make_inputs(name: str, params: dict, seed: int = 0) -> dict:
    """Deterministic inputs for ``name`` at the sizes in ``params``."""
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])

    def u(*shape, lo=-1.0, hi=1.0):
        return rng.uniform(lo, hi, shape).astype(np.float32)

    if name in ("scalar_add",):
        return {"x": u(params["n"])}
    if name == "vector_add":
        return {"x": u(params["n"]), "y": u(params["n"])}
    if name == "scale_shift":
        return {"x": u(params["n"], lo=-4, hi=4).astype(np.float16)}
    if name == "relu_mul":
        return {"x": round_bf16(u(params["n"])), "y": round_bf16(u(params["n"], lo=-3, hi=3))}
    if name in ("array_sum", "sum_2p24", "mean"):
        return {"x": u(params["n"], lo=0.0)}   # positive: well-conditioned sums
    if name in ("row_sum", "row_softmax"):
        return {"x": u(params["rows"], params["cols"], lo=-3, hi=3)}
    if name == "rmsnorm":
        return {"x": u(params["rows"], params["cols"]), "w": u(params["cols"], lo=0.5, hi=1.5)}
    if name == "l2norm":
        return {"x": u(params["rows"], params["cols"]).astype(np.float16)}
    if name.startswith("matmul"):
        return {"A": u(params["M"], params["K"]), "B": u(params["K"], params["N"])}
    if name.startswith("attention"):
        d = 64 if name.endswith("d64") else 128
        return {n: u(params["S"], d) for n in ("Q", "K", "V")}
    raise KeyError(name)
