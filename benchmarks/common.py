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


_RSS_PROBE = """
import sys
def _status(key):
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(key + ':'))
{setup}
_base = _status('VmRSS')
try:                                   # reset the high-water mark to the current RSS (Linux >= 4.0)
    with open('/proc/self/clear_refs', 'w') as _f:
        _f.write('5')
    _reset = 1
except OSError:
    _reset = 0
{work}
print(_status('VmHWM'), _base, _reset)
"""


def work_rss_mb(setup: str, work: str, env: dict | None = None) -> dict:
    """Peak resident memory of `work` over the process's own baseline, in a fresh child.

    The child runs `setup` (imports, reading the input), notes its RSS (the baseline),
    resets the kernel's high-water mark (`/proc/self/clear_refs`, so the interpreter's
    start-up does not count), runs `work` and reads VmHWM. Returns {"peak_mb": VmHWM,
    "base_mb": the baseline, "work_mb": peak - baseline, "reset": whether the mark was
    reset (else the peak is since process start: work_mb can only be larger)}."""
    code = _RSS_PROBE.format(setup=setup, work=work)
    run_env = {**os.environ, **(env or {})}
    out = subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True,
                         env=run_env)
    peak, base, reset = (int(x) for x in out.stdout.split()[-3:])
    return {"peak_mb": peak / 1024, "base_mb": base / 1024, "work_mb": (peak - base) / 1024, "reset": bool(reset)}


def table(rows, headers) -> str:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([line.format(*headers), line.format(*("-" * w for w in widths))] + [line.format(*r) for r in rows])
