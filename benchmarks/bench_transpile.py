"""ptx2py's whole PTX -> Python -> PTX loop against pyptx 0.1.1's ptx_to_python alone.

    python benchmarks/bench_transpile.py [--repeat 3] [--files 12] [--sugar] [--wall]

For each of the 12 largest corpus files: ptx2py runs
``python_to_ptx(ptx_to_python(text))`` and asserts byte identity; pyptx runs
``pyptx.codegen.codegen.ptx_to_python(text, sugar=False)`` (one direction only).
With ``--sugar`` both sides run their readability passes: ptx2py's whole loop with
``sugar=True`` against pyptx's ``ptx_to_python(text, sugar=True)``.
Reports per-file times (best of interleaved repeats), MB/s, the ratio pyptx/ptx2py
(> 1 means ptx2py is faster) and their geometric mean over the files pyptx
handles (files it fails on are reported and excluded).

Times are CPU seconds of this process (``time.process_time``; both tools are
single-threaded Python), so a machine shared with other jobs does not skew the
ratio; ``--wall`` measures wall-clock time instead.
"""

from __future__ import annotations

import argparse
import time

from common import geomean, largest_files, table

from ptx2py import ptxgrammar
from ptx2py.transpile import ptx_to_python, python_to_ptx

clock = time.process_time  # main() switches it to perf_counter for --wall


def timed(fn, *args):
    """(seconds by `clock`, result or the exception raised)."""
    start = clock()
    try:
        result = fn(*args)
    except Exception as e:  # the peer fails on some inputs; that is reported, not fatal
        result = e
    return clock() - start, result


def ptx2py_loop(text: str) -> str:
    out = python_to_ptx(ptx_to_python(text))
    assert out == text, "round trip is not byte-identical"
    return out


def ptx2py_sugar_loop(text: str) -> str:
    import ptx2py

    out = python_to_ptx(ptx2py.ptx_to_python(text, sugar=True))
    assert out == text, "round trip (--sugar) is not byte-identical"
    return out


def phases(text: str, sugar: bool = False) -> tuple[float, float, float]:
    """(to Python, back to PTX) seconds of one loop and the Python's length, for the breakdown column."""
    import ptx2py

    t0 = clock()
    src = ptx2py.ptx_to_python(text, sugar=sugar)
    t1 = clock()
    python_to_ptx(src)
    t2 = clock()
    return t1 - t0, t2 - t1, len(src)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--files", type=int, default=12)
    ap.add_argument("--sugar", action="store_true", help="both tools with their sugar passes")
    ap.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    args = ap.parse_args()
    global clock
    if args.wall:
        clock = time.perf_counter
    from pyptx.codegen.codegen import ptx_to_python as pyptx_to_python

    ours_fn = ptx2py_sugar_loop if args.sugar else ptx2py_loop

    def peer_fn(text):
        return pyptx_to_python(text, sugar=args.sugar)

    rows, ratios, failures = [], [], []
    ours_bytes = ours_time = peer_bytes = peer_time = 0.0
    for path in largest_files(args.files):
        text = ptxgrammar.read_ptx(path)
        size = len(text.encode())
        ours_t, peer_t = [], []
        for _ in range(args.repeat):  # interleaved, so load changes hit both tools alike
            t, result = timed(ours_fn, text)
            if isinstance(result, Exception):
                raise result
            ours_t.append(t)
            t, presult = timed(peer_fn, text)
            peer_t.append(t)
        ours, peer = min(ours_t), min(peer_t)
        to_py, to_ptx, py_len = phases(text, args.sugar)
        ok = not isinstance(presult, Exception)
        name = str(path.relative_to(path.parents[1]))
        ours_bytes += size
        ours_time += ours
        if ok:
            peer_bytes += size
            peer_time += peer
            ratios.append(peer / ours)
        else:
            failures.append(f"{name}: {type(presult).__name__}: {str(presult)[:100]}")
        rows.append((name, f"{size / 1e6:.2f}", f"{ours * 1e3:.0f}", f"{to_py * 1e3:.0f}/{to_ptx * 1e3:.0f}",
                     f"{py_len / 1e6:.2f}", f"{size / ours / 1e6:.2f}",
                     f"{peer * 1e3:.0f}" if ok else "fails", f"{size / peer / 1e6:.2f}" if ok else "-",
                     f"{peer / ours:.2f}x" if ok else "-"))
    print(table(rows, ["file", "MB", "ptx2py loop ms", "to-py/to-ptx ms", "py MB", "ptx2py MB/s",
                       "pyptx ms", "pyptx MB/s", "ratio"]))
    for f in failures:
        print("pyptx fails (excluded):", f)
    print(f"\nptx2py PTX->Python->PTX: {ours_bytes / ours_time / 1e6:.2f} MB/s; "
          f"pyptx PTX->Python: {peer_bytes / peer_time / 1e6:.2f} MB/s" if peer_time else "")
    what = "sugar " if args.sugar else ""
    print(f"geometric mean ratio pyptx/ptx2py ({what}{'wall' if args.wall else 'CPU'} time) over {len(ratios)} "
          f"files (best of {args.repeat}, interleaved): {geomean(ratios):.2f}x")


if __name__ == "__main__":
    main()
