"""`ptx2py lint` speed and findings over a folder of PTX: seconds per MB (parse excluded and
included), and every finding (on the corpus and corpus-external there should be none beyond the
known-invalid external lines).

    python benchmarks/bench_lint.py corpus/ptx [../shared/corpus-external] [--jobs 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _one(path: str):
    from ptx2py import ptxgrammar
    from ptx2py.lint import lint_module

    text = ptxgrammar.read_ptx(path)
    t0 = time.perf_counter()
    module = ptxgrammar.parse(text, path)
    t1 = time.perf_counter()
    found = [f"{v}" for v in lint_module(module, path)]
    t2 = time.perf_counter()
    return path, len(text.encode()), t1 - t0, t2 - t1, found


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--show", type=int, default=40, help="findings to print")
    args = ap.parse_args()
    files = [str(p) for f in args.folders for p in sorted(Path(f).rglob("*.ptx"))]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(_one, files, chunksize=4))
    size = sum(r[1] for r in rows) / 1e6
    parse = sum(r[2] for r in rows)
    lint = sum(r[3] for r in rows)
    findings = [m for r in rows for m in r[4]]
    print(f"{len(files)} files, {size:.1f} MB: lint {lint / size:.2f} s/MB (parse {parse / size:.2f} s/MB),"
          f" {len(findings)} findings")
    for m in findings[: args.show]:
        print(" ", m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
