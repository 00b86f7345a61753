#!/usr/bin/env python3
"""`ptx2py verify` over the corpus: every sm_80, sm_90a and sm_100a file against
its own PTX -> Python -> PTX round trip (ptxas figures and SASS must be identical).

    python scripts/verify_corpus.py [--targets sm_80,sm_90a,sm_100a] [--jobs 2] [--sample N] [--json out.json]

--sample N takes N files spread over every producer (corpus folder) and target, round robin in
file order, for a run that fits a short budget; without it every file is verified.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def verify_one(path: str) -> dict:
    from ptx2py import ptxgrammar
    from ptx2py.transpile import ptx_to_python, python_to_ptx
    from ptx2py.verify.report import VerifyError, verify_texts

    text = ptxgrammar.read_ptx(path)
    edited = python_to_ptx(ptx_to_python(text))
    try:
        report = verify_texts(text, edited, base_name=path, edited_name=path + " (round trip)")
    except VerifyError as e:
        return {"file": path, "status": "no-tool", "message": str(e).splitlines()[0]}
    if not report.get("ok"):
        return {"file": path, "status": "fail", "message": "; ".join(report.get("errors", []))}
    same = report["identical_figures"] and report["identical_sass"] is not False
    return {"file": path, "status": "identical" if same else "differs", "ptxas": report["ptxas"],
            "kernels": len(report["kernels"]), "sass_compared": report["identical_sass"] is not None}


def spread(files: list[str], n: int) -> list[str]:
    """`n` of `files`, round robin over (producer folder, target) groups, each in file order."""
    groups: dict[tuple, list[str]] = {}
    for f in files:
        groups.setdefault((Path(f).parent.name, _target(f)), []).append(f)
    queues = [list(g) for _, g in sorted(groups.items())]
    out: list[str] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return sorted(out)


def _target(path: str) -> str:
    m = re.search(r"^\s*\.target\s+([\w, ]+)", Path(path).read_text(), re.M)
    return m.group(1).split(",")[0].strip() if m else ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="sm_80,sm_90a,sm_100a")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--sample", type=int, metavar="N", help="only N files, spread over producers and targets")
    ap.add_argument("--json")
    args = ap.parse_args()
    wanted = set(args.targets.split(","))
    files = []
    for path in sorted((ROOT / "corpus" / "ptx").rglob("*.ptx")):
        m = re.search(r"^\s*\.target\s+([\w, ]+)", path.read_text(), re.M)
        if m and wanted & {t.strip() for t in m.group(1).split(",")}:
            files.append(str(path))
    if args.sample:
        files = spread(files, args.sample)
    from tqdm import tqdm

    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(tqdm(pool.map(verify_one, files, chunksize=2), total=len(files), unit="file", file=sys.stderr))
    counts = Counter(r["status"] for r in results)
    kernels = sum(r.get("kernels", 0) for r in results if r["status"] == "identical")
    print(f"{len(files)} files ({args.targets}): " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + f"; {kernels} kernels with identical ptxas figures and SASS")
    for r in results:
        if r["status"] != "identical":
            print(f"  {r['file']}: {r['status']}: {r.get('message', '')}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0 if counts.get("identical", 0) == len(files) else 1


if __name__ == "__main__":
    sys.exit(main())
