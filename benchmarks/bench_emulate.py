#!/usr/bin/env python3
"""Thread-instructions per second of the CPU engine (emulate/) on one core:
  - the IR matmul (kernelir matmul_rect at its test size, compiled for sm_80);
  - a corpus CUB block kernel (nvcc cub_block.sm_80, first sidecar kernel, one CTA);
  - the issue's yardstick: one CTA of 256 threads running ~10,000 instructions per thread
    (a register-only loop), goal < 10 s.

    python benchmarks/bench_emulate.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptx2py import emulate  # noqa: E402

LOOP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry loop(.param .u64 loop_param_0)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [loop_param_0];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, 0;
	mov.u32 %r3, 0;
$L__loop:
	mad.lo.s32 %r2, %r2, 3, %r1;
	xor.b32 %r2, %r2, %r3;
	add.s32 %r3, %r3, 1;
	setp.lt.u32 %p1, %r3, 2000;
	@%p1 bra $L__loop;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r2;
	ret;
}
"""


def report(label, result, seconds):
    s = result.stats
    print(f"{label:34} {s['thread_instructions']:>12,} thread-instr {seconds:8.2f} s "
          f"{s['thread_instructions'] / seconds:>12,.0f} thread-instr/s")


def bench_loop():
    launch = {"kernel": "loop", "grid": [1, 1, 1], "block": [256, 1, 1],
              "args": [{"name": "out", "kind": "pointer", "dtype": "u32", "count": 256, "init": "zeros"}]}
    t = time.perf_counter()
    r = emulate.run(LOOP, launch, sanitize=False)
    dt = time.perf_counter() - t
    report("loop: 1 CTA x 256 thr x ~10k instr", r, dt)
    print(f"{'':34} instructions per thread: {r.stats['thread_instructions'] / 256:,.0f}; goal < 10 s: "
          f"{'met' if dt < 10 else 'NOT met'}")


def bench_matmul():
    from ptx2py.kernelir import load_problem, make_inputs
    from ptx2py.kernelir.run_cpu import run_ir

    kernel, meta = load_problem("matmul_rect")
    params = {**meta["params"], **meta["test_params"]}
    inputs = make_inputs("matmul_rect", params)
    t = time.perf_counter()
    r = run_ir(kernel, params, inputs, "sm_80")
    report("IR matmul_rect (test size, sm_80)", r, time.perf_counter() - t)


CUB_SCAN = "_Z20block_scan_exclusiveILi256ELi16EEvPKiPi"


def cub_scan_launch(items=256 * 16):
    return {"kernel": CUB_SCAN, "grid": [1, 1, 1], "block": [256, 1, 1], "seed": 0,
            "args": [{"name": "in", "kind": "pointer", "dtype": "i32", "count": items, "init": "randint"},
                     {"name": "out", "kind": "pointer", "dtype": "i32", "count": items, "init": "zeros"}]}


def bench_cub():
    import numpy as np

    text = (ROOT / "corpus" / "ptx" / "nvcc" / "cub_block.sm_80.ptx").read_text()
    t = time.perf_counter()
    r = emulate.run(text, cub_scan_launch())
    dt = time.perf_counter() - t
    want = np.concatenate([[0], np.cumsum(r.outputs["in"])[:-1]]).astype(np.int32)
    report("CUB BlockScan<256,16> (1 CTA)", r, dt)
    print(f"{'':34} matches numpy exclusive scan: {bool((r.outputs['out'] == want).all())}; "
          f"reports: {len(r.reports)}")


if __name__ == "__main__":
    bench_loop()
    bench_matmul()
    bench_cub()
