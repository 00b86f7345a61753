#!/usr/bin/env python3
"""Compile time: kernel IR -> PTX with ptx2py (kernelir.compile_kernel) against
Triton compiling an equivalent kernel (benchmarks/triton_equivalents.py) for the
same target, in the same run.  Prints a table, the median ptx2py time (goal
<= 5 ms) and the ratio.  ptx2py time covers the whole IR (JSON dict) -> PTX
text; Triton time covers triton.compile (to PTX and cubin, fresh cache each)."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kernelir import PROBLEM_NAMES, compile_kernel, load_kernel  # noqa: E402
from kernelir.problems import problem_path  # noqa: E402


def ptx2py_ms(name, target, repeat):
    data = json.loads(problem_path(name).read_text())["kernel"]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        compile_kernel(load_kernel(data), target)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3, times[0] * 1e3


def triton_ms(name, cap, repeat):
    from triton_equivalents import compile_triton
    times = []
    for _ in range(repeat):
        os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-ir-triton-")
        t = time.perf_counter()
        compile_triton(name, cap)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--repeat", type=int, default=50, help="ptx2py repeats (median)")
    ap.add_argument("--triton-repeat", type=int, default=3)
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    cap = int("".join(c for c in args.target[3:] if c.isdigit()))
    names = args.only or PROBLEM_NAMES
    have_triton = not args.no_triton
    if have_triton:
        try:
            import triton  # noqa: F401
        except ImportError:
            have_triton = False
            print("triton is not importable: ptx2py times only")
    print(f"target {args.target}; ptx2py median of {args.repeat}, Triton median of {args.triton_repeat}")
    print(f"{'problem':16} {'ptx2py ms':>10} {'(cold)':>8} {'Triton ms':>10} {'ratio':>8}")
    ours, ratios = [], []
    for name in names:
        med, cold = ptx2py_ms(name, args.target, args.repeat)
        ours.append(med)
        tri = "-"
        ratio = "-"
        if have_triton:
            try:
                tm = triton_ms(name, cap, args.triton_repeat)
                tri, ratio = f"{tm:10.1f}", f"{tm / med:7.0f}x"
                ratios.append(tm / med)
            except Exception as e:  # noqa: BLE001 - report and go on
                tri = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:60] if str(e) else ''}"
        print(f"{name:16} {med:10.2f} {cold:8.2f} {tri:>10} {ratio:>8}")
    m = statistics.median(ours)
    print(f"median ptx2py compile time: {m:.2f} ms (goal <= 5 ms: {'met' if m <= 5 else 'NOT met'})")
    if ratios:
        print(f"median Triton/ptx2py ratio: {statistics.median(ratios):.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
