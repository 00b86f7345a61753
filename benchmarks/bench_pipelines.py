#!/usr/bin/env python3
"""The CPU engine on Hopper/Blackwell pipelines, one core: the worked example (Triton sm_90a fp16
TMA + mbarrier + WGMMA matmul) for one CTA at 128x128x64 (the issue's goal: <= 60 s) and at
256x256x128 (4 CTAs), and the Triton sm_100 tcgen05 matmul for one CTA; seconds and
thread-instructions per second, and whether the output matches numpy.

    python benchmarks/bench_pipelines.py
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks: corpus_check, its references, gallery

from gallery import BASE_PTX, check_output, matmul_launch  # noqa: E402

from ptx2py.emulate.frontend import run  # noqa: E402

SM100 = ROOT / "corpus" / "ptx" / "triton" / "matmul_tma_fp16_sm100.ptx"


def case(name, ptx: Path, m, n, k):
    spec = matmul_launch(m, n, k, ROOT / "corpus" / "launch" / "triton" / (ptx.stem + ".json"))
    t0 = time.perf_counter()
    res = run(ptx.read_text(), spec, filename=ptx.name)
    secs = time.perf_counter() - t0
    return {"case": name, "seconds": round(secs, 2), "reports": len(res.reports),
            "thread_instructions": int(res.stats["thread_instructions"]),
            "thread_instructions_per_second": int(res.stats["thread_instructions_per_second"]),
            "matches_numpy": check_output(res.outputs, m, n, k)["ok"]}


def main() -> int:
    rows = [case("sm_90a TMA+WGMMA, 1 CTA, 128x128x64 (goal <= 60 s)", BASE_PTX, 128, 128, 64),
            case("sm_90a TMA+WGMMA, 4 CTAs, 256x256x128", BASE_PTX, 256, 256, 128),
            case("sm_100a TMA+tcgen05, 1 CTA, 128x128x64", SM100, 128, 128, 64)]
    for r in rows:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
