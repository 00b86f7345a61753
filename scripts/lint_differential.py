"""The full differential run of `ptx2py lint` against ptxas, and its confusion matrix.

    python scripts/lint_differential.py                      # score the committed verdicts
    python scripts/lint_differential.py --regenerate         # new mutants from corpus/ptx, ptxas decides
    python scripts/lint_differential.py --matrix m.json      # also write the matrix + disagreements

Cases and ptxas verdicts: roundtrip_tests/cases/lint/differential.jsonl.gz (two seeded mutant sets
of every distinct instruction shape in corpus/ptx). Disagreements, each with its reason:
roundtrip_tests/cases/lint/differential_disagreements.jsonl (rewritten by every run).
ptxas runs niced, `--jobs` at a time (the newest ptxas here: pip's nvidia-cuda-nvcc, else PATH).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = ROOT / "roundtrip_tests" / "cases" / "lint" / "differential.jsonl.gz"
DISAGREEMENTS = ROOT / "roundtrip_tests" / "cases" / "lint" / "differential_disagreements.jsonl"
SEEDS = ((17, 12), (18, 10))  # (seed, mutants per shape)


def regenerate(ptxas: str | None, jobs: int) -> None:
    from ptx2py.lint import differential as D

    files = sorted((ROOT / "corpus" / "ptx").rglob("*.ptx"))
    cases, seen = [], set()
    for seed, per_shape in SEEDS:
        for c in D.generate(files, seed, per_shape):
            key = (c["version"], c["target"], c["instruction"])
            if key not in seen:
                seen.add(key)
                c["shape"] = f"{seed}:{c['shape']}"
                cases.append(c)
    for i, c in enumerate(cases):
        c["id"] = i
    ptxas = ptxas or D.default_ptxas()
    D.add_verdicts(cases, ptxas, jobs)
    bad = {c["shape"] for c in cases if c["mutation"] == "original" and c["ptxas"] == "reject"}
    kept = [c for c in cases if c["shape"] not in bad]
    D.write_cases(CASES, kept, {"seeds": SEEDS, "sources": ["corpus/ptx"], "ptxas": D.ptxas_version(ptxas),
                                "rejected_originals": len(bad)})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--ptxas")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--matrix")
    args = ap.parse_args()
    if args.regenerate:
        regenerate(args.ptxas, args.jobs)
    from ptx2py.lint import differential as D

    argv = ["score", str(CASES), "--disagreements", str(DISAGREEMENTS)]
    if args.matrix:
        argv += ["--matrix", args.matrix]
    return D.main(argv)


if __name__ == "__main__":
    sys.exit(main())
