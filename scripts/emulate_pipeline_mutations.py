#!/usr/bin/env python3
"""Pipeline mutation test on the CPU engine: for each corpus kernel with an asynchronous pipeline
(TMA, mbarrier, wgmma, tcgen05) that runs clean (scripts/emulate_pipelines_corpus.py --json),
weaken one synchronisation at a time -- delete an mbarrier wait (try_wait/test_wait) or arrive,
halve an expect_tx byte count, raise a wgmma.wait_group depth by one, delete a wgmma.commit_group,
a fence.proxy.async, a cp.async.bulk.wait_group, a tcgen05.commit or a barrier.cluster.wait -- and run the mutant at the
same reduced launch with the same inputs. It is caught when its outputs differ from the unmutated
kernel's or it gets a report (a deadlock or a refusal included).

Observable or not is decided from runs of the *unmutated* kernel under the three schedules,
never from the mutant's outcome (emulate/semantics/sites.py): a site is observable when, in one
of those runs, the synchronisation did work the engine models (a wait that blocked or made
copies visible, an arrive on a phase a wait observed, a wait_group that completed the group the
raised depth would leave pending, a fence whose fenced bytes an async-proxy read used, ...).
Sites that never run are "not executed"; observable mutants run under each schedule until one
catches them.

With --cover, each kernel runs at its coverage-driven launch (emulate/launch_scaling.py: the
reduced launch's problem-size scalars grown until every ring of stages wraps twice and no
mbarrier phase or group wait is left unexercised, within the default budget), printed per kernel.

    python scripts/emulate_pipeline_mutations.py [--sweep sweep.json] [--k 256] [--only SUBSTR] [--json out.json]
                                                 [--reuse earlier.json,...] [--base-only] [--cover]
                                                 [--site-kind SUBSTR,...]
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks: corpus_check, its references, gallery
sys.path.insert(0, str(ROOT / "scripts"))

from corpus_check import SCHEDULES, small_launch  # noqa: E402
from emulate_mutations import summarize  # noqa: E402
from sync_mutations import edit_statement, instruction_at, instructions  # noqa: E402

from ptx2py import ptxgrammar  # noqa: E402
from ptx2py.emulate import EmulationError, run  # noqa: E402
from ptx2py.emulate.semantics.sites import recording  # noqa: E402
from ptx2py.ptxgrammar.tree import IntLiteral  # noqa: E402

PIPELINE_FEATURES = {"tma", "mbarrier", "wgmma", "tcgen05", "cluster"}
MAX_STEPS = 400_000          # warp-instructions per block (the watchdog): a deadlocked mutant ends


def site_kind(item) -> str | None:
    mods, op = item.modifiers, item.opcode
    first = mods[0] if mods else ""
    if op == "mbarrier" and first in (".try_wait", ".test_wait", ".arrive", ".arrive_drop"):
        if first == ".arrive" and ".expect_tx" in mods and isinstance(item.operands[-1], IntLiteral):
            return "halve expect_tx of " + item.name
        return "delete " + item.name
    if op == "wgmma" and first == ".wait_group":
        return "raise depth of " + item.name
    if op == "wgmma" and first == ".commit_group":
        return "delete " + item.name
    if op == "fence" and ".proxy" in mods:
        return "delete " + item.name
    if op == "cp" and mods[:2] == (".async", ".bulk") and ".wait_group" in mods:
        return "delete " + item.name
    if op == "tcgen05" and first == ".commit":
        return "delete " + item.name
    if op == "barrier" and first == ".cluster" and ".wait" in mods:
        return "delete " + item.name
    return None


def sites(module, kernel):
    return [(path, kind) for path, item in instructions(module, kernel, device_functions=False)
            if (kind := site_kind(item))]


def mutate(module, path, kind):
    def change(instr):
        if kind.startswith("halve"):
            n = instr.operands[-1]
            return instr.with_changes(operands=instr.operands[:-1] + (n.with_changes(text=str(n.value // 2)),))
        n = instr.operands[0]
        return instr.with_changes(operands=(n.with_changes(text=str(n.value + 1)),) + instr.operands[1:])

    return edit_statement(module, path, None if kind.startswith("delete") else change)


def _launch(spec, k):
    """The sweep's reduced launch; with k, a K loop extent of up to k (so every pipeline stage
    and the refills run: mutants of guarded-off stages are otherwise unobservable)."""
    import numpy as np
    from corpus_check import LOOP_EXTENTS

    from ptx2py.emulate.frontend import reduced_launch

    if not k:
        return small_launch(spec, 1)
    block = int(np.prod(spec.get("block", [1])))
    return reduced_launch(spec, 1, max_elements=4 * block, scalars={**LOOP_EXTENTS, "K": k})


def kernels(sweep, k=None, only=None, base_only=False):
    """Pipeline kernels that passed the sweep (or, without one, every corpus kernel with a
    sidecar that uses them: an unmutated kernel that is not clean is counted apart)."""
    from ptx2py.launch.plan import kernel_specs

    if sweep is None:
        from corpus_check import cases
        from emulate_pipelines_corpus import TARGETS, features

        for _, ptx, spec in cases(TARGETS, None, variants=not base_only):
            text = ptx.read_text()
            if only and not any(o in str(ptx) for o in only.split(",")):
                continue
            if PIPELINE_FEATURES & set(features(text, spec["kernel"])):
                yield f"{ptx.relative_to(ROOT)}::{spec['kernel']}", text, _launch(spec, k), spec
        return
    for r in json.loads(Path(sweep).read_text()):
        if r["status"] != "match" or not PIPELINE_FEATURES & set(r.get("features", ())):
            continue
        side = ROOT / "corpus" / "launch" / Path(r["ptx"]).relative_to("corpus/ptx").with_suffix(".json")
        spec = next(s for s in kernel_specs(json.loads(side.read_text())) if s["kernel"] == r["kernel"])
        yield f"{r['ptx']}::{r['kernel']}", (ROOT / r["ptx"]).read_text(), _launch(spec, k), spec


def covered_launch(module, launch, label, spec):
    """(the coverage-driven launch, the line saying what was run) from the sweep's launch, reduced
    from the sidecar's `spec`."""
    from ptx2py.emulate.launch_scaling import scale_for_coverage

    def run_at(spec):
        return run(module, spec, filename=label, max_steps=MAX_STEPS)

    try:
        given = run_at(launch)
    except EmulationError as e:
        return launch, f"not scaled: {str(e).splitlines()[0]}"
    scaling = scale_for_coverage(launch, given, run_at, origin=spec)
    return scaling.launch, scaling.line().removeprefix("coverage: ")


