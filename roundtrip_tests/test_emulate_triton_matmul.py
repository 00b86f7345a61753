"""A Triton sm_80 fp16 matmul from the corpus (cp.async pipeline, ldmatrix, mma.sync) on the CPU
engine, against numpy: fp16 inputs, f32 accumulation, fp16 output. One CTA (64x64x32) by default,
four CTAs with two K steps (128x128x64) in the slow run."""

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from ptx2py import emulate

ROOT = Path(__file__).resolve().parent.parent


def small_matmul_launch(stem, m=128, n=128, k=64):
    spec = json.loads((ROOT / "corpus" / "launch" / "triton" / f"{stem}.json").read_text())
    spec = copy.deepcopy(spec)
    values = {"M": m, "N": n, "K": k, "stride_am": k, "stride_ak": 1, "stride_bk": n, "stride_bn": 1,
              "stride_cm": n, "stride_cn": 1}
    counts = {"a_ptr": m * k, "b_ptr": k * n, "c_ptr": m * n}
    for a in spec["args"]:
        if a["name"] in values:
            a["value"] = values[a["name"]]
        if a["name"] in counts:
            a["count"] = counts[a["name"]]
    c = spec["constexprs"]
    spec["grid"] = [(m // c["BM"]) * (n // c["BN"]), 1, 1]
    return spec


@pytest.mark.parametrize("stem,m,n,k", [
    ("matmul_fp16_64x64x32_w4s4_sm80", 64, 64, 32),
    pytest.param("matmul_fp16_64x64x32_w4s4_sm80", 128, 128, 64, marks=pytest.mark.slow),
])
def test_triton_fp16_matmul_matches_numpy(stem, m, n, k):
    spec = small_matmul_launch(stem, m, n, k)
    text = (ROOT / "corpus" / "ptx" / "triton" / f"{stem}.ptx").read_text()
    r = emulate.run(text, spec, filename=f"{stem}.ptx")
    assert r.reports == [], [x.render() for x in r.reports[:3]]
    a = r.outputs["a_ptr"].astype(np.float64).reshape(m, k)
    b = r.outputs["b_ptr"].astype(np.float64).reshape(k, n)
    got = r.outputs["c_ptr"].astype(np.float64).reshape(m, n)
    want = (a @ b).astype(np.float16).astype(np.float64)
    assert np.allclose(got, want, rtol=2e-3, atol=2e-3)
