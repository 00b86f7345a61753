#!/usr/bin/env python3
"""The CPU engine's speed, in CPU seconds of this process (sanitizer on, inorder schedule):

  - a uniform kernel: every lane of every warp on one path (bench_emulate's register loop,
    4 blocks of 256 threads, 2,000 iterations);
  - a divergent kernel: a reduction with early exits (nvcc `reduce.sm_80` shared_tree_max from
    its corpus sidecar: lanes past the input leave early, the shared-memory tree halves the
    active lanes each step);
  - the worked example's Triton sm_90a TMA+WGMMA matmul at M = N = K = 1024 (its corpus sidecar
    scaled by emulate.gallery.matmul_launch: 64 CTAs x 128 threads), output checked against numpy.

Thread-instructions per second = thread-instructions executed / CPU seconds.

    python benchmarks/bench_engine.py [--quick] [--matmul 1024]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(ROOT / "corpus" / "scripts"))   # the gallery (after benchmarks/: both have a common.py)

from bench_emulate import LOOP  # noqa: E402

from ptx2py import emulate  # noqa: E402

REDUCE = ROOT / "corpus" / "ptx" / "nvcc" / "reduce.sm_80.ptx"
REDUCE_SIDECAR = ROOT / "corpus" / "launch" / "nvcc" / "reduce.sm_80.json"
MATMUL_GOAL_CPU_S = 5.0


def timed_run(text: str, launch: dict, filename: str) -> tuple[float, object]:
    start = time.process_time()
    result = emulate.run(text, launch, filename=filename)
    return time.process_time() - start, result


def row(label: str, seconds: float, result, **extra) -> dict:
    n = int(result.stats["thread_instructions"])
    return {"kernel": label, "cpu_s": seconds, "thread_instructions": n,
            "warp_instructions": int(result.stats["warp_instructions"]),
            "thread_instructions_per_s": n / seconds if seconds > 0 else None,
            "reports": [r.render() for r in result.reports], **extra}


def uniform(blocks: int) -> dict:
    launch = {"kernel": "loop", "grid": [blocks, 1, 1], "block": [256, 1, 1],
              "args": [{"name": "out", "kind": "pointer", "dtype": "u32", "count": 256, "init": "zeros"}]}
    seconds, result = timed_run(LOOP, launch, "loop.ptx")
    return row(f"uniform: register loop, {blocks} x 256 threads", seconds, result)


def divergent(blocks: int) -> dict:
    from ptx2py.launch.plan import kernel_specs

    spec = next(s for s in kernel_specs(json.loads(REDUCE_SIDECAR.read_text())) if s["kernel"] == "shared_tree_max")
    launch = emulate.reduced_launch(spec, blocks)
    seconds, result = timed_run(REDUCE.read_text(), launch, str(REDUCE.relative_to(ROOT)))
    return row(f"divergent: reduce.sm_80 shared_tree_max, {launch['grid'][0]} blocks", seconds, result)


def matmul(n: int) -> dict:
    from gallery import BASE_PTX, check_output, matmul_launch

    seconds, result = timed_run(BASE_PTX.read_text(), matmul_launch(n, n, n), "matmul_tma_fp16_sm90.ptx")
    check = check_output(result.outputs, n, n, n)
    return row(f"Triton sm_90a TMA+WGMMA matmul {n}^3", seconds, result, matches_numpy=bool(check["ok"]),
               goal_cpu_s=MATMUL_GOAL_CPU_S)


def measure(quick: bool = False, matmul_n: int = 1024) -> dict:
    rows = [uniform(1 if quick else 4), divergent(1 if quick else 8), matmul(256 if quick else matmul_n)]
    return {"rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--matmul", type=int, default=1024, help="the matmul's M = N = K")
    args = ap.parse_args(argv)
    for r in measure(args.quick, args.matmul)["rows"]:
        rate = r["thread_instructions_per_s"]
        print(f"{r['kernel']:52} {r['thread_instructions']:>12,} thread-instr  {r['cpu_s']:8.2f} s CPU  "
              f"{rate:>12,.0f} /s" + (f"  numpy match: {r['matches_numpy']}" if "matches_numpy" in r else "")
              + (f"  reports: {len(r['reports'])}" if r["reports"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
