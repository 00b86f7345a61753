#!/usr/bin/env python3
"""Corpus kernels with a launch sidecar that use the Hopper/Blackwell pipeline machinery (TMA,
mbarrier, wgmma, mma.sync, ldmatrix/stmatrix, tcgen05) on the CPU engine: a reduced launch
under three schedules (run_case in corpus/scripts/corpus_check.py: no report and the same outputs under all
three; a kernel with a numpy reference in corpus/scripts/gemm_refs.py matches it under each, and
only its float-atomic outputs may differ between schedules). Prints one line per kernel and
counts per producer, target and capability.

    python scripts/emulate_pipelines_corpus.py [--ctas 1] [--json out.json] [--only SUBSTR]
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks: corpus_check, its references, gallery

from corpus_check import cases, kernel_text, run_case  # noqa: E402

FEATURES = {"tma": r"cp\.async\.bulk", "mbarrier": r"\bmbarrier\.", "wgmma": r"\bwgmma\.",
            "mma.sync": r"\bmma\.sync", "ldmatrix": r"\b(ld|st)matrix\.", "tcgen05": r"\btcgen05\.",
            "cluster": r"\bbarrier\.cluster|\bmapa\b|%cluster_|\.multicast::cluster"}
ASYNC = {"tma", "mbarrier", "wgmma", "tcgen05", "cluster"}
TARGETS = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_120", "sm_120a"}


def features(text: str, kernel: str | None = None) -> list[str]:
    """The features a kernel uses: its own .entry's text (with the module's .func bodies, which it
    may call), or the whole module without a kernel name."""
    if kernel is not None:
        text = kernel_text(text, kernel)
    return [name for name, rx in FEATURES.items() if re.search(rx, text)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ctas", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=400_000)
    ap.add_argument("--only")
    ap.add_argument("--json")
    ap.add_argument("--async-only", action="store_true",
                    help="only kernels with TMA, mbarrier, wgmma or tcgen05 (not mma.sync/ldmatrix alone)")
    args = ap.parse_args(argv)
    results = []
    summary = collections.defaultdict(collections.Counter)
    for producer, ptx, spec in cases(TARGETS, args.only):
        feats = features(ptx.read_text(), spec["kernel"])
        if not feats or args.async_only and not ASYNC & set(feats):
            continue
        res = run_case(ptx, spec, args.ctas, args.max_steps)
        res.update(producer=producer, ptx=str(ptx.relative_to(ROOT)), kernel=spec["kernel"], features=feats)
        results.append(res)
        for f in feats:
            summary[(producer, f)][res["status"]] += 1
        print(f"{res['status']:18} {res['ptx']}::{res['kernel']} [{','.join(feats)}] {res.get('why', '')[:160]}",
              flush=True)
        if args.json:                    # after every kernel: a long sweep leaves what it did
            Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n")
    print()
    for (producer, feat), c in sorted(summary.items()):
        print(f"{producer:8} {feat:9} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
              + f" (of {sum(c.values())})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
