#!/usr/bin/env python3
"""Compile time: kernel IR -> PTX with ptx2py (kernelir.compile_kernel) against
Triton compiling an equivalent kernel (benchmarks/triton_equivalents.py) for the
same target, in the same run.  Prints a table, the median ptx2py time (goal
<= 2 ms) and the median ratios.  ptx2py time covers the whole IR (JSON dict) -> PTX
text, in CPU time (``--wall``: wall-clock); Triton's times come from its own per-stage
compile times (fresh cache each): to PTX (IR building and the stages through "ptx",
the main ratio, the same product as ptx2py's) and to cubin (all stages, ptxas
included, a second row).  Triton's are wall-clock (ptxas is a subprocess), so with
the default CPU clock for ptx2py the ratio favours neither side on an idle machine
and favours Triton on a loaded one."""
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

from ptx2py.kernelir import PROBLEM_NAMES, compile_kernel, load_kernel  # noqa: E402
from ptx2py.kernelir.problems import problem_path  # noqa: E402


def ptx2py_ms(name, target, repeat, clock=time.process_time):
    """(median, first) ms of IR dict -> PTX text over `repeat` runs."""
    data = json.loads(problem_path(name).read_text())["kernel"]
    times = []
    for _ in range(repeat):
        t = clock()
        compile_kernel(load_kernel(data), target)
        times.append(clock() - t)
    return statistics.median(times) * 1e3, times[0] * 1e3


def profile(names, target, repeat, top=25):
    """cProfile `repeat` compiles (IR dict -> PTX text) of each problem: where the time goes."""
    import cProfile
    import pstats
    datas = [json.loads(problem_path(n).read_text())["kernel"] for n in names]
    for d in datas:   # the first compile fills the per-process caches
        compile_kernel(load_kernel(d), target)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeat):
        for d in datas:
            compile_kernel(load_kernel(d), target)
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return 0


def triton_ms(name, cap, repeat):
    from triton_equivalents import compile_triton
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="bench-ir-triton-") as cache:
            os.environ["TRITON_CACHE_DIR"] = cache  # a cold Triton cache each time
            t = time.perf_counter()
            compile_triton(name, cap)
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def triton_times_ms(name, cap, repeat):
    """(median ms to PTX, median ms to cubin), from Triton's per-stage compile times."""
    from triton_equivalents import compile_triton_timed
    ptx, cubin = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="bench-ir-triton-") as cache:
            os.environ["TRITON_CACHE_DIR"] = cache  # a cold Triton cache each time
            a, b = compile_triton_timed(name, cap)
        ptx.append(a)
        cubin.append(b)
    return statistics.median(ptx) * 1e3, statistics.median(cubin) * 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--repeat", type=int, default=50, help="ptx2py repeats (median)")
    ap.add_argument("--triton-repeat", type=int, default=3)
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--wall", action="store_true", help="ptx2py in wall-clock instead of CPU time")
    ap.add_argument("--profile", type=int, metavar="N", default=0,
                    help="instead: cProfile N compiles of each problem, print the top functions")
    args = ap.parse_args(argv)
    if args.profile:
        return profile(args.only or PROBLEM_NAMES, args.target, args.profile)
    clock = time.perf_counter if args.wall else time.process_time
    cap = int("".join(c for c in args.target[3:] if c.isdigit()))
    names = args.only or PROBLEM_NAMES
    have_triton = not args.no_triton
    if have_triton:
        try:
            import triton  # noqa: F401
        except ImportError:
            have_triton = False
            print("triton is not importable: ptx2py times only")
    print(f"target {args.target}; ptx2py median of {args.repeat} ({'wall' if args.wall else 'CPU'} time), "
          f"Triton median of {args.triton_repeat}")
    print(f"{'problem':16} {'ptx2py ms':>10} {'(first)':>8} {'Triton->PTX ms':>15} {'ratio':>7} "
          f"{'Triton->cubin ms':>17} {'ratio':>7}")
    ours, ratios, cubin_ratios = [], [], []
    for name in names:
        med, first = ptx2py_ms(name, args.target, args.repeat, clock)
        ours.append(med)
        cols = ["-", "-", "-", "-"]
        if have_triton:
            try:
                to_ptx, to_cubin = triton_times_ms(name, cap, args.triton_repeat)
                ratios.append(to_ptx / med)
                cubin_ratios.append(to_cubin / med)
                cols = [f"{to_ptx:.1f}", f"{to_ptx / med:.0f}x", f"{to_cubin:.1f}", f"{to_cubin / med:.0f}x"]
            except Exception as e:  # noqa: BLE001 - report and go on
                cols = [f"failed: {type(e).__name__}: {str(e).splitlines()[0][:60] if str(e) else ''}", "", "", ""]
        print(f"{name:16} {med:10.2f} {first:8.2f} {cols[0]:>15} {cols[1]:>7} {cols[2]:>17} {cols[3]:>7}")
    m = statistics.median(ours)
    print(f"median ptx2py compile time: {m:.2f} ms (goal <= 2 ms: {'met' if m <= 2 else 'NOT met'})")
    if ratios:
        print(f"median Triton/ptx2py ratio, to PTX: {statistics.median(ratios):.0f}x (goal >= 150x); "
              f"to cubin: {statistics.median(cubin_ratios):.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
