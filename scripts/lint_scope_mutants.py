"""File-level scope mutants of corpus files (lint/scope_mutants.py): ptxas' verdicts and lint's score.

    python scripts/lint_scope_mutants.py                  # score lint against the stored verdicts
    python scripts/lint_scope_mutants.py --regenerate     # new mutants of corpus/ptx, ptxas decides

Cases and verdicts: roundtrip_tests/cases/lint/scope_mutants.jsonl.gz (each case: a corpus file,
its digest, the edit, ptxas' verdict and lines). Sources: the corpus files of 1-12 KB.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = ROOT / "roundtrip_tests" / "cases" / "lint" / "scope_mutants.jsonl.gz"
SEED, PER_FILE = 31, 4


def sources() -> list[Path]:
    return [p for p in sorted((ROOT / "corpus" / "ptx").rglob("*.ptx")) if 1_000 <= p.stat().st_size <= 12_000]


def main() -> int:
    from ptx2py.lint import differential as D
    from ptx2py.lint import scope_mutants as S

    ap = argparse.ArgumentParser()
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--ptxas")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="write the score and every disagreement")
    args = ap.parse_args()
    if args.regenerate:
        ptxas = args.ptxas or D.default_ptxas()
        cases = S.generate(ROOT, sources(), SEED, PER_FILE)
        S.add_verdicts(ROOT, cases, ptxas, args.jobs)
        D.write_cases(CASES, cases, {"seed": SEED, "per_file": PER_FILE, "sources": "corpus/ptx 1-12 KB",
                                     "ptxas": D.ptxas_version(ptxas)})
    header, cases = D.split_header(D.read_cases(CASES))
    result = S.score(ROOT, cases)
    m = result["matrix"]
    print(f"{result['cases']} scope mutants (ptxas {header.get('ptxas', '?')}): accepted {m['accept']},"
          f" rejected {m['reject']}; false positives {result['false_positives']};"
          f" caught at the line {100 * result['caught_share']:.1f}%")
    for what, row in sorted(result["by_mutation"].items()):
        print(f"  {what:20} ptxas accepts {row['accept']:4} rejects {row['reject']:4}  lint agrees {row['agree']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
