#!/usr/bin/env python3
"""Fingerprints of the CPU engine over the corpus sidecar sweep, to prove a change to the
engine (a faster scheduler, decoder or run loop) changes no result: for every sidecar kernel
(scripts/emulate_corpus.py's cases, at its reduced launch) under every schedule (inorder,
reverse, random:1), a SHA-256 of every output buffer's bytes and of every report (kind, place,
message, details), with the run's instruction counts and CPU time.

    python scripts/engine_fingerprints.py --json new.json [--only SUBSTR] [--limit N] [--shard I/N]
    (cd OLD_CHECKOUT && python /path/to/scripts/engine_fingerprints.py --json old.json ...)
    python scripts/engine_fingerprints.py --compare old.json new.json

Run it from the checkout whose engine it measures (the script imports ptx2py from the current
folder first). A run past --seconds of CPU is recorded as `timeout` and left out of the
comparison (an engine's time limit is not its result); the step budget is set past any corpus
kernel's (--max-steps), so the budget's own semantics do not decide an outcome either.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import sys
import time
from pathlib import Path

ROOT = Path.cwd()                            # the checkout whose engine is measured
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks

DEFAULT_TARGETS = "sm_75,sm_80,sm_86,sm_89,sm_90"
SCHEDULES = ("inorder", "reverse", "random:1")


class CaseTimeout(Exception):
    pass


def _alarm(_sig, _frame):
    raise CaseTimeout


def digest_outputs(outputs: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(outputs):
        a = outputs[name]
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def digest_reports(reports) -> str:
    rows = [json.dumps([r.kind, r.where, r.message, r.details], sort_keys=True, default=_plain) for r in reports]
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def _plain(v):
    return v.tolist() if hasattr(v, "tolist") else str(v)


def fingerprint(ptx: Path, spec: dict, ctas: int, max_steps: int, seconds: int) -> dict:
    from corpus_check import small_launch

    from ptx2py.emulate.errors import EmulationError
    from ptx2py.emulate.frontend import run, seeded_inputs

    text = ptx.read_text()
    small = small_launch(spec, ctas)
    out = {}
    try:
        inputs = seeded_inputs(text, small)
    except EmulationError as e:
        return {s: {"status": "refused", "why": str(e).splitlines()[0]} for s in SCHEDULES}
    for sched in SCHEDULES:
        start = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, seconds)      # CPU seconds: the load does not decide
        try:
            r = run(text, small, {k: v.copy() for k, v in inputs.items()}, schedule=sched,
                    filename=str(ptx.relative_to(ROOT)), max_steps=max_steps)
            row = {"status": "ran", "outputs": digest_outputs(r.outputs), "reports": digest_reports(r.reports),
                   "report_kinds": sorted({x.kind for x in r.reports}),
                   "warp_instructions": int(r.stats["warp_instructions"]),
                   "thread_instructions": int(r.stats["thread_instructions"])}
        except CaseTimeout:
            row = {"status": "timeout"}
        except EmulationError as e:
            row = {"status": "refused", "why": str(e).splitlines()[0]}
        except Exception as e:  # noqa: BLE001 - every kernel is recorded
            row = {"status": "crash", "why": f"{type(e).__name__}: {e}"}
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        row["cpu_s"] = time.process_time() - start
        out[sched] = row
    return out


def sweep(args) -> int:
    from corpus_check import cases

    signal.signal(signal.SIGPROF, _alarm)
    shard, shards = (int(x) for x in args.shard.split("/"))
    rows = []
    for i, (producer, ptx, spec) in enumerate(cases(set(args.targets.split(",")), args.only)):
        if i % shards != shard or (args.limit is not None and len(rows) >= args.limit):
            continue
        runs = fingerprint(ptx, spec, args.ctas, args.max_steps, args.seconds)
        rows.append({"producer": producer, "ptx": str(ptx.relative_to(ROOT)), "kernel": spec["kernel"], "runs": runs})
        cpu = sum(r["cpu_s"] for r in runs.values())
        print(f"{cpu:7.2f} s  {' '.join(r['status'] for r in runs.values()):24} {rows[-1]['ptx']}::{spec['kernel']}",
              flush=True)
    Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    total = sum(r["cpu_s"] for row in rows for r in row["runs"].values())
    print(f"{len(rows)} kernels x {len(SCHEDULES)} schedules, {total:.1f} s CPU -> {args.json}")
    return 0


def compare(old_path: str, new_path: str) -> int:
    """Every (kernel, schedule) both sweeps ran: same status, outputs and reports. Prints the
    differences and the CPU time of each side over the cases both completed."""
    old = {(r["ptx"], r["kernel"]): r["runs"] for r in json.loads(Path(old_path).read_text())}
    new = {(r["ptx"], r["kernel"]): r["runs"] for r in json.loads(Path(new_path).read_text())}
    same, differ, skipped, cpu = 0, [], 0, [0.0, 0.0]
    for key in sorted(old.keys() & new.keys()):
        for sched in SCHEDULES:
            a, b = old[key][sched], new[key][sched]
            if "timeout" in (a["status"], b["status"]):
                skipped += 1
                continue
            fields = ("status", "outputs", "reports", "why")
            if all(a.get(f) == b.get(f) for f in fields):
                same += 1
                cpu[0] += a["cpu_s"]
                cpu[1] += b["cpu_s"]
            else:
                differ.append((key, sched, {f: (a.get(f), b.get(f)) for f in fields if a.get(f) != b.get(f)}))
    for key, sched, what in differ:
        print(f"DIFFERENT {key[0]}::{key[1]} [{sched}]: {what}")
    speed = cpu[0] / cpu[1] if cpu[1] else float("nan")
    print(f"{same} runs identical, {len(differ)} different, {skipped} timed out on a side "
          f"({len(old.keys() & new.keys())} kernels in both); CPU over the identical runs: "
          f"{cpu[0]:.1f} s -> {cpu[1]:.1f} s ({speed:.2f}x)")
    return 1 if differ else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the fingerprints here")
    ap.add_argument("--compare", nargs=2, metavar=("OLD.json", "NEW.json"))
    ap.add_argument("--targets", default=DEFAULT_TARGETS)
    ap.add_argument("--only", help="comma-separated substrings of the PTX paths to run")
    ap.add_argument("--limit", type=int, help="at most N kernels")
    ap.add_argument("--shard", default="0/1", help="I/N: the cases numbered I mod N")
    ap.add_argument("--ctas", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=10**9)
    ap.add_argument("--seconds", type=int, default=60, help="CPU seconds a run may take (past them: timeout)")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.json:
        ap.error("--json or --compare")
    return sweep(args)


if __name__ == "__main__":
    sys.exit(main())