def _outcome(module, launch, label, schedule):
    """(outputs or None, rendered reports) of one run; a refusal is a report."""
    try:
        r = run(module, launch, filename=label, schedule=schedule, max_steps=MAX_STEPS)
    except EmulationError as e:
        return None, [str(e)], set()
    return r.outputs, [x.render() for x in r.reports], r.executed


def observe(module, launch, label):
    """The unmutated kernel under each schedule: ({schedule: outputs}, reports, executed ids,
    ids of the synchronisations that did work)."""
    outs, reports, executed = {}, [], set()
    with recording() as acted:
        for sched in SCHEDULES:
            out, rep, ran = _outcome(module, launch, label, sched)
            outs[sched], reports, executed = out, reports + rep, executed | ran
    return outs, reports, executed, acted


def classify(module, path, executed, acted) -> str:
    key = id(instruction_at(module, path))
    return "not executed" if key not in executed else "observable" if key in acted else "unobservable"


def same(a, b):
    import numpy as np

    return a is not None and b is not None and all(np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8)) for k in a)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sweep", help="the --json of scripts/emulate_pipelines_corpus.py (default: find the kernels)")
    ap.add_argument("--json")
    ap.add_argument("--k", type=int, help="raise the K loop extent to this (default: the sweep's 64)")
    ap.add_argument("--only", help="comma-separated substrings of the kernels to mutate")
    ap.add_argument("--base-only", action="store_true",
                    help="without --sweep: only each sidecar's own PTX, not the -G/-lineinfo builds beside it")
    ap.add_argument("--reuse", help="comma-separated --json files of earlier runs: their mutant outcomes "
                    "are taken, not rerun (the unmutated runs and the classification are always redone; a "
                    "missed mutant now called observable is retried under the schedules it was not run in)")
    ap.add_argument("--cover", action="store_true", help="run each kernel at its coverage-driven launch "
                    "(emulate/launch_scaling.py) grown from the sweep's")
    ap.add_argument("--site-kind", help="comma-separated substrings of the mutations to run (e.g. "
                    "try_wait,fence.proxy.async); the rest are not run")
    args = ap.parse_args(argv)
    tally, rows, nkernels = collections.Counter(), [], 0
    earlier = {}
    for f in (args.reuse or "").split(","):
        for r in json.loads(Path(f).read_text()) if f else ():
            if "mutation" in r and r.get("how") != "not executed":
                earlier[(r["kernel"], tuple(r["site"]), r["mutation"])] = r
    for label, text, launch, spec in kernels(args.sweep, args.k, args.only, args.base_only):
        module = ptxgrammar.parse(text, filename=label)
        found = [(path, kind) for path, kind in sites(module, launch["kernel"])
                 if not args.site_kind or any(k in kind for k in args.site_kind.split(","))]
        if not found:
            continue
        scaled = None
        if args.cover:
            launch, scaled = covered_launch(module, launch, label, spec)
            print(f"launch  {label} {scaled}", flush=True)
        base, base_reports, executed, acted = observe(module, launch, label)
        if any(o is None for o in base.values()) or base_reports:
            print(f"base    {label} not clean: {base_reports[:1]}", flush=True)
            tally["base not clean"] += 1
            rows.append({"kernel": label, "base": "not clean", "why": base_reports[:1]})
            continue
        nkernels += 1
        for path, kind in found:
            cls = classify(module, path, executed, acted)
            if cls == "not executed":
                tally["not executed"] += 1
                rows.append({"kernel": label, "mutation": kind, "site": list(path), "how": "not executed"})
                continue
            mutant = mutate(module, path, kind)
            old = earlier.get((label, tuple(path), kind))
            tried = set(old.get("schedules") or (SCHEDULES if old.get("observable") == "observable"
                                                 else SCHEDULES[:1])) if old else set()
            caught, reports = bool(old and old["how"] != "missed"), (old or {}).get("why") or []
            for sched in SCHEDULES if cls == "observable" else SCHEDULES[:1]:
                if caught or sched in tried:
                    continue
                tried.add(sched)
                out, reports, _ = _outcome(mutant, launch, label, sched)
                caught = bool(reports) or not same(base[sched], out)
            how = old["how"] if old and old["how"] != "missed" else \
                "report" if reports else "output" if caught else "missed"
            tally[how] += 1
            tally[f"{cls} {'caught' if caught else 'missed'}"] += 1
            rows.append({"kernel": label, "mutation": kind, "site": list(path), "how": how, "observable": cls,
                         "schedules": sorted(tried), "why": reports[:1], "launch": scaled})
            print(f"{how:7} {cls:12} {label} {kind} at {list(path)} {reports[0][:150] if reports else ''}", flush=True)
    status = summarize(nkernels, tally, rows, args.json)
    obs = tally["observable caught"] + tally["observable missed"]
    if obs:
        print(f"observable (the synchronisation did work in an unmutated run): {obs}; caught "
              f"{tally['observable caught']} = {100 * tally['observable caught'] / obs:.1f}%; unobservable "
              f"{tally['unobservable caught'] + tally['unobservable missed']} ({tally['unobservable caught']} "
              "caught all the same)")
    return status


if __name__ == "__main__":
    sys.exit(main())
