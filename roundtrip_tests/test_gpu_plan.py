"""The GPU suite's plan (scripts/gpusuite/gpu_cases.py), without a GPU: every case has an independent
reference, a comparison policy and a bound; no case compares a kernel only with itself; part (d)
holds every sm_90a sidecar kernel that uses TMA, wgmma, mbarrier, clusters or stmatrix (found
here by a scan of its own), the worked example with its legitimate and broken edits, and the
tcgen05 kernels only for an sm_100 GPU; the round trips carry an edit that must differ."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from gallery import EDITS
from gpusuite import gpu_cases, gpu_policy
from gpusuite.store_edit import NoStores, change_stores

ROOT = Path(__file__).resolve().parent.parent
PIPELINE_WORDS = ("cp.async.bulk.tensor", "wgmma.", "mbarrier.", ".reqnctapercluster", "%cluster_", "stmatrix.")


@pytest.fixture(scope="module")
def plan():
    from gpusuite.gpu_cases import ir_cases

    return gpu_cases.build_plan(90, ir_cases=ir_cases)


def test_the_plan_has_no_problems(plan):
    assert gpu_cases.plan_problems(plan) == []
    assert {c.part for c in plan} == set("abcd")


def test_no_case_compares_a_kernel_only_with_itself(plan):
    for c in plan:
        # the reference is computed off the GPU: numpy, the engine, or an expected engine outcome
        assert re.match(r"numpy|the CPU engine|the engine's expected outcome", c.reference), (c.id, c.reference)
        if c.part == "a":
            assert c.source["kind"] in ("roundtrip", "mutant")


def test_every_float_case_has_a_policy_and_a_bound(plan):
    for c in plan:
        assert c.policy in ("exact-int", "bitwise", "bounded"), c.id
        assert c.bound and c.derivation, c.id
        if c.policy == "bounded":
            assert c.rtol > 0 or c.atol > 0, c.id


def test_every_round_trip_has_an_edit_that_must_differ(plan):
    rts = [c for c in plan if c.part == "a"]
    plain = {c.id for c in rts if c.source["kind"] == "roundtrip"}
    edited = {c.id.removesuffix(" [stores changed]") for c in rts if c.source["kind"] == "mutant"}
    assert plain == edited and len(plain) == 16
    assert all(c.expect_gpu == ("differ" if c.source["kind"] == "mutant" else "match") for c in rts)


def _sm90a_pipeline_kernels():
    """(PTX, kernel) of every sm_90a sidecar kernel whose own text names a pipeline instruction,
    by a plain scan of the sidecars and their PTX."""
    out = set()
    for side in sorted((ROOT / "corpus" / "launch").rglob("*.json")):
        data = json.loads(side.read_text())
        t = data.get("target")
        if not (t == "sm_90a" or (isinstance(t, dict) and t.get("capability") == 90)):
            continue
        text = (ROOT / "corpus" / data["ptx"]).read_text()
        for spec in data.get("kernels", [data]):
            start = text.index(f".entry {spec['kernel']}")
            nxt = text.find(".entry ", start + 1)
            body = text[start: nxt if nxt > 0 else len(text)]
            if any(w in body for w in PIPELINE_WORDS):
                out.add((data["ptx"], spec["kernel"]))
    return out


def test_part_d_has_every_sm90a_pipeline_kernel(plan):
    want = _sm90a_pipeline_kernels()
    have = {(c.source["ptx"].removeprefix("corpus/"), c.kernel) for c in plan if c.part == "d" and "ptx" in c.source}
    assert want and want <= have, sorted(want - have)
    producers = {p.split("/")[1] for p, _ in want}
    assert {"triton", "pallas", "nvcc"} <= producers


def test_part_d_has_the_worked_example_and_its_edits(plan):
    worked = {c.source["edit"]: c for c in plan if c.source["kind"] == "worked-edit"}
    assert set(worked) == {"unedited", *EDITS}
    assert worked["wait-group-0"].expect_gpu == "match" and worked["unedited"].expect_engine == "match"
    broken = [e for e in EDITS if e != "wait-group-0"]
    assert all(worked[e].expect_engine != "match" for e in broken)


def test_tcgen05_kernels_only_for_an_sm100_gpu(plan):
    assert not any("tcgen05" in c.why for c in plan)
    blackwell = gpu_cases.build_plan(100, parts="d")
    tc = [c for c in blackwell if "tcgen05" in c.why]
    assert tc and all(c.target == "sm_100a" for c in tc)


def test_known_engine_reports_are_expected_not_failures(plan):
    cub = [c for c in plan if "cub_block.sm_80.G.ptx" in c.id and ("histogram" in c.kernel or "radix" in c.kernel)]
    assert cub and all(c.expect_engine == "report:uninit" for c in cub)


def test_the_store_edit_changes_every_global_store():
    text = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
\t.reg .pred %p<2>;
\t.reg .f32 %f<3>;
\t.reg .b16 %rs<2>;
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [p];
\t@%p1 st.global.f32 [%rd1], %f1;
\tst.global.v2.f32 [%rd1+8], {%f2, %f1};
\tst.global.b16 [%rd1+4], %rs1;
\tst.global.u32 [%rd1+16], 7;
\tret;
}
"""
    edited, n = change_stores(text, "k")
    assert n == 3
    assert "\t@%p1 xor.b32 %f1, %f1, 1073741824;\n\t@%p1 st.global.f32" in edited
    assert "\txor.b32 %f2, %f2, 1073741824;\n\tst.global.v2.f32" in edited
    assert "\txor.b16 %rs1, %rs1, 16384;\n\tst.global.b16" in edited
    with pytest.raises(NoStores):
        change_stores(text.replace("st.global", "ld.global"), "k")


