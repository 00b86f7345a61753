"""--sugar readability side by side with pyptx 0.1.1's sugar, on the same corpus files.

For each corpus file with at least 500 instructions: non-blank, non-comment lines
of the sugar Python / PTX instruction count, for ptx2py (`ptx_to_python(t,
sugar=True)`, which keeps every .loc, comment and debug section) and pyptx
(`pyptx.codegen.codegen.ptx_to_python(t, sugar=True)`, which drops them).
Prints the median per producer for both and their ratio.

    python benchmarks/readability_vs_pyptx.py [-j 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from measure_readability import MIN_INSNS, code_lines  # noqa: E402


def one(path):
    import ptx2py
    from ptx2py.ptxgrammar import parse
    from ptx2py.ptxgrammar.tree import Instruction

    text = Path(path).read_bytes().decode("latin-1")
    n = sum(1 for x in parse(text).walk() if x.__class__ is Instruction)
    if n < MIN_INSNS:
        return path, None, None
    ours = code_lines(ptx2py.ptx_to_python(text, sugar=True)) / n
    try:
        from pyptx.codegen.codegen import ptx_to_python

        theirs = code_lines(ptx_to_python(text, sugar=True)) / n
    except Exception:  # noqa: BLE001 - pyptx cannot read every file
        theirs = None
    return path, ours, theirs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-j", type=int, default=None)
    args = ap.parse_args(argv)
    files = [str(f) for f in sorted((ROOT / "corpus" / "ptx").rglob("*.ptx"))]
    ours, theirs, failed = defaultdict(list), defaultdict(list), defaultdict(int)
    with ProcessPoolExecutor(args.j) as ex:
        for path, a, b in ex.map(one, files, chunksize=2):
            if a is None:
                continue
            prod = Path(path).parent.name
            ours[prod].append(a)
            if b is None:
                failed[prod] += 1
            else:
                theirs[prod].append(b)
    print(f"{'producer':10} {'files':>5} {'ptx2py':>7} {'pyptx':>7} {'ratio':>6} {'pyptx failed':>12}")
    for prod in sorted(ours):
        a = statistics.median(ours[prod])
        b = statistics.median(theirs[prod]) if theirs[prod] else float("nan")
        print(f"{prod:10} {len(ours[prod]):5d} {a:7.3f} {b:7.3f} {a / b:6.2f} {failed[prod]:12d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
