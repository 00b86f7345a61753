#!/usr/bin/env python3
"""Synchronisation mutation test on the CPU engine: for each kernel, delete one `bar.sync` /
`barrier.sync`, or one `cp.async.wait_group` / `wait_all`, or weaken one `shfl.sync` member
mask to its low half, one at a time; run the mutant at the same reduced launch with the same
seeded inputs; it is *caught* when its outputs differ from the unmutated kernel's or it gets a
sanitizer report (or the run deadlocks/refuses). The unmutated kernels must run clean.

Kernels: the 15 IR problems compiled for sm_80 and sm_90a (test sizes; the matmul and attention
problems at the smaller MUTATION_PARAMS), and the corpus kernels of a sweep
(scripts/emulate_corpus.py --json) that pass there.

    python scripts/emulate_mutations.py [--no-corpus] [--no-ir] [--json out.json]
"""
from __future__ import annotations

import argparse
import collections
import gc
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks: corpus_check, its references, gallery

from corpus_check import small_launch  # noqa: E402
from sync_mutations import SCHEDULES, mutate, observe, sync_sites  # noqa: E402
from sync_mutations import outcome as run_outcome  # noqa: E402

from ptx2py import ptxgrammar  # noqa: E402
from ptx2py.emulate import EmulationError, run  # noqa: E402


def outcome(module, launch, inputs, filename, executed=None):
    try:
        r = run(module, launch, inputs, filename=filename, max_steps=300_000)
    except EmulationError as e:
        return None, [str(e)]
    if executed is not None:
        executed |= r.executed
    return r.outputs, [x.render() for x in r.reports]


def same(a, b):
    return a is not None and b is not None and all(np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8)) for k in a)


# the matmul and attention problems at sizes that still cross their tiles (two K tiles of 16, a
# ragged edge, several key blocks) but run in seconds: every mutant runs up to three schedules
MUTATION_PARAMS = {"matmul_512": {"M": 20, "N": 24, "K": 20}, "matmul_rect": {"M": 21, "N": 19, "K": 18},
                   "attention_d64": {"S": 12}, "attention_d128": {"S": 10}}


def ir_kernels():
    from ptx2py.kernelir import PROBLEM_NAMES, compile_kernel, load_problem, make_inputs
    from ptx2py.kernelir.run_cpu import ir_launch

    for name in PROBLEM_NAMES:
        kernel, meta = load_problem(name)
        params = {**meta["params"], **meta["test_params"], **MUTATION_PARAMS.get(name, {})}
        launch, inputs = ir_launch(kernel, params, make_inputs(name, params))
        for target in ("sm_80", "sm_90a"):
            yield f"ir:{name}.{target}", compile_kernel(kernel, target), launch, inputs