@pytest.mark.parametrize("body,policy,contracted", [
    ("add.s32 %r1, %r1, 1;", "exact-int", False),
    ("mul.rn.f32 %f1, %f1, %f2;\n add.rn.f32 %f1, %f1, %f2;", "bitwise", False),
    ("mul.f32 %f1, %f1, %f2;\n add.f32 %f1, %f1, %f2;", "bitwise", True),
    ("tanh.approx.f32 %f1, %f1;", "bounded", False),
    ("div.full.f32 %f1, %f1, %f2;", "bounded", False),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1}, %rd1, %rd2, 1, 1, 1, 0, 0;", "bounded", False),
])
def test_policy_by_the_kernels_instructions(body, policy, contracted):
    dtypes = ["i32"] if policy == "exact-int" else ["fp32"]
    p = gpu_policy.kernel_policy(body, dtypes, loop_extent=64)
    assert p.policy == policy
    assert (p.default_rtol > 0) == contracted
    if p.policy == "bounded":
        assert p.rtol > 0 or p.atol > 0


@pytest.mark.slow
def test_plan_only_json_lists_every_case(tmp_path):
    out = tmp_path / "plan.json"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_suite.py"), "--plan-only", "--no-host-check",
                        "--json", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["problems"] == [] and len(data["cases"]) > 300
    for c in data["cases"]:
        assert {"part", "target", "reference", "policy", "bound", "expect_gpu"} <= set(c)
    assert data["estimate"]["wall_s"] > 0


def test_a_kernel_that_rightly_writes_nothing_is_not_failed_for_it(plan):
    from gpusuite.gpu_case_run import judge

    quiet = [c for c in plan if c.writes_nothing]
    assert {c.kernel for c in quiet} >= {"hello", "print_values", "conv5x5"}
    case = next(c for c in quiet if c.kernel == "conv5x5").to_dict()
    builds, engine = {"nofma": {}, "default": {}}, {"status": "ran", "kinds": []}
    assert judge(case, builds, engine, {}, {}, {"nofma": [], "default": []}, []) == ("pass", [])
    case["writes_nothing"] = ""
    assert judge(case, builds, engine, {}, {}, {"nofma": [], "default": []}, [])[0] == "FAIL"


def test_cluster_requests_from_the_sidecar_and_reqnctapercluster():
    from ptx2py.launch import plan as lp

    spec = {"grid": [4, 1, 1], "block": [64, 1, 1], "args": []}
    entry = lp.EntryInfo("k", (), cluster=(2, 1, 1))
    assert lp.cluster_launch_request(spec, entry)["cluster"] == [2, 1, 1]           # .reqnctapercluster alone
    assert lp.cluster_launch_request({**spec, "cluster": [2, 1, 1]})["cluster"] == [2, 1, 1]
    assert lp.cluster_launch_request(spec)["cluster"] == [1, 1, 1]
    triton = lp.cluster_launch_request({**spec, "num_ctas": 2})    # Triton: grid counts programs
    assert triton["cluster"] == [2, 1, 1] and triton["grid"] == [8, 1, 1]
    with pytest.raises(lp.PlanError, match="reqnctapercluster"):
        lp.cluster_launch_request({**spec, "cluster": [4, 1, 1]}, entry)
    with pytest.raises(lp.PlanError, match="multiple"):
        lp.cluster_launch_request({**spec, "grid": [3, 1, 1], "cluster": [2, 1, 1]})


def test_the_corpus_cluster_kernels_launch_as_clusters(plan):
    from gpusuite.gpu_case_run import case_launch, case_text

    from ptx2py.verify.gpu_run import cluster_launch_request, entry_info

    cases = [c for c in plan if c.kernel in ("cluster_dsmem_exchange", "cluster_raw_ptx")]
    assert cases
    for c in cases:
        d = c.to_dict()
        req = cluster_launch_request(case_launch(d), entry_info(case_text(d), c.kernel))
        assert req["cluster"] == [2, 1, 1], c.id
