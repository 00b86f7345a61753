"""The GPU suite's parent/child runner and judging with a stand-in driver (fake_cuda_driver.py, no
GPU): a case that faults (a sticky 700), hangs or stalls fails alone and the next case still
passes; a case whose output buffer the kernel never writes fails even though the engine's run of
the same launch agrees with it; cluster launches go through cuLaunchKernelEx with the cluster's
shape; the shared-memory opt-in counts static bytes."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from gpusuite import gpu_children

from ptx2py.verify import gpu_run

HERE = Path(__file__).resolve().parent

PTX = """.version 8.0
.target sm_90
.address_size 64

.visible .entry double_it(.param .u64 src, .param .u64 dst, .param .u32 n)
{
\t.reg .pred %p<2>;
\t.reg .b32 %r<6>;
\t.reg .f32 %f<3>;
\t.reg .b64 %rd<8>;
\tld.param.u64 %rd1, [src];
\tld.param.u64 %rd2, [dst];
\tld.param.u32 %r1, [n];
\tmov.u32 %r2, %ctaid.x;
\tmov.u32 %r3, %ntid.x;
\tmov.u32 %r4, %tid.x;
\tmad.lo.s32 %r5, %r2, %r3, %r4;
\tsetp.ge.u32 %p1, %r5, %r1;
\t@%p1 bra DONE;
\tcvta.to.global.u64 %rd3, %rd1;
\tcvta.to.global.u64 %rd4, %rd2;
\tmul.wide.u32 %rd5, %r5, 4;
\tadd.s64 %rd6, %rd3, %rd5;
\tadd.s64 %rd7, %rd4, %rd5;
\tld.global.f32 %f1, [%rd6];
\tmul.rn.f32 %f2, %f1, 0f40000000;
\tst.global.f32 [%rd7], %f2;
DONE:
\tret;
}
"""
PTX = PTX + PTX[PTX.index(".visible .entry double_it"):].replace("double_it", "lost_launch") + "".join(f"""
.visible .entry {name}(.param .u64 src, .param .u64 dst, .param .u32 n)
{{
\tret;
}}
""" for name in ("untouched", "fault", "hang", "stall"))


def _spec(kernel: str) -> dict:
    return {"kernel": kernel, "grid": [2, 1, 1], "block": [64, 1, 1], "shared": 0, "seed": 0,
            "args": [{"name": "src", "kind": "pointer", "dtype": "fp32", "count": 128, "init": "randn"},
                     {"name": "dst", "kind": "pointer", "dtype": "fp32", "count": 128, "init": "zeros"},
                     {"name": "n", "kind": "scalar", "dtype": "u32", "value": 128}]}


def _case(ptx: Path, kernel: str, **kw) -> dict:
    return {"id": f"t {kernel}", "part": "d", "target": "sm_90", "kernel": kernel,
            "source": {"kind": "file", "ptx": str(ptx)}, "launch": {"kind": "sidecar"}, "spec": _spec(kernel),
            "reference": "the CPU engine at the same launch", "policy": "bitwise", "bound": "bit for bit",
            "derivation": "", "expect_gpu": "match", "expect_engine": "match", "rtol": 0.0, "atol": 0.0,
            "default_rtol": 0.0, "must_change": ["dst", "*"], "timed": False, **kw}


def _ir_case() -> dict:
    from gpusuite.gpu_cases import ir_cases

    return next(c for c in ir_cases("sm_90a") if c.id == "c ir scalar_add [test]").to_dict()


@pytest.fixture()
def stand_in(tmp_path, monkeypatch):
    ptx = tmp_path / "kernels.ptx"
    ptx.write_text(PTX)
    log = tmp_path / "calls.jsonl"
    env = gpu_children.child_env({"PTX2PY_CUDA_DRIVER": "fake_cuda_driver", "FAKE_CUDA_LOG": str(log),
                                  "PTX2PY_GPU_SYNC_TIMEOUT_S": "2"})
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env["PYTHONPATH"]])
    return ptx, env, log


def test_a_failing_child_does_not_stop_the_next_case(stand_in):
    ptx, env, _ = stand_in
    cases = [_case(ptx, "fault"), _case(ptx, "double_it"), _case(ptx, "hang"), _case(ptx, "untouched"),
             _case(ptx, "lost_launch"),
             {**_case(ptx, "double_it", expect_gpu="differ"), "id": "t double_it expected to differ"},
             _ir_case()]
    rows = gpu_children.run_cases(cases, jobs=2, timeout_s=60, env=env)
    got = {r["id"]: r for r in rows}
    assert [r["id"] for r in rows] == [c["id"] for c in cases]
    assert got["t fault"]["result"] == "error" and "CUDA error 700" in got["t fault"]["why"][0]
    assert got["t hang"]["result"] == "error" and "still running" in got["t hang"]["why"][0]
    assert got["t double_it"]["result"] == "pass", got["t double_it"]
    assert set(got["t double_it"]["builds"]) == {"nofma", "default"}
    # the engine ran the same launch of `untouched` and agrees with the GPU (both wrote nothing,
    # as when a bad scalar makes both exit early): the fill check fails it
    idle = got["t untouched"]
    assert idle["result"] == "FAIL" and idle["engine"]["status"] == "ran"
    assert idle["why"] == ["the reference writes no buffer: a launch that does no work proves nothing"]
    # the GPU leaves the output the reference writes at its fill (a launch mistake on the GPU side)
    lost = got["t lost_launch"]
    assert lost["result"] == "FAIL" and lost["written"] == ["dst"]
    assert any(w.startswith("nofma: output buffer(s) dst unchanged from their initial fill") for w in lost["why"])
    # a case that expects its output to differ from the reference (the store edit) fails when it
    # does not: here the kernel the GPU runs is the unedited one
    same = got["t double_it expected to differ"]
    assert same["result"] == "FAIL" and "expected to differ" in " ".join(same["why"])
    # a kernel-IR problem runs in kernelir.gpu_check (the case names its runner); the stand-in
    # runs no IR kernel, so its output stays at its fill and the case fails for it
    ir = got["c ir scalar_add [test]"]
    assert ir["result"] == "FAIL" and "output y unchanged from its initial fill" in ir["why"], ir


@pytest.mark.slow
def test_a_child_that_never_returns_is_killed_and_the_next_case_runs(stand_in):
    ptx, env, _ = stand_in
    rows = gpu_children.run_cases([{**_case(ptx, "stall"), "timeout_s": 6}, _case(ptx, "double_it")], jobs=1,
                                  timeout_s=60, env=env)
    assert rows[0]["result"] == "error" and "timed out after 6 s" in rows[0]["why"][0]
    assert rows[1]["result"] == "pass", rows[1]


def test_the_stand_in_error_is_sticky_in_one_process(monkeypatch):
    """Why each case needs its own process: after a fault every later call fails too."""
    import importlib
    import sys

    sys.path.insert(0, str(HERE))
    fake = importlib.reload(importlib.import_module("fake_cuda_driver"))
    gpu = gpu_run.Gpu(fake)
    fault, ok = fake._Function("fault"), fake._Function("double_it")
    kp = np.zeros(3, np.uint64)
    gpu.launch(fault, {"grid": [1, 1, 1], "block": [1, 1, 1], "shared": 0}, int(kp.ctypes.data))
    with pytest.raises(gpu_run.CudaError, match="700"):
        gpu.sync(1)
    with pytest.raises(gpu_run.CudaError, match="700"):
        gpu.launch(ok, {"grid": [1, 1, 1], "block": [1, 1, 1], "shared": 0}, int(kp.ctypes.data))
    importlib.reload(fake)


def test_cluster_launch_and_static_shared_opt_in(tmp_path, monkeypatch):
    import importlib
    import sys

    sys.path.insert(0, str(HERE))
    fake = importlib.reload(importlib.import_module("fake_cuda_driver"))
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_CUDA_LOG", str(log))
    gpu = gpu_run.Gpu(fake)
    text = PTX.replace("double_it(", "double_it_static40k(", 1)
    spec = {**_spec("double_it_static40k"), "cluster": [2, 1, 1], "shared": 16 * 1024}
    sess = gpu_run.Session(gpu, text, spec)
    func = fake._Function("double_it_static40k")
    sess.prepare(func)          # 40 KiB static + 16 KiB dynamic > 48 KiB: opt in to the dynamic 16 KiB
    sess.reset()
    sess.launch(func)
    gpu.sync(1)
    out = sess.outputs()
    sess.close()
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    launch = next(c for c in calls if c["call"].startswith("cuLaunch"))
    assert launch["call"] == "cuLaunchKernelEx" and launch["cluster"] == [[2, 1, 1]] and launch["grid"] == [2, 1, 1]
    assert {"call": "cuFuncSetAttribute", "attr": 8, "value": 16 * 1024, "kernel": "double_it_static40k"} in calls
    assert sum(c["call"] == "cuMemFree" for c in calls) == 2
    src = out["src"][0]
    assert np.array_equal(out["dst"][0], src * np.float32(2))
    importlib.reload(fake)


def test_a_failed_free_is_raised():
    calls = []

    def release(h):
        calls.append(h)
        if h == 2:
            raise gpu_run.CudaError("CUDA error 700 (CUDA_ERROR_ILLEGAL_ADDRESS): stand-in")

    with pytest.raises(gpu_run.CudaError, match="700"):
        gpu_run.release_all(release, [1, 2, 3])
    assert calls == [1, 2, 3]


def test_the_suite_script_writes_a_json_and_a_markdown_line_per_case(stand_in, tmp_path):
    """scripts/gpu_suite.py end to end on the stand-in (which runs no IR kernel: the case fails,
    and the reports say so with its part, target, policy, bound, result and time)."""
    import subprocess
    import sys

    _, env, _ = stand_in
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    r = subprocess.run([sys.executable, str(HERE.parent / "scripts" / "gpu_suite.py"), "--parts", "c", "--only",
                        "scalar_add [test]", "--jobs", "1", "--json", str(js), "--markdown", str(md)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=HERE.parent)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "device: Stand-in H200 (sm_90)" in r.stdout and "[1/1" in r.stdout
    data = json.loads(js.read_text())
    (row,) = data["rows"]
    assert row["id"] == "c ir scalar_add [test]" and row["result"] == "FAIL" and row["part"] == "c"
    assert data["counts"] == {"FAIL": 1} and data["budget_s"] == 300
    line = next(ln for ln in md.read_text().splitlines() if "scalar_add" in ln)
    assert line.startswith("| c | sm_90a | c ir scalar_add [test] | bounded | rtol 1e-06 atol 1e-06 | FAIL |")


def test_cases_past_the_budget_are_reported_not_run(stand_in):
    import time

    ptx, env, _ = stand_in
    rows = gpu_children.run_cases([_case(ptx, "double_it")], jobs=1, env=env, deadline=time.monotonic() - 1)
    assert rows[0]["result"] == "not-run" and "budget" in rows[0]["why"][0]
