"""Shared helpers for the side-by-side benchmarks (ptx2py against pyptx 0.1.1)."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus" / "ptx"
sys.path.insert(0, str(ROOT))


def largest_files(n: int = 12) -> list[Path]:
    files = sorted(CORPUS.rglob("*.ptx"), key=lambda p: (os.path.getsize(p), str(p)))
    return files[-n:][::-1]


def timed(fn, *args):
    """(seconds, result or the exception raised)."""
    start = time.perf_counter()
    try:
        result = fn(*args)
    except Exception as e:  # the peer fails on some inputs; that is reported, not fatal
        result = e
    return time.perf_counter() - start, result


def median_time(fn, arg, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        t, result = timed(fn, arg)
        times.append(t)
    return statistics.median(times), result


def geomean(values) -> float:
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def peak_rss_mb(code: str) -> float:
    """Peak resident memory (MB) of a fresh Python process running `code`.

    Read from VmHWM: ru_maxrss of a forked child can report the parent's peak."""
    probe = code + ("\nprint(next(int(l.split()[1]) for l in open('/proc/self/status')"
                    " if l.startswith('VmHWM')))")
    out = subprocess.run([sys.executable, "-c", probe], check=True, cwd=ROOT, capture_output=True, text=True)
    return int(out.stdout.split()[-1]) / 1024


def table(rows, headers) -> str:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([line.format(*headers), line.format(*("-" * w for w in widths))] + [line.format(*r) for r in rows])
