#!/usr/bin/env python3
"""The whole GPU suite in one script (under 5 minutes on one H200):

  (a) corpus kernels with launch sidecars: the original PTX against its own PTX -> Python -> PTX
      round trip (transpile.python_to_ptx(transpile.ptx_to_python(text))); outputs must match
      (bitwise, except where a kernel's float atomics make the result order-dependent: a stated
      tolerance);
  (b) the worked example: corpus/ptx/triton/matmul_tma_fp16_sm90.ptx against
      examples/worked_matmul/matmul_edited.ptx (wgmma.wait_group 1 -> 0 and the loop's
      mbarrier.arrive.expect_tx moved after the first TMA load); outputs must be
      identical; both timed;
  (c) kernelir.gpu_check: the 15 compiled IR problems against their numpy references;
  (d) the CPU engine against the GPU on the same cases (verify/engine_gpu.py): every corpus kernel
      with a launch sidecar for the --engine-targets (the engine's reduced launch of
      scripts/emulate_corpus.py, seeded inputs) and the 15 IR problems compiled for sm_80 and for
      the GPU's target at their test sizes; bitwise for integer and exact float results, within
      rtol 1e-5 / atol 1e-6 for `.approx` kernels and float atomics, by the numpy reference for
      order-dependent integer atomics. A kernel the engine refuses is listed, not compared.

    python scripts/gpu_suite.py [--repeat 50] [--warmup 5] [--only SUBSTR ...] [--skip-ir]
                                [--skip-engine] [--engine-targets sm_80,...] [--engine-only SUBSTR]
                                [--plan-only] [--json results.json]

Exit 0 when everything passes, 77 when there is no GPU / cuda-python (says why), 1 on any
failure. --plan-only does all the host-side work (round trips, argument plans, TMA descriptor
requests) without a GPU and exits 0/1.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks: corpus_check, its references, gallery

from ptx2py.transpile import ptx_to_python, python_to_ptx  # noqa: E402
from ptx2py.verify import gpu_run  # noqa: E402

SKIP = 77
CORPUS = ROOT / "corpus" / "ptx"
WORKED_BASE = CORPUS / "triton" / "matmul_tma_fp16_sm90.ptx"
WORKED_EDITED = ROOT / "examples" / "worked_matmul" / "matmul_edited.ptx"

# (PTX path under corpus/ptx, kernel (None: every sidecar kernel), rtol, atol, why a tolerance)
ROUND_TRIP = [
    ("nvcc/elementwise.sm_90a.ptx", "vector_add", None, None, ""),
    ("nvcc/reduce.sm_90a.ptx", "shared_tree_max", None, None, ""),
    ("nvcc/reduce.sm_90a.ptx", "histogram256", None, None, "integer atomics: order-independent"),
    ("nvcc/reduce.sm_90a.ptx", "dot_double", 1e-9, 0.0, "fp64 atomicAdd per warp: order-dependent"),
    ("nvcc/scan_softmax.sm_90a.ptx", "rmsnorm_half", None, None, ""),
    ("triton/add_fp16_sm90.ptx", None, None, None, ""),
    ("triton/softmax_fp32_b1024_w4_sm90.ptx", None, None, None, ""),
    ("triton/layernorm_fp16_b1024_w4_sm90.ptx", None, None, None, ""),
    ("triton/row_reduce_fp32_sm90.ptx", None, None, None, ""),
    ("triton/histogram_i32_sm90.ptx", None, None, None, "integer atomics: order-independent"),
    ("triton/matmul_fp16_128x128x64_w8s3_sm90.ptx", None, None, None, ""),
    ("triton/matmul_tma_fp16_sm90.ptx", None, None, None, "host TMA descriptors + WGMMA"),
    ("triton/matmul_devdesc_fp16_sm90.ptx", None, None, None, "on-device descriptors: global scratch"),
    ("triton/attn_fwd_fp16_d64_w4_sm90.ptx", None, None, None, ""),
    ("pallas/softmax_f32_1024_sm90.ptx", None, None, None, ""),
    ("pallas/matmul_f16_64x64x32_sm90.ptx", None, None, None, ""),
]


def cases(only):
    out = []
    for rel, kernel, rtol, atol, note in ROUND_TRIP:
        label = f"rt {rel.split('/')[-1].removesuffix('.ptx')}" + (f":{kernel}" if kernel else "")
        out.append(dict(kind="roundtrip", label=label, base=CORPUS / rel, kernel=kernel, rtol=rtol, atol=atol,
                        note=note))
    out.append(dict(kind="worked", label="worked matmul_tma wait_group 1->0, arrive moved", base=WORKED_BASE,
                    edited=WORKED_EDITED, kernel=None, rtol=None, atol=None, note="docs/worked_example.md"))
    if only:
        out = [c for c in out if any(s in c["label"] for s in only)]
    return out


def edited_text(case) -> tuple[str, str]:
    base = case["base"].read_text()
    if case["kind"] == "worked":
        return base, case["edited"].read_text()
    return base, python_to_ptx(ptx_to_python(base, filename=str(case["base"])))


def plan_case(case) -> str:
    """Host-side checks for a case (no GPU): sidecar, entry params, argument plans, TMA requests."""
    base, edited = edited_text(case)
    side = gpu_run.sidecar_for(str(case["base"]))
    if side is None:
        raise RuntimeError(f"no sidecar for {case['base']}")
    specs = [s for s in gpu_run.kernel_specs(json.loads(side.read_text()))
             if case["kernel"] in (None, s["kernel"])]
    if not specs:
        raise RuntimeError(f"sidecar {side.name} has no kernel {case['kernel']}")
    notes = []
    for spec in specs:
        e = gpu_run.entry_info(base, spec["kernel"])
        plans = gpu_run.plan_arguments(e, spec)
        gpu_run.launch_request(spec, e)
        ed = gpu_run.entry_info(edited, spec["kernel"])
        if [p.size for p in ed.params] != [p.size for p in e.params]:
            raise RuntimeError("edited parameter list differs")
        metas = spec.get("tensordesc_meta") or []
        for p in plans:
            if p.role == "tensormap":
                bad = gpu_run.check_tensor_map_request(
                    gpu_run.tensor_map_request(p, metas[p.value] if metas else None, 1 << 20))
                if bad:
                    raise RuntimeError(f"{p.arg}: {bad}")
        notes.append(f"{spec['kernel']}: {len(plans)} params")
    same = "byte-identical text" if base == edited else "text differs"
    return f"{'; '.join(notes)}; {same}"


def run_case(case, gpu, args) -> list[dict]:
    base, edited = edited_text(case)
    res = gpu_run.run_pair(str(case["base"]), edited, base_ptx=base, kernel=case["kernel"], repeat=args.repeat,
                           warmup=args.warmup, rtol=case["rtol"], atol=case["atol"])
    rows = []
    for r in res.get("kernels") or [{"kernel": case["kernel"], "status": res["status"],
                                     "error": res["message"]}]:
        r = dict(r)
        r["label"] = case["label"] if case["kernel"] or len(res.get("kernels", [])) <= 1 \
            else f"{case['label']}:{r['kernel']}"
        r["identical_text"] = base == edited
        r["tolerance"] = res.get("tolerance")
        rows.append(r)
    return rows


def run_ir(args) -> tuple[list[str], list[str]]:
    from ptx2py.kernelir import PROBLEM_NAMES, gpu_check

    gpu = gpu_check.GPU(gpu_check.driver())
    target = gpu.target()
    failed, lines = [], []
    lines.append(f"{'problem':16} {'sizes':5} {'ok':4} {'max abs err':>12} {'ptx2py ms':>10} {'torch ms':>9}")
    for name in PROBLEM_NAMES:
        for sz in ("test", "full"):
            try:
                ok, worst, ours, theirs = gpu_check.run_problem(gpu, name, sz, target, not args.no_time)
            except Exception as e:  # noqa: BLE001 - report every problem
                lines.append(f"{name:16} {sz:5} ERROR {type(e).__name__}: {e}")
                failed.append(f"{name}[{sz}]")
                continue
            if not ok:
                failed.append(f"{name}[{sz}]")
            fmt = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
            lines.append(f"{name:16} {sz:5} {'yes' if ok else 'NO':4} {worst:12.3g} {fmt(ours):>10} {fmt(theirs):>9}")
    return lines, failed


def engine_cases(targets, only):
    """(label, PTX text, launch, inputs, reference) of (d): the corpus sweep's cases, then the IR
    problems."""
    from corpus_check import cases as corpus_cases
    from corpus_check import small_launch, source_stem
    from corpus_refs import reference_for

    for producer, ptx, spec in corpus_cases(set(targets), only):
        yield (f"cpu-vs-gpu {ptx.relative_to(CORPUS)}::{spec['kernel'][:60]}", ptx.read_text(),
               small_launch(spec, 2), None, reference_for(producer, source_stem(ptx), spec["kernel"]))
    if only:
        return
    from ptx2py.kernelir import PROBLEM_NAMES, compile_kernel, load_problem, make_inputs
    from ptx2py.kernelir.run_cpu import ir_launch

    for name in PROBLEM_NAMES:
        kernel, meta = load_problem(name)
        params = {**meta["params"], **meta["test_params"]}
        launch, inputs = ir_launch(kernel, params, make_inputs(name, params))
        for target in ("sm_80", "sm_90a"):
            yield f"cpu-vs-gpu ir:{name}.{target}", compile_kernel(kernel, target), launch, inputs, None


def run_engine_vs_gpu(gpu, args) -> tuple[list[dict], list[str]]:
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    from corpus_check import _context
    from corpus_refs import check

    from ptx2py.emulate import EmulationError
    from ptx2py.emulate.frontend import seeded_inputs
    from ptx2py.verify.engine_gpu import compare_case, engine_outputs

    cc = gpu.cc[0] * 10 + gpu.cc[1]
    targets = [t for t in args.engine_targets.split(",")
               if int(t[3:].rstrip("a")) < cc or t == f"sm_{cc}" or t == f"sm_{cc}a"]
    todo = [c for c in engine_cases(targets, args.engine_only)
            if not ("ir:" in c[0] and c[0].endswith("sm_90a") and cc != 90)]
    t0 = time.monotonic()
    # the engine side on every core; spawned workers: the parent holds a CUDA context
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn")) as pool:
        cpu = list(pool.map(engine_outputs, *zip(*[c[:4] for c in todo])))
    print(f"  engine side: {len(todo)} cases in {time.monotonic() - t0:.0f} s")
    rows, failures = [], []
    for (label, text, spec, inputs, ref), done in zip(todo, cpu):
        t = time.monotonic()
        try:
            seeded = inputs or seeded_inputs(text, spec)
            probe = (lambda out, spec=spec, seeded=seeded: check(ref, _context(spec, seeded, out))) if ref else None
            row = compare_case(gpu, label, text, spec, inputs, check=probe, cpu=done,
                               order_dependent=ref.order_dependent if ref else frozenset())
        except EmulationError as e:
            row = {"label": label, "status": "engine-refused", "error": str(e).splitlines()[0]}
        except Exception as e:  # noqa: BLE001 - report, keep going
            row = {"label": label, "status": "error", "error": f"{type(e).__name__}: {e}"}
        row["seconds"] = round(time.monotonic() - t, 2)
        rows.append(row)
        if row["status"] in ("mismatch", "error"):
            failures.append(f"{label}: {row.get('error') or row.get('mismatches')}")
        how = ",".join(sorted({b["how"] for b in row.get("buffers", {}).values()}))
        print(f"  {label}: {row['status']} ({how or row.get('error', '')}) {row['seconds']} s", flush=True)
    return rows, failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--only", nargs="*", help="run only the cases whose label contains one of these")
    ap.add_argument("--skip-ir", action="store_true", help="skip (c), the kernelir problems")
    ap.add_argument("--no-time", action="store_true", help="(c): no timing")
    ap.add_argument("--skip-engine", action="store_true", help="skip (d), the CPU engine against the GPU")
    ap.add_argument("--engine-targets", default="sm_80",
                    help="(d): the corpus builds compared (those the GPU can run)")
    ap.add_argument("--engine-only", help="(d): only corpus PTX paths containing one of these (comma-separated)")
    ap.add_argument("--plan-only", action="store_true", help="host-side checks only; no GPU needed")
    ap.add_argument("--json", help="write all rows here")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    todo = cases(args.only)

    if args.plan_only:
        failed = 0
        for c in todo:
            try:
                print(f"{c['label']:44} ok   {plan_case(c)}")
            except Exception as e:  # noqa: BLE001
                failed += 1
                print(f"{c['label']:44} FAIL {type(e).__name__}: {e}")
        if not args.skip_engine:
            n = 0
            for label, text, spec, _, _ in engine_cases(args.engine_targets.split(","), args.engine_only):
                try:
                    gpu_run.plan_arguments(gpu_run.entry_info(text, spec["kernel"]), spec)
                    n += 1
                except Exception as e:  # noqa: BLE001
                    failed += 1
                    print(f"{label:44} FAIL {type(e).__name__}: {e}")
            print(f"(d) engine vs GPU: {n} cases planned")
        print(f"plan-only: {len(todo) - failed}/{len(todo)} cases planned ({time.monotonic() - t0:.1f} s)")
        return 1 if failed else 0

    why = gpu_run.skip_reason()
    if why:
        print(f"skip: {why}")
        return SKIP
    gpu = gpu_run.get_gpu()
    print(f"device: {gpu.name} (sm_{gpu.cc[0]}{gpu.cc[1]}), driver {gpu.driver_version}, "
          f"repeat {args.repeat}, warmup {args.warmup}")
    rows, failures = [], []
    for c in todo:
        t = time.monotonic()
        try:
            got = run_case(c, gpu, args)
        except Exception as e:  # noqa: BLE001 - report, keep going
            traceback.print_exc()
            got = [{"label": c["label"], "status": "error", "error": f"{type(e).__name__}: {e}"}]
        for r in got:
            r["seconds"] = round(time.monotonic() - t, 2)
            rows.append(r)
            if r.get("status") != "match":
                failures.append(f"{r['label']}: {r.get('error') or r.get('mismatches')}")
            print(f"  {r['label']}: {r.get('status')} ({r['seconds']} s"
                  + (f", {r['load']}" if r.get("load") else "") + ")", flush=True)
    print()
    print("(a) round trips, (b) worked example")
    print(gpu_run.format_table(rows))
    ir_lines = []
    if not args.skip_ir:
        print()
        print("(c) kernelir problems vs numpy")
        try:
            ir_lines, ir_failed = run_ir(args)
        except Exception as e:  # noqa: BLE001
            ir_lines, ir_failed = [f"ERROR {type(e).__name__}: {e}"], ["kernelir.gpu_check"]
        print("\n".join(ir_lines))
        failures += [f"kernelir {n}" for n in ir_failed]
    engine_rows = []
    if not args.skip_engine:
        print()
        print("(d) CPU engine vs GPU, same cases")
        engine_rows, engine_failed = run_engine_vs_gpu(gpu, args)
        failures += engine_failed
        counts = {}
        for r in engine_rows:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        print("  " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" (of {len(engine_rows)})")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "kernelir": ir_lines, "engine_vs_gpu": engine_rows,
                                               "failures": failures},
                                              indent=1, default=str))
    print()
    print(f"total {time.monotonic() - t0:.1f} s")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("all GPU checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
