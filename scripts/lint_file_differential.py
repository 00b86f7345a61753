"""Whole files: `ptx2py lint` against ptxas (lint/filediff.py), per producer.

    python scripts/lint_file_differential.py corpus/ptx ../shared/corpus-external /tmp/newcorpus \
        --json /tmp/filediff.json

Prints, per producer folder: files, lines, files ptxas accepts, the accepted files lint reports
errors on (and how many errors), files ptxas rejects and on how many lint names exactly /
at least ptxas' lines, and the lint speed (MB/s; the largest file's time). ptxas verdicts are cached
by file content in ~/.cache/ptx2py/ptxas-file-verdicts.json (`--cache`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from ptx2py.lint import differential, filediff

    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--ptxas")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "ptx2py" / "ptxas-file-verdicts.json"))
    ap.add_argument("--json", help="write the tallies and every disagreement")
    args = ap.parse_args()
    result = filediff.run(args.paths, args.ptxas or differential.default_ptxas(), args.cache, args.jobs)
    print(filediff.summary(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    bad = sum(t["false_alarm_files"] for t in result["producers"].values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
