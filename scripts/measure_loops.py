"""Share of natural loops (back edges of each function's control-flow graph) that
`--sugar` raises as `with loop(...)` blocks, and the raised constructs that disagree
with the graph (a loop that is no natural loop, a break that stays inside, a loop
exit shown as `skip_if`): `sugar.loopcheck`.

    python scripts/measure_loops.py [-j 2] [folders...]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def one(path: str):
    import ptx2py
    from ptx2py import ptxgrammar
    from ptx2py.sugar.loopcheck import check

    text = ptxgrammar.read_ptx(path)
    try:
        src = ptx2py.ptx_to_python(text, sugar=True, filename=path)  # as `ptx2py FILE --sugar` does
    except Exception as e:  # noqa: BLE001
        return path, 0, 0, [f"sugar failed: {e}"]
    rep = check(text, src)
    return path, rep.back_edges, rep.raised, rep.errors


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-j", type=int, default=None)
    ap.add_argument("-v", action="store_true", help="list files with loops left flat")
    ap.add_argument("folders", nargs="*", default=[str(ROOT / "corpus" / "ptx")])
    a = ap.parse_args(argv)
    files = sorted(str(p) for f in a.folders for p in Path(f).rglob("*.ptx"))
    total = raised = 0
    errors = []
    with ProcessPoolExecutor(a.j) as ex:
        for path, n, r, errs in ex.map(one, files, chunksize=4):
            total += n
            raised += r
            errors += [f"{path}: {e}" for e in errs]
            if a.v and r < n:
                print(f"{path}: {r}/{n} back edges raised")
    for e in errors:
        print(e)
    share = 100.0 * raised / total if total else 100.0
    print(f"files {len(files)}  back edges {total}  raised {raised} ({share:.1f}%)  disagreements {len(errors)}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
