"""Stored independent references for the corpus kernels with launch sidecars (corpus/refs/,
written by make_oracle_refs.py): what each buffer holds after the sweep's reduced launch
(corpus_check.small_launch) when the kernel's source runs under an oracle that shares no code
with the engine (Triton's interpreter, Pallas interpret mode on CPU JAX, a float64 numpy
reference). A reference stores, per buffer, the flat indices the oracle's run changed and the
values there (in the buffer's storage dtype); every other element must keep its seeded value.

The manifest (corpus/refs/manifest.json) has one entry per sidecar kernel, keyed
"ptx-path::kernel": the oracle and its version, the inputs' seed, the reduced launch, the
tolerance of each buffer, the buffers left to an order-insensitive check, and, where the oracle
is known to be wrong for the kernel, which oracle decided instead and why; kernels without a
stored reference name their numpy reference (corpus_refs.py, gemm_refs.py) or why they have none.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
REFS = ROOT / "corpus" / "refs"
MANIFEST = REFS / "manifest.json"
# every target a sidecar names: the manifest covers them all
ALL_TARGETS = frozenset({"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_103a", "sm_120",
                         "sm_120a"})



def _fp8_table(exp_bits: int, man_bits: int, finite_only: bool) -> np.ndarray:
    """float64 value of every byte of an fp8 format (e4m3fn: no infinities, S.1111.111 NaN;
    e5m2: IEEE-like), from the format's definition."""
    bias = (1 << (exp_bits - 1)) - 1
    out = np.empty(256)
    for b in range(256):
        sign = -1.0 if b & 0x80 else 1.0
        e, m = (b >> man_bits) & ((1 << exp_bits) - 1), b & ((1 << man_bits) - 1)
        if e == (1 << exp_bits) - 1 and (not finite_only or m == (1 << man_bits) - 1):
            out[b] = np.nan if (m or finite_only) else sign * np.inf
        elif e == 0:
            out[b] = sign * m * 2.0 ** (1 - bias - man_bits)
        else:
            out[b] = sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
    return out


FP8 = {"fp8e4nv": _fp8_table(4, 3, True), "fp8e5": _fp8_table(5, 2, False)}
BF16 = ("bf16", "bfloat16")


EXACT = {"rule": "exact"}


def key(ptx_rel: str, kernel: str) -> str:
    return f"{ptx_rel}::{kernel}"


@lru_cache(maxsize=1)
def manifest() -> dict:
    return json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {"kernels": {}}


def entry(ptx_rel: str, kernel: str) -> dict | None:
    return manifest()["kernels"].get(key(ptx_rel, kernel))


def load(entry: dict) -> dict:
    """buffer -> (flat indices, values) of an entry's stored reference."""
    with np.load(REFS / entry["file"]) as z:
        return {name: (z[f"{name}.idx"], z[f"{name}.val"]) for name in entry["buffers"]}


def values(data: np.ndarray, dtype: str | None) -> np.ndarray:
    """A buffer in its storage dtype (bf16 and fp8 as raw bits) -> float64 (decoded here, not by
    the engine)."""
    if dtype in BF16:
        return (data.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if dtype in FP8:
        return FP8[dtype][data]
    return data.astype(np.float64)


def compare(name: str, got: np.ndarray, want: np.ndarray, dtype: str | None, tol: dict) -> str | None:
    """Why `got` is not `want` under tolerance `tol` ({"rule": "exact"} bit for bit, or
    {"rule": "close", "rtol", "atol"}: |got - want| <= atol + rtol |want|, NaN only where NaN)."""
    if got.size == 0:
        return None
    if tol["rule"] == "exact":
        bad = got.view(np.uint8).reshape(got.size, -1) != want.view(np.uint8).reshape(want.size, -1)
        bad = bad.any(-1)
    else:
        g, w = values(got, dtype), values(want, dtype)
        both_nan = np.isnan(g) & np.isnan(w)
        bad = ~(both_nan | (np.abs(g - w) <= tol["atol"] + tol["rtol"] * np.abs(w)))
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return f"{name}: {int(bad.sum())} of {bad.size} differ, first at {i}: got {got[i]!r}, want {want[i]!r}"


def check(entry: dict, inputs: dict, outputs: dict, dtypes: dict) -> list[str]:
    """The buffers of a run (`inputs` seeded, `outputs` after it) that differ from the stored
    reference: the elements the oracle wrote within the buffer's tolerance, every other element
    bit for bit its seeded value; the entry's order-dependent buffers are left out."""
    bad = []
    for name, (idx, val) in load(entry).items():
        if name in entry.get("order_dependent", ()):
            continue
        got, kept = outputs[name], np.ones(inputs[name].size, bool)
        kept[idx] = False
        why = (compare(f"{name}[written]", got[idx], val, dtypes.get(name), entry["tolerance"][name])
               or compare(f"{name}[kept]", got[kept], inputs[name][kept], dtypes.get(name), EXACT))
        if why:
            bad.append(why)
    return bad
