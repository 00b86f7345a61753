"""The long fuzz run: generated trees (roundtrip_tests/strategies.py, with and without
trivia) and mutated PTX files (roundtrip_tests/mutations.py) through the whole pipeline
(parse -> emit, PTX -> Python -> PTX plain and --sugar, roundtrip/pipeline.py).

    nice -n 19 python scripts/fuzz_pipeline.py --inputs 100000 --jobs 2 --json /tmp/fuzz.json

The files mutated are corpus/ptx's and, where they exist, files the project was never tuned
on: ../shared/corpus-external (other projects' corpora), ../shared/ptx-syntax-probes
(accepted and generated probes) and every folder given with --seeds DIR.

Every input must give the same bytes back or a located error; the run counts the rest
(unlocated exceptions, wrong output, hangs past --timeout seconds) and exits 1 if any."""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import random
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "roundtrip_tests")]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


SEED_FOLDERS = [ROOT / "corpus" / "ptx", ROOT.parent / "shared" / "corpus-external",
                ROOT.parent / "shared" / "ptx-syntax-probes" / "accepted",
                ROOT.parent / "shared" / "ptx-syntax-probes" / "generated"]


def seed_files(limit: int, extra=()) -> list[Path]:
    """The .ptx files of up to `limit` bytes under the seed folders that exist (and `extra`)."""
    folders = [f for f in [*SEED_FOLDERS, *map(Path, extra)] if f.is_dir()]
    return sorted({p for f in folders for p in f.rglob("*.ptx") if p.stat().st_size <= limit})


def seeds(limit: int, extra=()) -> list[str]:
    return [p.read_bytes().decode("latin-1") for p in seed_files(limit, extra)]


PROGRESS: list = [None]   # a file this worker rewrites with its tally every 250 inputs


def check(text: str, timeout: int, tally, bad: list, label: str) -> None:
    from ptx2py.roundtrip.pipeline import outcome

    signal.alarm(timeout)
    try:
        kind, detail = outcome(text)
    except Hang:
        kind, detail = "hang", f"no answer within {timeout} s"
    finally:
        signal.alarm(0)
    tally[kind] += 1
    tally[label] += 1
    if kind in ("unlocated", "differs", "hang") and len(bad) < 50:
        bad.append({"kind": kind, "detail": detail, "input": text[:20000]})
    if PROGRESS[0] and sum(tally[k] for k in ("identical", "located", "differs", "unlocated", "hang")) % 250 == 0:
        Path(PROGRESS[0]).write_text(json.dumps({"tally": dict(tally), "bad": bad}))


def worker(args) -> dict:
    index, jobs, inputs, share_generated, seed, timeout, size, progress, extra = args
    signal.signal(signal.SIGALRM, _alarm)
    PROGRESS[0] = progress and f"{progress}.{index}"
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    from mutations import mutate
    from strategies import any_modules

    from ptx2py import ptxgrammar

    rng = random.Random(seed * 1000 + index)
    pool = seeds(size, extra)
    tally, bad = collections.Counter(), []
    mine = len(range(index, inputs, jobs))
    generated = int(mine * share_generated)

    @settings(max_examples=max(generated, 1), database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(any_modules(), st.integers(0, 3))
    def drawn(module, mutations):
        text = ptxgrammar.emit(module)
        check(mutate(text, rng, mutations) if mutations else text, timeout, tally,
              bad, "generated+mutated" if mutations else "generated")

    if generated:
        drawn()
    while sum(tally[k] for k in ("generated", "generated+mutated", "mutated")) < mine:
        check(mutate(rng.choice(pool), rng), timeout, tally, bad, "mutated")
    return {"tally": dict(tally), "bad": bad}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inputs", type=int, default=100_000, help="inputs in all (default 100000)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    p.add_argument("--generated", type=float, default=0.1, help="share of generated trees (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--timeout", type=int, default=60, help="seconds before an input counts as a hang")
    p.add_argument("--seed-size", type=int, default=2500, help="largest file mutated, bytes (default 2500)")
    p.add_argument("--seeds", action="append", default=[], metavar="DIR",
                   help="another folder of .ptx files to mutate (repeatable)")
    p.add_argument("--json", help="write the tally and the failing inputs here")
    p.add_argument("--progress", help="each worker rewrites PROGRESS.<i> with its tally as it goes")
    a = p.parse_args(argv)
    missing = [d for d in a.seeds if not Path(d).is_dir()]
    if missing:
        p.error(f"--seeds {missing[0]}: no such folder")
    start = time.time()
    files = seed_files(a.seed_size, a.seeds)
    jobs = [(i, a.jobs, a.inputs, a.generated, a.seed, a.timeout, a.seed_size, a.progress, a.seeds)
            for i in range(a.jobs)]
    with multiprocessing.get_context("fork").Pool(a.jobs) as pool:
        parts = pool.map(worker, jobs)
    tally = collections.Counter()
    bad = []
    for part in parts:
        tally.update(part["tally"])
        bad += part["bad"]
    total = sum(tally[k] for k in ("identical", "located", "differs", "unlocated", "hang"))
    folders = collections.Counter(next((str(f) for f in [*SEED_FOLDERS, *a.seeds] if p.is_relative_to(f)), "?")
                                  for p in files)
    summary = {"inputs": total, "seconds": round(time.time() - start), "seed_files": dict(folders),
               **{k: tally[k] for k in sorted(tally)}}
    print(json.dumps(summary))
    for b in bad[:5]:
        print(f"--- {b['kind']}: {b['detail'][-1500:]}")
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": summary, "failures": bad}, indent=1))
    return 1 if tally["differs"] or tally["unlocated"] or tally["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
