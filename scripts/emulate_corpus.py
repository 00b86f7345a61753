#!/usr/bin/env python3
"""Run every corpus kernel that has a launch sidecar (sm_75..sm_90 by default, without the
arch-specific sm_90a/sm_100a/sm_120a builds) on the CPU engine at a reduced launch, under the
inorder, reverse and random:1 schedules. Verdicts (corpus_check.VERDICTS): `match` when every
run completes with no sanitizer report, with the same outputs under all three, and within each
independent reference the kernel has (the stored Triton-interpreter / Pallas-interpret / float64
reference of corpus/refs/, the numpy references of corpus/scripts/corpus_refs.py and
gemm_refs.py); `refused` (a located refusal), `mismatch`, `fail`, and `unverified` (no
reference: schedule agreement alone is not a pass). Prints one line per kernel, then every kernel
of those targets' PTX files that no sidecar describes (`no-sidecar`, with why), and a per-producer
summary (matching / refused / unverified / failing); --json writes every result.

    python scripts/emulate_corpus.py [--targets sm_80,sm_89|all] [--ctas 2] [--json out.json] [--only SUBSTR]
                                     [--shard I/N]   (then: --merge a.json b.json ... [--json all.json])
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks: corpus_check, its references, gallery

from corpus_check import cases, not_covered, run_case  # noqa: E402
from oracle_refs import ALL_TARGETS  # noqa: E402

DEFAULT_TARGETS = "sm_75,sm_80,sm_86,sm_89,sm_90"

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default=DEFAULT_TARGETS)
    ap.add_argument("--ctas", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=400_000)
    ap.add_argument("--only")
    ap.add_argument("--shard", default="0/1", help="I/N: only the cases numbered I mod N (parallel runs)")
    ap.add_argument("--merge", nargs="+", metavar="ROWS.json",
                    help="only sum up the --json rows of shards (a later file's row of a kernel wins)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    targets = set(ALL_TARGETS) if args.targets == "all" else set(args.targets.split(","))
    if args.merge:          # a later file's row replaces an earlier one of the same kernel (a rerun)
        rows = {(r["ptx"], r["kernel"]): r for f in args.merge for r in json.loads(Path(f).read_text())
                if r["status"] != "no-sidecar"}
        results = list(rows.values())
    else:
        shard, shards = (int(x) for x in args.shard.split("/"))
        results = []
        for i, (producer, ptx, spec) in enumerate(cases(targets, args.only)):
            if i % shards != shard:
                continue
            res = run_case(ptx, spec, args.ctas, args.max_steps, producer)
            res.update(producer=producer, ptx=str(ptx.relative_to(ROOT)), kernel=spec["kernel"])
            results.append(res)
            print(f"{res['status']:18} {res['ptx']}::{res['kernel']}  {res.get('why', '')[:200]}", flush=True)
        if shards > 1:          # the kernels no sidecar describes: listed by --merge
            return _write(args.json, results)
    print()
    covered = {(r["ptx"], r["kernel"]) for r in results}
    for res in not_covered(targets, args.only, covered):
        results.append(res)
        print(f"{res['status']:18} {res['ptx']}::{res['kernel'][:90]}  {res['why'][:160]}")
    print()
    for producer, c in sorted(summary(results).items()):
        print(f"{producer:8} " + ", ".join(f"{k} {c[k]}" for k in SUMMARY) + f" (of {sum(c.values())})")
    return _write(args.json, results)


SUMMARY = ("matching", "refused", "unverified", "failing", "no-sidecar")
GROUP = {"match": "matching", "refused": "refused", "unverified": "unverified", "no-sidecar": "no-sidecar"}


def summary(results: list[dict]) -> dict:
    """producer -> Counter of SUMMARY groups (a mismatch or a fail is failing)."""
    out: dict = collections.defaultdict(collections.Counter)
    for r in results:
        out[r["producer"]][GROUP.get(r["status"], "failing")] += 1
    return out


def _write(path, results) -> int:
    if path:
        def plain(v):
            return v.tolist() if hasattr(v, "tolist") else str(v)

        Path(path).write_text(json.dumps(results, indent=1, default=plain) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
