#!/usr/bin/env python3
"""Grow a user shape cache as a long fuzz run would, fast: N inputs, each a kernel of
statements of shapes no earlier input had (register names without digits, so no two share
a shape), parsed as a fresh process would (the in-memory cache emptied, the store saved).
The store's folds (ptxgrammar/shapecache.py) keep it bounded; this prints its size.

    python scripts/grow_shape_cache.py DIR --inputs 100000 --shapes 2
    python benchmarks/bench_startup.py --grown-cache DIR
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
# Statement forms, each with a name slot: every name makes a shape of its own.
FORMS = ("\tmov.b32 %v{0}, 1;\n", "\tadd.s32 %w{0}, %w{0}, 3;\n", "\tld.global.u32 %x{0}, [%rd1+4];\n",
         "\tsetp.lt.u32 %p{0}, %y{0}, 8;\n")


def letters(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 26)
        out += "abcdefghijklmnopqrstuvwxyz"[r]
        if not n:
            return out


def input_text(i: int, shapes: int) -> str:
    body = "".join(FORMS[(i * shapes + k) % len(FORMS)].format(letters(i * shapes + k)) for k in range(shapes))
    return HEADER + body + "\tret;\n}\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="the cache folder (PTX2PY_SHAPE_CACHE)")
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--shapes", type=int, default=2, help="new shapes per input")
    args = ap.parse_args(argv)
    os.environ["PTX2PY_SHAPE_CACHE"] = str(args.folder)
    from ptx2py.ptxgrammar import emit, parse, parser, shapecache

    start = time.process_time()
    for i in range(args.inputs):
        parser.SHAPES.forget(store=True)
        text = input_text(i, args.shapes)
        assert emit(parse(text)) == text
        if i % 10_000 == 0:
            print(f"{i} inputs, {time.process_time() - start:.0f} s CPU", flush=True)
    sizes = {p.name: p.stat().st_size for p in sorted(args.folder.glob("shapes-*"))}
    print(f"{args.inputs} inputs, {args.inputs * args.shapes} shapes, {time.process_time() - start:.0f} s CPU; "
          f"store: " + ", ".join(f"{n} {s / 1e6:.2f} MB" for n, s in sizes.items())
          + f" (cap {(2 * shapecache.LOG_MAX + shapecache.INDEX_MAX + shapecache.INDEX_OVERHEAD) / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
