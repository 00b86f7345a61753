#!/usr/bin/env python3
"""The whole GPU suite in one script (under 5 minutes on one H200, `--quick` under 2):

  (a) round trips: corpus kernels' PTX -> Python -> PTX against their numpy reference (or the CPU
      engine's run of the same launch), and each with every global store's value changed (an
      edit that must not match);
  (b) the worked example and its wait_group 1 -> 0 edit against numpy's A @ B^T, timed;
  (c) the kernel-IR problems against their numpy references;
  (d) the CPU engine beside the GPU: every sidecar kernel of --engine-targets, every sidecar
      kernel using TMA, wgmma, mbarrier, clusters or stmatrix for the GPU's own target (tcgen05
      on an sm_100 GPU), and the worked example with its legitimate and broken edits.

Every case runs in a child process with a timeout (a sticky CUDA error or a hang fails that case
only), from two cubins: `--fmad=false`, compared by the case's policy (bit for bit, or within
the kernel's derived bound), and the default build, within the FMA-contraction bound; every
output buffer must have changed from its initial fill. scripts/gpusuite/gpu_cases.py lists the cases with
their references, policies, bounds and expectations.

    python scripts/gpu_suite.py --plan-only --json plan.json     # no GPU needed
    python scripts/gpu_suite.py [--quick] [--jobs N] [--json R.json] [--markdown R.md]

Exit 0 when every case gives what it expects, 1 otherwise, 77 when there is no GPU or
cuda-python (says why); --plan-only exits 1 when the plan has a problem or a case cannot be
prepared on the host.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks: corpus_check, its references, gallery

from gpusuite import gpu_cases, gpu_children  # noqa: E402

from ptx2py.verify import gpu_run  # noqa: E402

SKIP = 77
# CPU seconds of the engine side of a case: the means measured on 2 shared cores over 268 runs
# (every 7th sm_80 sidecar kernel, every sm_90a one) at the suite's reduced launch
ENGINE_S_BASE = 2.75
ENGINE_S_VARIANT = 3.6          # -G / -O0 / -g / -lineinfo builds
BUDGET_S = {"full": 300, "quick": 120}


# ------------------------------------------------------------------------------------ plan
def host_check(case) -> str:
    """Everything a case needs before a GPU: the PTX made, the launch planned (arguments, grid,
    cluster, TMA descriptor requests)."""
    from gpusuite.gpu_case_run import case_launch, case_text

    if case.source["kind"] == "ir":
        return "IR problem"
    d = case.to_dict()
    text = case_text(d)
    spec = case_launch(d)
    entry = gpu_run.entry_info(text, case.kernel)
    plans = gpu_run.plan_arguments(entry, spec)
    req = gpu_run.cluster_launch_request(spec, entry)
    metas = spec.get("tensordesc_meta") or []
    for p in plans:
        if p.role == "tensormap":
            bad = gpu_run.check_tensor_map_request(gpu_run.tensor_map_request(p, metas[p.value] if metas else None,
                                                                              1 << 20))
            if bad:
                raise RuntimeError(f"{p.arg}: {'; '.join(bad)}")
    cluster = "" if req["cluster"] == [1, 1, 1] else f", cluster {req['cluster']}"
    return f"{len(plans)} params, grid {req['grid']}{cluster}"


def plan(cc: int, args):
    from gpusuite.gpu_cases import ir_cases

    return gpu_cases.build_plan(cc, args.engine_targets.split(","), args.quick, args.parts, args.only, ir_cases)


def cost(case) -> float:
    """Estimated seconds of a case: its GPU side, and its engine side where the engine runs."""
    if case.expect_engine is None:
        return case.estimate_s
    variant = case.source.get("ptx", "").count(".") > 2
    return case.estimate_s + (ENGINE_S_VARIANT if variant else ENGINE_S_BASE)


def estimate(cases, jobs: int) -> dict:
    """The suite's wall time from its cases: the GPU side of each case (a child's start, two
    cubins, the launches) and the engine side of each (d) case, spread over `jobs` children;
    timed cases alone."""
    gpu = sum(c.estimate_s for c in cases if not c.timed)
    engine = sum(cost(c) - c.estimate_s for c in cases)
    timed = sum(c.estimate_s for c in cases if c.timed)
    return {"cases": len(cases), "gpu_side_s": round(gpu, 1), "engine_side_s": round(engine, 1),
            "timed_s": round(timed, 1), "jobs": jobs, "wall_s": round((gpu + engine) / max(jobs, 1) + timed, 1)}


def plan_line(c) -> str:
    engine = f" engine:{c.expect_engine}" if c.expect_engine else ""
    return f"({c.part}) {c.target:7} {c.policy:9} gpu:{c.expect_gpu:6}{engine:22} {c.id}  [{c.bound}] <- {c.reference}"


def run_plan_only(cases, args) -> int:
    failed = 0
    problems = gpu_cases.plan_problems(cases)
    for c in cases:
        note = ""
        if not args.no_host_check:
            try:
                note = host_check(c)
            except Exception as e:  # noqa: BLE001 - report every case
                failed += 1
                note = f"FAIL {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        print(plan_line(c) + (f"  ({note})" if note else ""), flush=True)
    est = estimate(cases, args.jobs)
    print(f"\n{len(cases)} cases: " + ", ".join(f"({p}) {sum(c.part == p for c in cases)}" for p in "abcd"))
    print(f"estimate on {args.jobs} jobs: {est['wall_s']} s (GPU side {est['gpu_side_s']} s, engine side "
          f"{est['engine_side_s']} s, timed {est['timed_s']} s)")
    for p in problems:
        print(f"plan problem: {p}")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": args.device, "estimate": est, "problems": problems,
                                               "host_check_failures": failed,
                                               "cases": [c.to_dict() for c in cases]}, indent=1, default=str))
    print(f"plan-only: {len(cases) - failed}/{len(cases)} cases prepared, {len(problems)} plan problems")
    return 1 if failed or problems else 0


# ------------------------------------------------------------------------------------ reports
def markdown(rows: list[dict], device: str, total_s: float) -> str:
    lines = [f"# GPU suite on {device}", "", f"{len(rows)} cases in {total_s:.0f} s: "
             + ", ".join(f"{k} {v}" for k, v in sorted(_counts(rows).items())), "",
             "| part | target | case | policy | bound | result | time (s) | why |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        why = "; ".join(r.get("why") or [])[:300].replace("|", "\\|")
        lines.append(f"| {r.get('part')} | {r.get('target')} | {r.get('id')} | {r.get('policy')} | {r.get('bound')} | "
                     f"{r.get('result')} | {r.get('seconds', '')} | {why} |")
    return "\n".join(lines) + "\n"


def _counts(rows):
    out: dict[str, int] = {}
    for r in rows:
        out[r.get("result", "?")] = out.get(r.get("result", "?"), 0) + 1
    return out


def device_cc() -> tuple[int, str] | None:
    gpu = gpu_run.get_gpu()
    return gpu.cc[0] * 10 + gpu.cc[1], f"{gpu.name} (sm_{gpu.cc[0]}{gpu.cc[1]}), driver {gpu.driver_version}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plan-only", action="store_true", help="list and prepare every case; no GPU needed")
    ap.add_argument("--no-host-check", action="store_true", help="with --plan-only: list only")
    ap.add_argument("--device", default="sm_90", help="with --plan-only: the GPU to plan for (sm_90, sm_100)")
    ap.add_argument("--quick", action="store_true", help="the quick subset (no build variants, test sizes)")
    ap.add_argument("--parts", default="abcd")
    ap.add_argument("--only", help="cases whose id contains one of these (comma-separated)")
    ap.add_argument("--engine-targets", default="sm_80", help="(d): the corpus builds run beside the engine")
    ap.add_argument("--jobs", type=int, default=min(12, os.cpu_count() or 1), help="child processes at a time")
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds a case may take")
    ap.add_argument("--budget", type=float, help="seconds for the whole run: cases not started by then are "
                    "reported not run (default 300, --quick 120)")
    ap.add_argument("--repeat", type=int, default=20, help="(b): timed launches")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json", help="the plan (--plan-only) or the results as JSON")
    ap.add_argument("--markdown", help="the results as a Markdown table")
    args = ap.parse_args(argv)
    t0 = time.monotonic()

    if args.plan_only:
        cc = int(args.device.removeprefix("sm_").rstrip("a"))
        return run_plan_only(plan(cc, args), args)

    why = gpu_run.skip_reason()
    if why:
        print(f"skip: {why}")
        return SKIP
    cc, device = device_cc()
    cases = plan(cc, args)
    est = estimate(cases, args.jobs)
    print(f"device: {device}; {len(cases)} cases on {args.jobs} jobs, estimated {est['wall_s']} s", flush=True)

    def progress(i, n, row):
        print(f"[{i}/{n} {time.monotonic() - t0:5.0f} s] {row.get('result', '?'):5} {row['id']} "
              f"({row.get('seconds', '-')} s)" + (f": {'; '.join(row.get('why') or [])[:200]}"
                                                  if row.get("result") != "pass" else ""), flush=True)

    budget = args.budget or BUDGET_S["quick" if args.quick else "full"]
    # the longest cases first (the engine's -G builds), so that the last child does not start late
    order = sorted(cases, key=lambda c: -cost(c))
    got = gpu_children.run_cases([c.to_dict() for c in order], args.jobs, args.timeout, repeat=args.repeat,
                                 warmup=args.warmup, progress=progress, deadline=t0 + budget - 10)
    by_id = {r["id"]: r for r in got}
    rows = [by_id[c.id] for c in cases]
    total = time.monotonic() - t0
    summary = {"device": device, "seconds": round(total, 1), "budget_s": budget, "estimate": est,
               "counts": _counts(rows), "rows": rows}
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1, default=str))
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows, device, total))
    for r in rows:
        ms = (r.get("builds") or {}).get("default", {}).get("median_ms")
        if ms is not None:
            print(f"  timed: {r['id']}: median {ms:.4f} ms over {args.repeat} launches")
    bad = [r for r in rows if r.get("result") != "pass"]
    print(f"\n{len(rows) - len(bad)}/{len(rows)} cases as expected in {total:.0f} s (budget {budget} s)")
    for r in bad:
        print(f"  {r.get('result')}: {r['id']}: {'; '.join(r.get('why') or [])[:300]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
