"""Corpus TMA matmuls on the CPU engine against numpy: Triton sm_90a (wgmma: fp16, bf16, fp8
e4m3) and sm_100a (tcgen05: fp16, bf16, fp8 e4m3), one 128x128 tile; and the tensor-memory and
tcgen05.commit mistakes the engine reports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gallery import check_output, matmul_launch

from ptx2py.emulate.frontend import run

ROOT = Path(__file__).resolve().parent.parent
TRITON = ROOT / "corpus" / "ptx" / "triton"
SIDECARS = ROOT / "corpus" / "launch" / "triton"
KERNELS = {  # name -> (dtypes of a/b/c, K tile)
    "matmul_tma_fp16_sm90": ("fp16", "fp16", 64), "matmul_tma_bf16_sm90": ("bf16", "bf16", 64),
    "matmul_tma_fp8e4nv_sm90": ("fp8e4nv", "fp16", 128), "matmul_tma_fp16_sm100": ("fp16", "fp16", 64),
    "matmul_tma_bf16_sm100": ("bf16", "bf16", 64), "matmul_tma_fp8e4nv_sm100": ("fp8e4nv", "fp16", 128),
}


def _run(name, text=None, k=128):
    spec = matmul_launch(128, 128, k, SIDECARS / f"{name}.json")
    return run(text or (TRITON / f"{name}.ptx").read_text(), spec, filename=f"{name}.ptx")


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_tma_matmul_matches_numpy(name):
    ab, c, bk = KERNELS[name]
    k = max(128, bk)
    res = _run(name, k=k)
    assert res.clean, res.reports
    check = check_output(res.outputs, 128, 128, k, {"a_desc": ab, "b_desc": ab, "c_desc": c})
    assert check["ok"], check


def _without(name, pattern):
    text = (TRITON / f"{name}.ptx").read_text()
    edited, n = re.subn(pattern, "", text)
    assert n >= 1
    return edited


def test_missing_tcgen05_dealloc_is_a_tensor_memory_leak_report():
    res = _run("matmul_tma_fp16_sm100", _without("matmul_tma_fp16_sm100", r".*tcgen05\.dealloc.*\n"))
    assert any(r.kind == "tmem" and "still allocated" in r.message for r in res.reports), res.reports


def test_missing_tcgen05_commit_deadlocks_on_the_epilogue_barrier():
    res = _run("matmul_tma_fp16_sm100", _without("matmul_tma_fp16_sm100", r".*tcgen05\.commit.*\n"))
    [dead] = [r for r in res.reports if r.kind == "deadlock"]
    assert "mbarrier.try_wait" in dead.message and "arrivals" in dead.message


@pytest.mark.parametrize("name", ["matmul_devdesc_fp16_sm90", "matmul_devdesc_fp8e4nv_sm100"])
def test_device_built_tensor_maps_matmul_matches_numpy(name):
    """The kernel builds its tensor maps with tensormap.replace in shared memory and copies them
    to global scratch (tensormap.cp_fenceproxy); A is [M, K], B [N, K], both K-contiguous."""
    import json

    import numpy as np
    from gallery import host_values, tolerance

    from ptx2py.emulate.frontend import reduced_launch

    side = json.loads((SIDECARS / f"{name}.json").read_text())
    spec = reduced_launch(side, 1, scalars={"K": 128})
    res = run((TRITON / f"{name}.ptx").read_text(), spec, filename=f"{name}.ptx")
    assert res.clean, res.reports
    v = {a["name"]: a.get("value") for a in spec["args"]}
    dt = {a["name"]: a["dtype"] for a in spec["args"]}
    m, n, k = v["M"], v["N"], v["K"]
    a = host_values(res.outputs["a_ptr"], dt["a_ptr"])[: m * k].reshape(m, k)[:128]
    b = host_values(res.outputs["b_ptr"], dt["b_ptr"])[: n * k].reshape(n, k)[:128]
    c = host_values(res.outputs["c_ptr"], dt["c_ptr"])[: m * n].reshape(m, n)[:128, :128]
    assert (np.abs(c - a @ b.T) <= tolerance(a, b)).all()


@pytest.mark.slow
@pytest.mark.parametrize("target,atol", [("sm90", 0.0), ("sm100", 1e-4)])
def test_attention_on_wgmma_and_tcgen05_agrees_with_the_mma_sync_build(target, atol):
    """The same Triton attention kernel built for sm_80 (mma.sync), sm_90a (wgmma, MN-major V) and
    sm_100a (tcgen05, P in tensor memory), on the same seeded inputs: the sm_90a output equals the
    sm_80 one bit for bit here, the sm_100a one within its different accumulation split."""
    import json

    import numpy as np
    from corpus_check import small_launch

    from ptx2py.launch.plan import kernel_specs

    def out(name):
        side = json.loads((SIDECARS / f"{name}.json").read_text())
        res = run((ROOT / "corpus" / side["ptx"]).read_text(), small_launch(kernel_specs(side)[0], 1),
                  filename=name)
        assert res.clean, res.reports
        return res.outputs["Out"].astype(np.float64)

    ref, got = out("attn_fwd_fp16_d64_w4_sm80"), out(f"attn_fwd_fp16_d64_w4_{target}")
    assert np.count_nonzero(ref) > 0
    assert np.abs(ref - got).max() <= atol


def test_device_built_tensor_map_used_without_acquire_is_reported():
    import json

    from ptx2py.emulate.frontend import reduced_launch

    name = "matmul_devdesc_fp16_sm90"
    side = json.loads((SIDECARS / f"{name}.json").read_text())
    text = _without(name, r".*fence\.proxy\.tensormap::generic\.acquire.*\n")
    res = run(text, reduced_launch(side, 1, scalars={"K": 128}), filename=f"{name}.ptx")
    assert any(r.kind == "async-proxy" and "acquire" in r.message for r in res.reports), res.reports


def test_tma_store_never_waited_for_is_reported_at_block_end():
    res = _run("matmul_tma_fp16_sm90", _without("matmul_tma_fp16_sm90", r".*cp\.async\.bulk\.wait_group.*\n"))
    assert any(r.kind == "race" and "still reads shared memory" in r.message for r in res.reports), res.reports


def test_tma_load_over_unfenced_generic_writes_is_reported():
    """The device-descriptor matmul stages its tensor maps in shared memory with generic stores,
    then TMA loads tiles over those bytes; the fence.proxy.async between them is what the ISA
    requires (generic and async proxy writes to the same bytes are otherwise unordered). Deleted,
    the first TMA load is reported; the unedited kernel is clean (so is the tcgen05 matmul whose TMA
    loads reuse the word tcgen05.alloc wrote: test_tma_matmul_matches_numpy)."""
    import json

    from ptx2py.emulate.frontend import reduced_launch

    name = "matmul_devdesc_fp16_sm90"
    side = json.loads((SIDECARS / f"{name}.json").read_text())
    text = (TRITON / f"{name}.ptx").read_text()
    launch = reduced_launch(side, 1, scalars={"K": 128})
    assert run(text, launch, filename=f"{name}.ptx").reports == []
    fence = "\tfence.proxy.async.shared::cta;\n"
    edited = text.replace(fence, "", 1)             # the first: after the staging, before the loads
    assert edited != text
    res = run(edited, launch, filename=f"{name}.ptx")
    hits = [r for r in res.reports if r.kind == "async-proxy" and "writes shared offset" in r.message]
    assert hits and "cp.async.bulk.tensor" in hits[0].message, res.reports
