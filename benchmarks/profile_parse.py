#!/usr/bin/env python3
"""cProfile of parse+emit on the largest corpus files, summarised (docs/performance.md).

    python benchmarks/profile_parse.py [--files 12] [--mode warm|cold|both] [--top 15]

*cold*: the in-memory shape cache emptied before each file and nothing stored on
disk (every shape is parsed with the grammar and compiled once); *warm*: every
shape known. Prints, per mode, the functions with the largest own time and their
share of the total, then the share of the main phases (inclusive time).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats

from common import largest_files

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import parser, shapecache

PHASES = {  # (file suffix, function name) -> phase, by inclusive time
    ("parser.py", "parse_fast"): "parse (fast path, all of it)",
    ("parser.py", "_compile"): "  new shapes: grammar parse + builder",
    ("lark.py", "parse"): "    Lark parse of a chunk",
    ("shapes.py", "builder_code"): "    builder source + compile()",
    ("emitter.py", "emit"): "emit",
}


def run(texts, cold: bool) -> None:
    for text in texts:
        if cold:
            parser.SHAPES.forget(store=False)
        ptxgrammar.emit(ptxgrammar.parse(text))


def summary(stats: pstats.Stats, top: int) -> str:
    # The whole run's inclusive time: own times alone miss the generated builders,
    # which cProfile does not list (their time shows in the caller, ShapeCache.build).
    total = next(v[3] for (file, _line, fn),
                 v in stats.stats.items() if fn == "run" and file.endswith("profile_parse.py"))
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    out = [f"total {total:.2f} s (profiled)", "", "| own time | share | calls | function |", "|---:|---:|---:|---|"]
    for (file, line, name), (cc, nc, tt, ct, _callers) in rows:
        out.append(f"| {tt:.2f} s | {100 * tt / total:.1f} % | {nc} | `{os.path.basename(file)}:{line} {name}` |")
    out += ["", "| phase (inclusive) | share |", "|---|---:|"]
    for (suffix, name), label in PHASES.items():
        ct = sum(v[3] for (file, _line, fn), v in stats.stats.items() if fn == name and file.endswith(suffix))
        out.append(f"| {label} | {100 * ct / total:.1f} % |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=12)
    ap.add_argument("--mode", choices=("warm", "cold", "both"), default="both")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    os.environ[shapecache.ENV] = "off"
    texts = [ptxgrammar.read_ptx(p) for p in largest_files(args.files)]
    parser._parser("spans"), parser._parser("plain")      # grammar construction is not profiled
    for mode in (("warm", "cold") if args.mode == "both" else (args.mode,)):
        parser.SHAPES.forget(store=False)
        if mode == "warm":
            run(texts, cold=False)
        profile = cProfile.Profile()
        profile.runcall(run, texts, mode == "cold")
        print(f"## {mode}\n")
        print(summary(pstats.Stats(profile), args.top))
        print()


if __name__ == "__main__":
    main()
