"""The parent side of the GPU suite: every case in a child process of its own (scripts/gpusuite/gpu_child.py)
with a timeout, several at a time, so that a sticky CUDA error (700 illegal address, 716
misaligned, 719 launch failure) or a hang poisons only its own process; a child that dies or
runs out of time is reported as that case's error and the rest go on."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def child_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    suite = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "corpus" / "scripts")]   # gpusuite and its corpus checks
    env["PYTHONPATH"] = os.pathsep.join(suite + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(extra or {})
    return env


def run_child(case: dict, timeout_s: float, env: dict | None = None, repeat: int = 0, warmup: int = 0) -> dict:
    """One case in a fresh child process: its row, or an error row when the child died or hung."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ptx2py-gpu-case-") as d:
        case_file, row_file = Path(d) / "case.json", Path(d) / "row.json"
        case_file.write_text(json.dumps(case))
        cmd = [sys.executable, "-m", "gpusuite.gpu_child", str(case_file), str(row_file),
               "--repeat", str(repeat), "--warmup", str(warmup)]
        try:
            r = subprocess.run(cmd, cwd=ROOT, env=env or child_env(), capture_output=True, text=True,
                               timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return _error_row(case, f"timed out after {timeout_s:.0f} s (a hang?); the child was killed", t0)
        if row_file.is_file():
            row = json.loads(row_file.read_text())
            row.setdefault("seconds", round(time.monotonic() - t0, 2))
            row["wall_s"] = round(time.monotonic() - t0, 2)
            return row
        tail = (r.stderr or r.stdout or "").strip().splitlines()[-3:]
        return _error_row(case, f"the child exited with status {r.returncode} and no result: " + " | ".join(tail), t0)


def _error_row(case: dict, why: str, t0: float) -> dict:
    row = {k: case.get(k) for k in ("id", "part", "target", "kernel", "policy", "bound", "reference", "expect_gpu",
                                    "expect_engine")}
    return {**row, "result": "error", "why": [why], "seconds": round(time.monotonic() - t0, 2)}


def run_cases(cases: list[dict], jobs: int = 4, timeout_s: float = 120.0, env: dict | None = None,
              repeat: int = 0, warmup: int = 0, progress=None, deadline: float | None = None) -> list[dict]:
    """Rows in the cases' order. Timed cases run alone after the rest (their timings must not
    share the GPU); `progress(i, n, row)` is called as each row arrives. A case not started by
    `deadline` (time.monotonic()) is not run: its row says so, and it does not pass."""
    env = dict(env or child_env())
    cache = None
    if "PTX2PY_CUBIN_CACHE" not in env:     # one assembly per module and build, shared by the children
        cache = tempfile.TemporaryDirectory(prefix="ptx2py-cubins-")
        env["PTX2PY_CUBIN_CACHE"] = cache.name
    untimed = [c for c in cases if not c.get("timed")]
    timed = [c for c in cases if c.get("timed")]
    rows: dict[str, dict] = {}
    done = 0

    def one(case, rep=0, warm=0):
        nonlocal done
        if deadline is not None and time.monotonic() > deadline:
            row = {**_error_row(case, "not run: the suite's time budget was spent", time.monotonic()),
                   "result": "not-run"}
        else:
            row = run_child(case, case.get("timeout_s") or timeout_s, env, rep, warm)
        rows[case["id"]] = row
        done += 1
        if progress:
            progress(done, len(cases), row)
        return row

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(one, untimed))
        for case in timed:
            one(case, repeat, warmup)
    finally:
        if cache is not None:
            cache.cleanup()
    return [rows[c["id"]] for c in cases]
