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
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from emulate.corpus_check import cases, run_case  # noqa: E402

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
