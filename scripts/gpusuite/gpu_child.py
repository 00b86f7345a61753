"""Run one GPU-suite case in this process and write its row as JSON (the child side of
scripts/gpusuite/gpu_children.py):

    python -m gpusuite.gpu_child CASE.json ROW.json [--repeat N --warmup N]

A failure of the case (a CUDA error, a timeout, a bug) is written as the row's error; the exit
status is 0 whenever a row was written, so the parent tells a case that failed from a child that
died (a crash, a kill on timeout) by the row's presence."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import traceback


def runner(case: dict):
    """The module that runs a case: verify.gpu_case_run, or the one the case names (the kernel-IR
    problems run in kernelir.gpu_check, a layer above this one)."""
    return importlib.import_module(case["source"].get("runner") or "gpusuite.gpu_case_run")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("row")
    ap.add_argument("--repeat", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=0)
    args = ap.parse_args(argv)
    with open(args.case) as f:
        case = json.load(f)
    try:
        row = runner(case).run_case(case, repeat=args.repeat, warmup=args.warmup)
    except Exception as e:  # noqa: BLE001 - the row says what went wrong; the next case runs anyway
        row = {k: case.get(k) for k in ("id", "part", "target", "kernel", "policy", "bound", "reference",
                                        "expect_gpu", "expect_engine")}
        row.update(result="error", why=[f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"],
                   traceback=traceback.format_exc()[-4000:])
    with open(args.row, "w") as f:
        json.dump(row, f, default=str)
    if any("TimeoutError" in w for w in row.get("why") or []):
        os._exit(0)     # a kernel still runs: leave at once rather than wait in the driver's teardown
    return 0


if __name__ == "__main__":
    sys.exit(main())