def corpus_kernels(sweep_json, ctas=2):
    from ptx2py.launch.plan import kernel_specs

    results = json.loads(Path(sweep_json).read_text())
    for r in results:
        if r["status"] not in ("match", "unverified"):       # clean runs, with or without a reference
            continue
        side = ROOT / "corpus" / "launch" / Path(r["ptx"]).relative_to("corpus/ptx").with_suffix(".json")
        if not side.is_file():      # another build of a source (X.sm_80.G.ptx): X.sm_80.json
            side = side.with_name(side.name.rsplit(".", 2)[0] + ".json")
        spec = next(s for s in kernel_specs(json.loads(side.read_text())) if s["kernel"] == r["kernel"])
        yield f"{r['ptx']}::{r['kernel']}", (ROOT / r["ptx"]).read_text(), small_launch(spec, ctas), None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-ir", action="store_true")
    ap.add_argument("--corpus-sweep", help="the --json of scripts/emulate_corpus.py (corpus kernels that pass)")
    ap.add_argument("--skip", default="", help="comma-separated substrings of kernels to leave out")
    ap.add_argument("--skip-file", help="a file of comma-separated kernel labels to leave out (done before)")
    ap.add_argument("--ctas", type=int, default=2, help="CTAs of the corpus kernels' reduced launch (default 2)")
    ap.add_argument("--shfl-sample", type=int, metavar="N",
                    help="weaken at most N shuffle masks a kernel, spread evenly over its shuffles (time)")
    ap.add_argument("--shard", default="0/1", help="I/N: only the kernels numbered I mod N (parallel runs)")
    ap.add_argument("--max-steps", type=int, default=300_000, help="warp-instruction limit of each run")
    ap.add_argument("--json")
    ap.add_argument("--merge", nargs="+", metavar="ROWS.json", help="only sum up the --json rows of earlier runs")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.json)
    sources = [] if args.no_ir else list(ir_kernels())
    skip = [s for s in args.skip.split(",") if s]
    if args.corpus_sweep:
        sources += list(corpus_kernels(args.corpus_sweep, args.ctas))
    if args.skip_file:
        skip += [s for s in Path(args.skip_file).read_text().split(",") if s]
    sources = [s for s in sources if not any(k in s[0] for k in skip)]
    shard, shards = (int(x) for x in args.shard.split("/"))
    sources = sources[shard::shards]
    tally = collections.Counter()
    rows = []
    kernels_with_sites = 0
    for label, text, launch, inputs in sources:
        gc.collect()                 # machines are reference cycles holding every buffer: free them
        module = ptxgrammar.parse(text, filename=label)
        sites = sample_shuffles(sync_sites(module, launch["kernel"]), args.shfl_sample)
        if not sites:
            continue
        try:
            seen = observe(module, launch, inputs, label, max_steps=args.max_steps)
            base_reports = [x.render() for _, r in seen.runs for x in r.reports]
        except EmulationError as e:
            base_reports = [str(e)]
        if base_reports:
            rows.append({"kernel": label, "base": "not clean", "why": base_reports[:1]})
            tally["base not clean"] += 1
            continue
        kernels_with_sites += 1
        for path, kind in sites:
            cls = seen.classify(module, path, kind)
            if cls == "not executed":
                tally["not executed"] += 1
                rows.append({"kernel": label, "mutation": kind, "site": list(path), "how": "not executed"})
                continue
            mutant = mutate(module, path, kind)
            for sched in SCHEDULES if cls == "observable" else SCHEDULES[:1]:
                out, reports = run_outcome(mutant, launch, inputs, label, sched, max_steps=args.max_steps)
                base = next(r.outputs for s, r in seen.runs if s == sched)
                caught = bool(reports) or not same(base, out)
                if caught:
                    break
            how = "report" if reports else "output" if caught else "missed"
            tally[how] += 1
            tally[f"{cls} {'caught' if caught else 'missed'}"] += 1
            rows.append({"kernel": label, "mutation": kind, "site": list(path), "caught": caught, "how": how,
                         "observable": cls, "schedule": sched, "why": reports[:1]})
            print(f"{how:7} {cls:12} {label} {kind} at {list(path)} {reports[0][:160] if reports else ''}",
                  flush=True)
    return summarize(kernels_with_sites, tally, rows, args.json)


def sample_shuffles(sites: list, n: int | None) -> list:
    """The sites with at most n of the shuffle-mask ones, evenly spaced (None: all)."""
    shfl = [s for s in sites if s[1].startswith("weaken")]
    if n is None or len(shfl) <= n:
        return sites
    keep = {id(shfl[round(i * (len(shfl) - 1) / max(n - 1, 1))]) for i in range(n)} if n else set()
    return [s for s in sites if not s[1].startswith("weaken") or id(s) in keep]


def merge(paths: list, json_path: str | None) -> int:
    """The summary of several runs (the shards of one) from their rows."""
    rows = [r for p in paths for r in json.loads(Path(p).read_text())]
    tally = collections.Counter()
    for r in rows:
        if r.get("base") == "not clean":
            tally["base not clean"] += 1
        elif r["how"] == "not executed":
            tally["not executed"] += 1
        else:
            tally[r["how"]] += 1
            tally[f"{r['observable']} {'caught' if r['caught'] else 'missed'}"] += 1
    kernels = len({r["kernel"] for r in rows if "mutation" in r})
    return summarize(kernels, tally, rows, json_path)


def summarize(kernels: int, tally, rows: list, json_path: str | None) -> int:
    """The closing line of a mutation run (caught by a report / by outputs, missed, never run) and its JSON."""
    n = tally["report"] + tally["output"] + tally["missed"]
    print(f"\n{kernels} kernels, {n} mutants: caught {tally['report'] + tally['output']} "
          f"({tally['report']} by a report, {tally['output']} by different outputs), missed {tally['missed']}; "
          f"{tally['not executed']} more sites never run at this size; "
          f"unmutated kernels not clean: {tally['base not clean']}")
    if tally["observable caught"] + tally["observable missed"] + tally["unobservable caught"]:
        # a caught mutant was observed, whatever the classifier said (counted with the observable ones)
        obs = tally["observable caught"] + tally["observable missed"] + tally["unobservable caught"]
        got = tally["observable caught"] + tally["unobservable caught"]
        print(f"observable at this size: {obs} of {n} ({tally['unobservable missed']} unobservable: the "
              f"synchronisation orders nothing at this launch); caught {got} of {obs} = {100 * got / obs:.1f}% "
              f"({tally['unobservable caught']} caught that the classifier called unobservable)")
    if json_path:
        Path(json_path).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
