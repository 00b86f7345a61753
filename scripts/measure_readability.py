"""Readability of `--sugar` output per producer.

For every corpus file with at least MIN_INSNS instructions: (non-blank,
non-comment lines of the sugar Python) / (PTX instruction count). Prints the
median per producer (and the file count). `--plain` measures without sugar.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MIN_INSNS = 500


def code_lines(src: str) -> int:
    n = 0
    for line in src.split("\n"):
        s = line.strip()
        if s and not s.startswith("#"):
            n += 1
    return n


def instruction_count(text: str) -> int:
    from ptxgrammar import parse
    from ptxgrammar.tree import Instruction

    return sum(1 for n in parse(text).walk() if n.__class__ is Instruction)


def ratio(text: str, sugar: bool = True) -> tuple[float, int]:
    import transpile

    n = instruction_count(text)
    src = transpile.ptx_to_python(text, sugar=sugar)
    return code_lines(src) / max(n, 1), n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--plain", action="store_true", help="measure the output without sugar")
    ap.add_argument("--min", type=int, default=MIN_INSNS)
    ap.add_argument("folders", nargs="*", default=[str(ROOT / "corpus" / "ptx")])
    args = ap.parse_args(argv)
    per = defaultdict(list)
    for folder in args.folders:
        for f in sorted(Path(folder).rglob("*.ptx")):
            text = f.read_bytes().decode("latin-1")
            if instruction_count(text) < args.min:
                continue
            r, _ = ratio(text, sugar=not args.plain)
            per[f.parent.name].append((r, f.name))
    print(f"{'producer':10} {'files':>5} {'median':>7}  {'min':>6} {'max':>6}")
    for prod in sorted(per):
        rs = [r for r, _ in per[prod]]
        print(f"{prod:10} {len(rs):5d} {statistics.median(rs):7.3f}  {min(rs):6.3f} {max(rs):6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
