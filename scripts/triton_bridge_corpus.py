#!/usr/bin/env python3
"""from-triton over every Triton kernel configuration of the corpus (corpus/launch/triton/*.json):
is the PTX the corpus file's, and does the Python name every parameter?

    python scripts/triton_bridge_corpus.py [--json out.json] [STEM ...]

Each sidecar records the constexprs, warps, stages and target the corpus PTX was built with; the
source paths Triton writes into the debug info (kernels.py, and Triton's own library where the
kernel uses it) are taken from the corpus PTX's `.file` lines. "identical" is byte for byte."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LAUNCH = ROOT / "corpus" / "launch" / "triton"
PTX = ROOT / "corpus" / "ptx" / "triton"
KERNELS = ROOT / "corpus" / "src" / "triton" / "kernels.py"
FILE_LINE = re.compile(r'^\s*\.file\s+1\s+"([^"]+)"', re.M)
TRITON_ROOT = re.compile(r'^\s*\.file\s+\d+\s+"([^"]*/triton)/language/', re.M)


def one(stem: str, out: Path) -> dict:
    from ptx2py.launch.plan import entry_params

    side = json.loads((LAUNCH / f"{stem}.json").read_text())
    corpus = (PTX / f"{stem}.ptx").read_text()
    py = out / f"{stem}.py"
    cmd = ["ptx2py", "from-triton", f"{KERNELS}::{side['source'].split('::')[1]}", "--like",
           str(LAUNCH / f"{stem}.json"),
           "--record-path", FILE_LINE.search(corpus).group(1), "--sugar", "-o", str(py)]
    lib = TRITON_ROOT.search(corpus)
    if lib:
        cmd[-3:-3] = ["--record-triton-root", lib.group(1)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        return {"stem": stem, "ok": False, "error": run.stderr.strip().splitlines()[-1:]}
    ptx = py.with_suffix(".ptx").read_text()
    names = json.loads(py.with_suffix(".json").read_text())["param_names"] or []
    n = len(entry_params(ptx, side["kernel"]))
    named = len(names) == n and not any(re.fullmatch(r"param_\d+", x) for x in names)
    return {"stem": stem, "identical": ptx == corpus, "params": n, "named": named}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stems", nargs="*")
    ap.add_argument("--json")
    args = ap.parse_args()
    stems = args.stems or sorted(p.stem for p in LAUNCH.glob("*.json"))
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for stem in stems:
            rows.append(one(stem, Path(d)))
            r = rows[-1]
            if not (r.get("identical") and r.get("named")):
                print("DIFFERS", r, file=sys.stderr)
    total = len(rows)
    figures = {k: sum(1 for r in rows if r.get(k)) for k in ("identical", "named")}
    print(f"{total} configurations: PTX identical to the corpus file {figures['identical']}/{total}, "
          f"every parameter named {figures['named']}/{total}")
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": figures, "total": total, "rows": rows}, indent=1))
    return 0 if figures["identical"] == total and figures["named"] == total else 1


if __name__ == "__main__":
    sys.exit(main())
