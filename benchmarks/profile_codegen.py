"""Where the PTX -> Python -> PTX loop spends its time, phase by phase (CPU ms).

    python benchmarks/profile_codegen.py [--files 12] [--cprofile N]

Phases of `ptx_to_python`: parse, infer_style (count trivia), place (per-statement
explicit trivia), generate (the Python text, each statement laid out as it is generated;
render is 0: with no sugar pass there is no IR to render afterwards); of
`python_to_ptx`: plan (templates of the statements, `transpile.fastrun`), run (the DSL
recording), finish, emit. The GC is paused as the pipeline pauses it. `--cprofile N`
also prints the N functions with the most own time over the whole loop of the largest file.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time

from common import largest_files, table

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import emit, parse
from ptx2py.transpile import fastrun, ptx_to_python, python_to_ptx
from ptx2py.transpile.dsl import recorder
from ptx2py.transpile.generator import Generator, generate_python
from ptx2py.transpile.layout import place
from ptx2py.transpile.style import infer_style

PHASES = ["parse", "style", "place", "generate", "render", "plan", "run", "finish", "emit"]


def phase_times(text: str) -> dict:
    clock = time.process_time
    t = {}
    gc.disable()
    try:
        t0 = clock()
        module = parse(text)
        t["parse"] = clock() - t0
        memo: list = []
        t0 = clock()
        style = infer_style(module, memo=memo)
        t["style"] = clock() - t0
        t0 = clock()
        placements = list(place(module, style, memo))   # an iterator: drawn here to time it
        t["place"] = clock() - t0
        t0 = clock()
        gen = Generator(module, style)
        gen.placements = iter(placements)
        source = generate_python(gen)   # as ptx_to_python runs it: laid out as generated
        t["generate"] = clock() - t0
        t["render"] = 0.0               # (fused into generate: no IR is rendered afterwards)
        del module, gen, placements, memo
        recorder.begin()
        try:
            namespace = {"__name__": "__ptx__"}
            t0 = clock()
            plan = fastrun.plan(source, namespace)
            t["plan"] = clock() - t0
            exec(fastrun.HEADER_CODE, namespace)
            t0 = clock()
            fastrun.run(plan)
            t["run"] = clock() - t0
            t0 = clock()
            tree = recorder.current().finish()
            t["finish"] = clock() - t0
        finally:
            recorder.end()
        t0 = clock()
        out = emit(tree)
        t["emit"] = clock() - t0
        assert out == text
    finally:
        gc.enable()
    return t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=12)
    ap.add_argument("--cprofile", type=int, default=0)
    args = ap.parse_args()
    rows = []
    files = largest_files(args.files)
    for path in files:
        text = ptxgrammar.read_ptx(path)
        phase_times(text)  # warm: shape caches, imports
        t = phase_times(text)
        total = sum(t.values())
        rows.append((str(path.relative_to(path.parents[1])), f"{len(text.encode()) / 1e6:.2f}",
                     *[f"{t[p] * 1e3:.0f}" for p in PHASES], f"{total * 1e3:.0f}"))
    print(table(rows, ["file", "MB", *PHASES, "total"]))
    if args.cprofile:
        text = ptxgrammar.read_ptx(files[0])
        prof = cProfile.Profile()
        prof.enable()
        python_to_ptx(ptx_to_python(text))
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.cprofile)


if __name__ == "__main__":
    main()
