#!/usr/bin/env python3
"""Run every corpus kernel that has a launch sidecar (sm_80/sm_89 by default) on the CPU engine
at a reduced launch, under the inorder, reverse and random:1 schedules; a kernel passes when
every run completes with no sanitizer report and all three give the same outputs. Prints one
line per kernel and a per-producer summary; --json writes every result.

    python scripts/emulate_corpus.py [--targets sm_80,sm_89] [--ctas 2] [--json out.json] [--only SUBSTR]
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from emulate import EmulationError, reduced_launch, run  # noqa: E402
from launch.plan import kernel_specs  # noqa: E402

SCHEDULES = ("inorder", "reverse", "random:1")


def _target_of(sidecar: dict, path: Path) -> str:
    t = sidecar.get("target")
    if isinstance(t, dict):
        cap = int(t.get("capability", 0))
        return "sm_90a" if cap == 90 else f"sm_{cap}"
    if isinstance(t, str):
        return t
    m = re.search(r"sm_?(\d+a?)", path.name)
    return f"sm_{m.group(1)}" if m else "?"


def cases(targets, only):
    for side in sorted((ROOT / "corpus" / "launch").rglob("*.json")):
        data = json.loads(side.read_text())
        target = _target_of(data, side)
        if target not in targets or (only and only not in str(side)):
            continue
        ptx = ROOT / "corpus" / data["ptx"] if "ptx" in data else None
        if ptx is None or not ptx.is_file():
            ptx = ROOT / "corpus" / "ptx" / side.relative_to(ROOT / "corpus" / "launch").with_suffix(".ptx")
        for spec in kernel_specs(data):
            yield side.parent.name, ptx, spec


def run_case(ptx: Path, spec: dict, ctas: int, max_steps: int) -> dict:
    text = ptx.read_text()
    block = 1
    for b in spec.get("block", [1]):
        block *= int(b)
    small = reduced_launch(spec, ctas, max_elements=4 * ctas * block)
    outs, t0 = [], time.perf_counter()
    steps = 0
    for sched in SCHEDULES:
        try:
            r = run(text, small, schedule=sched, filename=str(ptx.relative_to(ROOT)), max_steps=max_steps)
        except EmulationError as e:
            return {"status": "refused", "why": str(e).splitlines()[0]}
        except Exception as e:  # noqa: BLE001 - report every kernel
            return {"status": "crash", "why": f"{type(e).__name__}: {e}"}
        if any(x.kind == "trap" and "step limit" in x.message for x in r.reports):
            return {"status": "too-long", "why": r.reports[-1].render(), "schedule": sched}
        if r.reports:
            return {"status": "report", "why": r.reports[0].render(), "schedule": sched,
                    "kinds": sorted({x.kind for x in r.reports})}
        outs.append(r.outputs)
        steps += r.stats["thread_instructions"]
    same = all(np.array_equal(outs[0][k].view(np.uint8), o[k].view(np.uint8)) for o in outs[1:] for k in outs[0])
    return {"status": "pass" if same else "schedule-dependent", "seconds": time.perf_counter() - t0,
            "thread_instructions": steps, "grid": small["grid"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default="sm_80,sm_89")
    ap.add_argument("--ctas", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=400_000)
    ap.add_argument("--only")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    results = []
    summary = collections.defaultdict(collections.Counter)
    for producer, ptx, spec in cases(set(args.targets.split(",")), args.only):
        res = run_case(ptx, spec, args.ctas, args.max_steps)
        res.update(producer=producer, ptx=str(ptx.relative_to(ROOT)), kernel=spec["kernel"])
        results.append(res)
        summary[producer][res["status"]] += 1
        print(f"{res['status']:18} {res['ptx']}::{res['kernel']}  {res.get('why', '')[:200]}", flush=True)
    print()
    for producer, c in sorted(summary.items()):
        print(f"{producer:8} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) + f" (of {sum(c.values())})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
