#!/usr/bin/env python3
"""Every speed figure side by side with its peer, in one run:

    python benchmarks/run_all.py            # full: the 12 largest corpus files, 15 IR problems
    python benchmarks/run_all.py --quick    # smoke test: 2 small files, 1 problem, 1 repeat

1. parse+emit (ptxgrammar) against pyptx 0.1.1's parse, with the shape cache cold
   (nothing stored on disk), cold as installed, cold with a store learned from the
   *other* corpus files (the measured files held out), and warm;
2. the whole PTX -> Python -> PTX loop against pyptx's ptx_to_python(sugar=False)
   alone (cold, nothing stored; cold, as installed; warm), and the --sugar loop
   against pyptx's sugar, cold and warm;
3. kernel-IR compile against Triton, both to PTX and both to cubin (same ptxas);
4. peak RSS / input size on the largest file, for parse and for the whole loop;
5. CLI start-up as a whole process beside `import pyptx` (bench_startup; with --grown-cache DIR
   also with a shape cache grown by a long fuzz run);
6. the CPU engine: thread-instructions per second for a uniform and a divergent kernel, and the
   1024^3 Triton sm_90a TMA+WGMMA matmul's CPU time (bench_engine).

Writes results.json, results.md and results.png (per-file ratios against file
size) to --out (default: benchmarks/). Parse and loop times are CPU time of this
process (time.process_time: on a shared machine it moves less with the load than
wall time); IR compile and Triton are wall time (Triton runs ptxas in a child).
Ratios are peer time / ptx2py time, so > 1 means ptx2py is faster; geometric
means are over the files the peer handles (its failures are listed, excluded).
The work itself lives in bench_parse, bench_transpile and bench_compile_ir.

The cold rows (ptxgrammar/shapecache.py has the stores): every one starts from an empty
in-memory shape cache in this process (imports done, the grammar already built by the
priming below, so neither is timed).
- *cold, nothing stored*: no on-disk store and the shipped store off
  (PTX2PY_SHAPE_CACHE=off): the grammar builds every shape, a first run with nothing
  on disk at all.
- *cold, as installed*: the user's store empty, the store shipped with the package on
  (ptxgrammar/shipped_shapes.bin, learned from every corpus/ptx file by
  scripts/make_shape_store.py, so it holds the measured files' shapes): a user's first
  run after `pip install`. It is timed right after the nothing-stored run of the same
  file, so both are past the first file's one-time costs of the PTX->Python side. If
  the shipped store is stale (the grammar or a builder module changed since it was
  written), the package ignores it, this row equals the one above, and the run says so.
- *cold, stored* (parse only): the user's store learned from the other corpus files,
  the shipped store off: a file whose shapes are mostly, not all, known.

Time budget: a full run is about 7 CPU-minutes, so about 7 minutes on an idle 2-core
machine (2026-12-01: 404 s user + 2 s system for the whole process tree, run_all's
children included, `/usr/bin/time -v`; 31 min of wall time there at load average 8-17,
log: run_all_full_2026-12-01_loop.log). The --sugar section is ~2.5 CPU-minutes of it
(pyptx's sugar is ~83 s over the 12 files, ptx2py's sugar loop ~32 s, run twice: cold and
warm); the loops run once each (--loop-repeat 1, median of one), parse 3 repeats.
Peak RSS (section 4) is each probe's work over its own process's baseline (imports done,
input read; the high-water mark reset through /proc/self/clear_refs), one fresh child per
probe (common.work_rss_mb).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_compile_ir  # noqa: E402
import bench_engine  # noqa: E402
import bench_parse  # noqa: E402
import bench_startup  # noqa: E402
import bench_transpile  # noqa: E402
from common import CORPUS, geomean, largest_files, work_rss_mb  # noqa: E402

from ptx2py import ptxgrammar  # noqa: E402
from ptx2py.ptxgrammar import parser as grammar_parser  # noqa: E402
from ptx2py.ptxgrammar import shapecache  # noqa: E402

SECTIONS = ("parse", "loop", "sugar_loop", "ir", "rss", "startup", "engine")
EMPTY = {
    "parse": {"rows": [], "geomean": {"cold": None, "as_installed": None, "cold_stored": None, "warm": None}},
    "loop": {"rows": [], "geomean": {"cold": None, "as_installed": None, "warm": None}},
    "sugar_loop": {"rows": [], "geomean": {"cold": None, "warm": None}},
    "ir": {"rows": [], "summary": {"ptx2py_median_ms": None, "ratio_ptx_median": None, "ratio_cubin_median": None}},
    "rss": {"file": "-", "mb": 0.0, "rows": []},
    "startup": {"repeat": 0, "goal_s": bench_startup.GOAL_S, "rows": {}},
    "engine": {"rows": []},
}
GOALS = {"parse_warm": 10, "parse_cold": 5, "loop": 4, "sugar_loop": 2, "ir_to_ptx": 150,
         "ir_median_ms": 2, "rss_loop": 15, "startup_s": bench_startup.GOAL_S,
         "matmul_cpu_s": bench_engine.MATMUL_GOAL_CPU_S}
CPU = time.process_time
# the shipped-store column's note when the store was stale in the run
STALE_STORE = "; STALE in this run, so ignored: this column is nothing stored"


def cpu_timed(fn, *args):
    """(CPU seconds, result or the exception raised: the peer fails on some inputs)."""
    start = CPU()
    try:
        result = fn(*args)
    except Exception as e:  # noqa: BLE001 - reported per file, not fatal
        result = e
    return CPU() - start, result


def median_cpu(fn, arg, repeat):
    times, result = [], None
    for _ in range(repeat):
        t, result = cpu_timed(fn, arg)
        times.append(t)
    return statistics.median(times), result


def quick_files(n: int = 2) -> list[Path]:
    """Small files for --quick: the first `n` corpus files of at least 20 kB."""
    files = sorted(CORPUS.rglob("*.ptx"), key=lambda p: (p.stat().st_size, str(p)))
    return [p for p in files if p.stat().st_size >= 20_000][:n]


def name_of(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def failure(result) -> str | None:
    return f"{type(result).__name__}: {str(result)[:120]}" if isinstance(result, Exception) else None


# --- 1. parse ----------------------------------------------------------------------

class ShapeStores:
    """The on-disk shape stores the cold measurements run against, in a temporary
    folder (the user's own store is never read or written by the benchmark)."""

    def __init__(self, held_out: list[Path], prime_files: list[Path]):
        self.root = Path(tempfile.mkdtemp(prefix="ptx2py-bench-shapes-"))
        self.primed = self.root / "primed"
        self.shipped_current = shapecache.open_shipped(shapecache.SHIPPED) is not None
        os.environ[shapecache.ENV] = str(self.primed)
        os.environ[shapecache.SHIPPED_ENV] = "off"          # the primed store learns every shape
        grammar_parser.SHAPES.forget(store=False)
        start = CPU()
        for path in prime_files:
            if path not in held_out:
                try:
                    ptxgrammar.parse(ptxgrammar.read_ptx(path))
                except ptxgrammar.ParseError:
                    pass               # corpus files that are bad on purpose
        self.prime_seconds = CPU() - start
        self.prime_count = len([p for p in prime_files if p not in held_out])
        store = shapecache.store_path()
        self.primed_bytes = store.stat().st_size if store.exists() else 0

    def nothing_stored(self) -> None:
        os.environ[shapecache.ENV] = "off"
        grammar_parser.SHAPES.forget(store=False)

    def held_out_store(self, tag: str) -> None:
        """A fresh copy of the primed store, so one file's new shapes never reach another's run."""
        copy = self.root / tag
        shutil.copytree(self.primed, copy, dirs_exist_ok=True)
        os.environ[shapecache.ENV] = str(copy)
        os.environ[shapecache.SHIPPED_ENV] = "off"
        grammar_parser.SHAPES.forget(store=True)

    def as_installed(self, tag: str) -> None:
        """An empty user store of its own and the shipped store on: a first run after install."""
        os.environ[shapecache.ENV] = str(self.root / f"installed-{tag}")
        os.environ.pop(shapecache.SHIPPED_ENV, None)
        grammar_parser.SHAPES.forget(store=True)

    def close(self) -> None:
        os.environ[shapecache.ENV] = "off"
        os.environ.pop(shapecache.SHIPPED_ENV, None)
        shutil.rmtree(self.root, ignore_errors=True)


def bench_parse_files(files, repeat, stores: ShapeStores, peer_parse):
    rows = []
    for i, path in enumerate(files):
        text = ptxgrammar.read_ptx(path)
        stores.nothing_stored()
        cold, _ = cpu_timed(bench_parse.ptx2py_roundtrip, text)
        stores.as_installed(f"parse{i}")
        as_installed, _ = cpu_timed(bench_parse.ptx2py_roundtrip, text)
        stores.held_out_store(f"file{i}")
        cold_stored, _ = cpu_timed(bench_parse.ptx2py_roundtrip, text)
        warm, _ = median_cpu(bench_parse.ptx2py_roundtrip, text, repeat)
        peer, result = median_cpu(peer_parse, text, repeat)
        rows.append(_ratio_row(path, text, peer, result, cold=cold, as_installed=as_installed,
                               cold_stored=cold_stored, warm=warm))
        print(f"  parse {name_of(path)}: {rows[-1]['ratios']}", flush=True)
    stores.nothing_stored()
    return rows


def _ratio_row(path, text, peer, result, **ours):
    fail = failure(result)
    return {"file": name_of(path), "mb": len(text) / 1e6, "ptx2py_s": ours, "peer_s": None if fail else peer,
            "peer_failure": fail,
            "ratios": {k: (None if fail else peer / v) for k, v in ours.items()}}


def summarize(rows, keys):
    return {k: geomean([r["ratios"][k] for r in rows if r["ratios"][k] is not None]) for k in keys}


# --- 2. the PTX -> Python -> PTX loops ---------------------------------------------------

def sugar_loop(text: str) -> str:
    import ptx2py

    out = ptx2py.python_to_ptx(ptx2py.ptx_to_python(text, sugar=True))
    assert out == text, "--sugar round trip is not byte-identical"
    return out


def bench_loops(files, repeat, ours_fn, peer_fn, label, stores: ShapeStores, installed: bool = False):
    """Per file: cold with nothing stored, cold as installed (with `installed`), warm, the peer."""
    rows = []
    for i, path in enumerate(files):
        text = ptxgrammar.read_ptx(path)
        stores.nothing_stored()
        cold, result = cpu_timed(ours_fn, text)
        if isinstance(result, Exception):
            raise result               # ptx2py must not fail on its own corpus
        ours = {"cold": cold}
        if installed:
            stores.as_installed(f"{label}{i}")
            ours["as_installed"], _ = cpu_timed(ours_fn, text)   # its in-memory cache serves the warm runs
        warm_t, peer_t = [], []
        for _ in range(repeat):        # interleaved, so load changes hit both tools alike
            warm_t.append(cpu_timed(ours_fn, text)[0])
            t, peer_result = cpu_timed(peer_fn, text)
            peer_t.append(t)
        rows.append(_ratio_row(path, text, statistics.median(peer_t), peer_result,
                               **ours, warm=statistics.median(warm_t)))
        print(f"  {label} {name_of(path)}: {rows[-1]['ratios']}", flush=True)
    return rows


# --- 3. kernel IR compile against Triton -------------------------------------------------

def triton_stage_ms(name: str, cap: int, repeat: int):
    """(median ms to PTX, median ms to cubin) of Triton, fresh cache each time. The
    cubin stage (ptxas) is timed through Triton's stage-inspection hook."""
    import triton
    from triton import knobs
    from triton_equivalents import compile_triton

    to_ptx, to_cubin = [], []
    cubin_seconds = []

    def hook(*args):
        if not args:           # Triton first asks for a cache key part: no change to it
            return "", ""
        stages = args[1]       # then (backend, stages, options, language, capability)
        make_cubin = stages["cubin"]

        def timed_cubin(src, metadata):
            start = time.perf_counter()
            try:
                return make_cubin(src, metadata)
            finally:
                cubin_seconds.append(time.perf_counter() - start)
        stages["cubin"] = timed_cubin

    previous = knobs.runtime.add_stages_inspection_hook
    knobs.runtime.add_stages_inspection_hook = hook
    try:
        for _ in range(repeat):
            cache = tempfile.mkdtemp(prefix="bench-ir-triton-")
            os.environ["TRITON_CACHE_DIR"] = cache
            knobs.cache.dir = cache
            cubin_seconds.clear()
            start = time.perf_counter()
            compile_triton(name, cap)
            total = time.perf_counter() - start
            to_cubin.append(total * 1e3)
            to_ptx.append((total - sum(cubin_seconds)) * 1e3)
            shutil.rmtree(cache, ignore_errors=True)
    finally:
        knobs.runtime.add_stages_inspection_hook = previous
    del triton
    return statistics.median(to_ptx), statistics.median(to_cubin)


def ptxas_path(cap: int) -> str | None:
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        return get_ptxas(cap).path            # the ptxas Triton itself runs
    except Exception:  # noqa: BLE001 - no Triton: any ptxas on PATH
        return shutil.which("ptxas")


def ptxas_ms(ptx: str, target: str, ptxas: str, repeat: int) -> float:
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx)
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([ptxas, f"--gpu-name={target}", str(src), "-o", str(out)], check=True,
                           capture_output=True)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def bench_ir(names, target, repeat, triton_repeat, use_triton):
    import json as _json

    from ptx2py.kernelir import compile_kernel, load_kernel
    from ptx2py.kernelir.problems import problem_path

    cap = int("".join(c for c in target[3:] if c.isdigit()))
    ptxas = ptxas_path(cap)
    have_triton = use_triton
    if have_triton:
        try:
            import triton  # noqa: F401
        except ImportError:
            have_triton = False
    rows = []
    for name in names:
        median_ms, first_ms = bench_compile_ir.ptx2py_ms(name, target, repeat)
        ptx = compile_kernel(load_kernel(_json.loads(problem_path(name).read_text())["kernel"]), target)
        row = {"problem": name, "ptx2py_ms": median_ms, "ptx2py_first_ms": first_ms,
               "ptx2py_cubin_ms": None, "triton_ptx_ms": None, "triton_cubin_ms": None, "triton_failure": None}
        if ptxas:
            row["ptx2py_cubin_ms"] = median_ms + ptxas_ms(ptx, target, ptxas, max(1, triton_repeat))
        if have_triton:
            try:
                row["triton_ptx_ms"], row["triton_cubin_ms"] = triton_stage_ms(name, cap, triton_repeat)
            except Exception as e:  # noqa: BLE001 - reported per problem
                row["triton_failure"] = failure(e)
        row["ratio_ptx"] = row["triton_ptx_ms"] / median_ms if row["triton_ptx_ms"] else None
        row["ratio_cubin"] = (row["triton_cubin_ms"] / row["ptx2py_cubin_ms"]
                              if row["triton_cubin_ms"] and row["ptx2py_cubin_ms"] else None)
        rows.append(row)
        print(f"  ir {name}: {median_ms:.2f} ms, Triton {row['triton_ptx_ms']}", flush=True)
    ours = [r["ptx2py_ms"] for r in rows]
    summary = {
        "ptx2py_median_ms": statistics.median(ours),
        "ratio_ptx_median": _median([r["ratio_ptx"] for r in rows]),
        "ratio_ptx_geomean": geomean([r["ratio_ptx"] for r in rows if r["ratio_ptx"]]),
        "ratio_cubin_median": _median([r["ratio_cubin"] for r in rows]),
        "triton": have_triton, "ptxas": ptxas,
    }
    return rows, summary


def _median(values):
    values = [v for v in values if v]
    return statistics.median(values) if values else None


# --- 4. peak memory ---------------------------------------------------------------------

_OURS_SETUP = ("from ptx2py import ptxgrammar as g; import ptx2py.transpile.generator, ptx2py.transpile.fastrun, "
               "ptx2py.transpile.layout, ptx2py.transpile.dsl.recorder; "
               "from ptx2py.transpile import ptx_to_python, python_to_ptx; "
               "t = g.read_ptx({p!r})")
RSS_PROBES = (   # (what, setup: imports and reading the input, work, ours: runs with a shape store)
    ("ptx2py parse+emit", _OURS_SETUP, "assert g.emit(g.parse(t)) == t", True),
    ("pyptx parse", "from pyptx.parser import parse; t = open({p!r}).read()", "parse(t)", False),
    ("ptx2py PTX->Python->PTX", _OURS_SETUP, "assert python_to_ptx(ptx_to_python(t)) == t", True),
    ("pyptx ptx_to_python", "from pyptx.codegen.codegen import ptx_to_python; t = open({p!r}).read()",
     "ptx_to_python(t, sugar=False)", False),
)


def bench_rss(path: Path):
    """Peak RSS of each probe's work over its process's baseline (imports done, input read),
    each in a fresh child (common.work_rss_mb). ptx2py runs with a shape store that a first,
    unmeasured run of the same file filled (a user's second run: the figure the goal reads)
    and again with nothing stored (every shape built from the grammar: `nothing_stored`). The user's own
    store is never used: it holds every shape the machine has seen and is read whole."""
    size_mb = path.stat().st_size / 1e6
    p = str(path)
    store = tempfile.mkdtemp(prefix="ptx2py-bench-rss-")
    rows = []
    try:
        for what, setup, work, ours in RSS_PROBES:
            setup = setup.format(p=p)
            try:
                stored = {shapecache.ENV: store, shapecache.SHIPPED_ENV: "off"}    # the user's own store only
                if ours:
                    work_rss_mb(setup, work, stored)      # fills the store, unmeasured
                m = work_rss_mb(setup, work, stored if ours else None)
                cold = work_rss_mb(setup, work, {shapecache.ENV: "off"}) if ours else None
            except subprocess.CalledProcessError as e:
                rows.append({"what": what, "peak_mb": None, "per_input": None, "failure": e.stderr[-200:]})
                continue
            row = {"what": what, "peak_mb": m["peak_mb"], "base_mb": m["base_mb"], "work_mb": m["work_mb"],
                   "hwm_reset": m["reset"], "per_input": m["work_mb"] / size_mb, "failure": None,
                   "nothing_stored": None}
            if cold is not None:
                row["nothing_stored"] = {"work_mb": cold["work_mb"], "per_input": cold["work_mb"] / size_mb}
            rows.append(row)
            print(f"  rss {what}: {m['work_mb']:.1f} MB over a {m['base_mb']:.1f} MB baseline", flush=True)
    finally:
        shutil.rmtree(store, ignore_errors=True)
    return {"file": name_of(path), "mb": size_mb, "rows": rows}


# --- output -------------------------------------------------------------------------------

def fmt(v, spec=".2f", none="-"):
    return none if v is None else format(v, spec)



def markdown(results) -> str:
    meta, s = results["meta"], results["summary"]
    out = [f"# Benchmarks: ptx2py side by side with its peers ({'quick' if meta['quick'] else 'full'} run)", "",
           f"`{meta['command']}` — {meta['date']}, {meta['machine']}; Python {meta['python']}, "
           f"pyptx {meta['pyptx']}, Triton {meta['triton']}. Load average at start {meta['load_start']}, "
           f"at end {meta['load_end']}.", "",
           "Parse and loop times: CPU seconds of one process (`time.process_time`); IR compile: wall ms. "
           "Ratio = peer time / ptx2py time (> 1: ptx2py faster); geometric means over the files the peer "
           "handles. Every cold figure starts from an empty in-memory shape cache (imports done, grammar "
           "built). *cold* = nothing stored on disk and the shipped store off: the grammar builds every shape; "
           "*cold, as installed* = the user's store empty and the store shipped with the package on "
           "(`ptxgrammar/shipped_shapes.bin`, learned from every corpus/ptx file, the measured ones included"
           f"{'' if meta.get('shipped_store_current', True) else STALE_STORE}); "
           "*cold, stored* = the on-disk store learned from the other "
           f"{meta['primed_files']} corpus files (the measured files held out, the shipped store off; reading "
           "the store is timed); *warm* = median of repeats.", "",
           "## Summary", "", "| figure | result | goal | met |", "|---|---:|---:|:-:|"]
    for row in s["table"]:
        out.append(f"| {row['figure']} | {row['result']} | {row['goal']} | {row['met']} |")
    out += ["", "## Parse+emit vs pyptx parse", "",
            "| file | MB | ptx2py cold s | as installed s | cold, stored s | warm s | pyptx s | × cold | "
            "× as installed | × cold, stored | × warm |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results["parse"]["rows"]:
        t, x = r["ptx2py_s"], r["ratios"]
        out.append(f"| {r['file']} | {r['mb']:.2f} | {t['cold']:.3f} | {fmt(t.get('as_installed'), '.3f')} | "
                   f"{t['cold_stored']:.3f} | {t['warm']:.3f} | {fmt(r['peer_s'], '.3f', 'fails')} | "
                   f"{fmt(x['cold'])} | {fmt(x.get('as_installed'))} | {fmt(x['cold_stored'])} | {fmt(x['warm'])} |")
    g = results["parse"]["geomean"]
    out.append(f"| **geometric mean** | | | | | | | **{fmt(g['cold'])}** | **{fmt(g.get('as_installed'))}** | "
               f"**{fmt(g['cold_stored'])}** | **{fmt(g['warm'])}** |")
    for key, title in (("loop", "PTX→Python→PTX vs pyptx ptx_to_python(sugar=False)"),
                       ("sugar_loop", "--sugar PTX→Python→PTX vs pyptx ptx_to_python(sugar=True)")):
        out += ["", f"## {title}", "", "| file | MB | ptx2py cold s | as installed s | warm s | pyptx s | × cold | "
                "× as installed | × warm |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in results[key]["rows"]:
            t, x = r["ptx2py_s"], r["ratios"]
            out.append(f"| {r['file']} | {r['mb']:.2f} | {t['cold']:.3f} | {fmt(t.get('as_installed'), '.3f')} | "
                       f"{t['warm']:.3f} | {fmt(r['peer_s'], '.3f', 'fails')} | {fmt(x['cold'])} | "
                       f"{fmt(x.get('as_installed'))} | {fmt(x['warm'])} |")
        g = results[key]["geomean"]
        out.append(f"| **geometric mean** | | | | | | **{fmt(g['cold'])}** | **{fmt(g.get('as_installed'))}** | "
                   f"**{fmt(g['warm'])}** |")
    for key in ("parse", "loop", "sugar_loop"):
        for r in results[key]["rows"]:
            if r["peer_failure"]:
                out.append(f"\npeer fails on {r['file']} ({key}, excluded): `{r['peer_failure']}`")
    ir, irs = results["ir"]["rows"], results["ir"]["summary"]
    out += ["", "## Kernel IR compile vs Triton (same target, fresh Triton cache each time)", "",
            "| problem | ptx2py → PTX ms | Triton → PTX ms | × | ptx2py → cubin ms | Triton → cubin ms | × |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for r in ir:
        triton_ms = fmt(r["triton_ptx_ms"], ".1f", r["triton_failure"] or "-")
        out.append(f"| {r['problem']} | {r['ptx2py_ms']:.2f} | {triton_ms} | "
                   f"{fmt(r['ratio_ptx'], '.0f')} | {fmt(r['ptx2py_cubin_ms'], '.1f')} | "
                   f"{fmt(r['triton_cubin_ms'], '.1f')} | {fmt(r['ratio_cubin'], '.1f')} |")
    out.append(f"| **median** | **{fmt(irs['ptx2py_median_ms'])}** | | **{fmt(irs['ratio_ptx_median'], '.0f')}** | | | "
               f"**{fmt(irs['ratio_cubin_median'], '.1f')}** |")
    rss = results["rss"]
    out += ["", f"## Peak RSS on the largest file ({rss['file']}, {rss['mb']:.2f} MB)", "",
            "Each row is a fresh child process: its baseline is its RSS after the imports and reading the "
            "input; the high-water mark is then reset (`/proc/self/clear_refs`) and read after the work. "
            "ptx2py runs with a shape store filled by one earlier run of the same file, and with nothing "
            "stored (the last column).", "",
            "| process | baseline MB | peak MB | peak − baseline MB | (peak − baseline) / input | "
            "nothing stored: / input |", "|---|---:|---:|---:|---:|---:|"]
    for r in rss["rows"]:
        cold = r.get("nothing_stored") or {}
        out.append(f"| {r['what']} | {fmt(r.get('base_mb'), '.0f')} | {fmt(r['peak_mb'], '.0f', 'fails')} | "
                   f"{fmt(r.get('work_mb'), '.1f')} | {fmt(r['per_input'], '.1f')} | "
                   f"{fmt(cold.get('per_input'), '.1f')} |")
    out += startup_markdown(results["startup"]) + engine_markdown(results["engine"])
    out += ["", f"![per-file ratios]({results['meta']['plot']})", ""]
    return "\n".join(out)


def startup_markdown(startup: dict) -> list[str]:
    out = ["", f"## CLI start-up, whole process (median of {startup['repeat']}; bytecode cached as installed)", "",
           "| process | wall s | CPU s |", "|---|---:|---:|"]
    for what, r in startup["rows"].items():
        out.append(f"| {what} | {r['wall_s']:.3f} | {r['cpu_s']:.3f} |")
    return out


def engine_markdown(engine: dict) -> list[str]:
    out = ["", "## CPU engine (CPU s of one process, sanitizer on, inorder)", "",
           "| kernel | thread-instructions | CPU s | thread-instructions / s | matches numpy | reports |",
           "|---|---:|---:|---:|:-:|---:|"]
    for r in engine["rows"]:
        match = {True: "yes", False: "NO"}.get(r.get("matches_numpy"), "-")
        out.append(f"| {r['kernel']} | {r['thread_instructions']:,} | {r['cpu_s']:.2f} | "
                   f"{fmt(r['thread_instructions_per_s'], ',.0f')} | {match} | {len(r['reports'])} |")
    return out


def plot(results, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    series = [("parse", "warm", "parse+emit, warm", "o"), ("parse", "cold", "parse+emit, cold", "s"),
              ("parse", "cold_stored", "parse+emit, cold, stored", "D"), ("loop", "warm", "PTX→Py→PTX", "^"),
              ("sugar_loop", "warm", "--sugar loop", "v")]
    for section, key, label, marker in series:
        pts = [(r["mb"], r["ratios"][key]) for r in results[section]["rows"] if r["ratios"].get(key)]
        if pts:
            ax.scatter(*zip(*pts), label=label, marker=marker)
    for goal, style in ((GOALS["parse_warm"], ":"), (GOALS["loop"], "--"), (1, "-")):
        ax.axhline(goal, color="grey", linestyle=style, linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("file size (MB)")
    ax.set_ylabel("peer time / ptx2py time")
    ax.set_title("ptx2py against pyptx 0.1.1, per file (> 1: ptx2py faster)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary_table(results) -> list[dict]:
    p, lp, sg = results["parse"]["geomean"], results["loop"]["geomean"], results["sugar_loop"]["geomean"]
    irs = results["ir"]["summary"]
    loop_rss = next((r["per_input"] for r in results["rss"]["rows"] if r["what"].startswith("ptx2py PTX")), None)

    def row(figure, value, goal, spec, at_least=True, unit="×"):
        value = None if value is None or value != value else value
        if value is None or value != value:
            met = "-"
        else:
            met = "yes" if (value >= goal if at_least else value <= goal) else "no"
        bound = "≥" if at_least else "≤"
        return {"figure": figure, "value": value, "result": f"{fmt(value, spec)}{unit}",
                "goal": f"{bound} {goal}{unit}",
                "met": met}
    return [
        row("parse+emit vs pyptx parse, warm (geomean)", p["warm"], GOALS["parse_warm"], ".2f"),
        row("parse+emit vs pyptx parse, cold, nothing stored", p["cold"], GOALS["parse_cold"], ".2f"),
        row("parse+emit vs pyptx parse, cold, as installed", p.get("as_installed"), GOALS["parse_cold"], ".2f"),
        row("parse+emit vs pyptx parse, cold, store from held-out files", p["cold_stored"], GOALS["parse_cold"], ".2f"),
        row("PTX→Python→PTX vs pyptx ptx_to_python (warm)", lp["warm"], GOALS["loop"], ".2f"),
        row("PTX→Python→PTX vs pyptx ptx_to_python (cold, nothing stored)", lp["cold"], GOALS["loop"], ".2f"),
        row("PTX→Python→PTX vs pyptx ptx_to_python (cold, as installed)", lp.get("as_installed"), GOALS["loop"],
            ".2f"),
        row("--sugar loop vs pyptx sugar (warm)", sg["warm"], GOALS["sugar_loop"], ".2f"),
        row("IR compile median ms", irs["ptx2py_median_ms"], GOALS["ir_median_ms"], ".2f", at_least=False, unit=" ms"),
        row("IR compile vs Triton to PTX (median ratio)", irs["ratio_ptx_median"], GOALS["ir_to_ptx"], ".0f"),
        row("peak RSS over baseline / input, whole loop, largest file", loop_rss, GOALS["rss_loop"], ".1f",
            at_least=False),
        *startup_rows(results["startup"], row),
        *engine_rows(results["engine"], row),
    ]


def startup_rows(startup: dict, row) -> list[dict]:
    rows = startup["rows"]
    return [row(f"start-up, {what} (wall, median of {startup['repeat']})", rows[what]["wall_s"], GOALS["startup_s"],
                ".3f", at_least=False, unit=" s") for what in rows if what.startswith(("ptx2py", "py2ptx"))]


def engine_rows(engine: dict, row) -> list[dict]:
    mm = next((r for r in engine["rows"] if "matmul" in r["kernel"]), None)
    if mm is None:
        return []
    ok = "" if mm.get("matches_numpy") else " (output does NOT match numpy)"
    return [row(f"engine: {mm['kernel']} CPU time{ok}", mm["cpu_s"], GOALS["matmul_cpu_s"], ".1f", at_least=False,
                unit=" s")]


def load_average() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke test: 2 small files, 1 IR problem, 1 repeat")
    ap.add_argument("--files", type=int, default=12, help="the N largest corpus files (full run)")
    ap.add_argument("--repeat", type=int, default=3, help="parse repeats (median)")
    ap.add_argument("--loop-repeat", type=int, default=1, help="repeats of the loops (slow peers)")
    ap.add_argument("--ir-repeat", type=int, default=50)
    ap.add_argument("--triton-repeat", type=int, default=3)
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS),
                    help="run only these (the sugar loop is the slowest: ~4 min a file on a loaded machine)")
    ap.add_argument("--sugar-files", type=int, default=None, help="the sugar loop on the N smallest of the files")
    ap.add_argument("--grown-cache", metavar="DIR",
                    help="start-up also with this shape cache (scripts/grow_shape_cache.py)")
    args = ap.parse_args(argv)
    from pyptx.codegen.codegen import ptx_to_python as pyptx_to_python
    from pyptx.parser import parse as pyptx_parse

    if args.quick:
        files, repeat, loop_repeat, ir_names = quick_files(2), 1, 1, ["vector_add"]
        ir_repeat, triton_repeat = 5, 1
        prime = quick_files(4)[2:]
    else:
        files, repeat, loop_repeat = largest_files(args.files), args.repeat, args.loop_repeat
        from ptx2py.kernelir import PROBLEM_NAMES
        ir_names, ir_repeat, triton_repeat = list(PROBLEM_NAMES), args.ir_repeat, args.triton_repeat
        prime = sorted(CORPUS.rglob("*.ptx"))
    args.out.mkdir(parents=True, exist_ok=True)
    import importlib.metadata as md

    def version(pkg):
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "not installed"
    results = {"meta": {
        "command": "python benchmarks/run_all.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "python": platform.python_version(),
        "pyptx": version("pyptx"), "triton": version("triton"), "quick": args.quick,
        "load_start": load_average(), "repeat": repeat, "loop_repeat": loop_repeat, "plot": "results.png",
    }}
    pyptx_parse(ptxgrammar.read_ptx(quick_files(1)[0]))        # the peer's own first-call costs, untimed
    todo = set(args.sections)

    def save() -> None:             # after every section: a run cut short keeps what it measured
        (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")

    if todo & {"parse", "loop", "sugar_loop"}:
        print("priming the held-out shape store ...", flush=True)
        stores = ShapeStores(files, prime)
        results["meta"].update(primed_files=stores.prime_count, prime_cpu_s=stores.prime_seconds,
                               primed_store_bytes=stores.primed_bytes, shipped_store_current=stores.shipped_current)
        if not stores.shipped_current:
            print("WARNING: ptxgrammar/shipped_shapes.bin is stale or missing, so 'cold, as installed' is "
                  "'nothing stored': run python scripts/make_shape_store.py", flush=True)
        try:
            if "parse" in todo:
                print("parse+emit vs pyptx parse", flush=True)
                rows = bench_parse_files(files, repeat, stores, pyptx_parse)
                results["parse"] = {"rows": rows,
                                    "geomean": summarize(rows, ("cold", "as_installed", "cold_stored", "warm"))}
                save()
            if "loop" in todo:
                print("PTX->Python->PTX vs pyptx ptx_to_python", flush=True)
                rows = bench_loops(files, loop_repeat, bench_transpile.ptx2py_loop,
                                   lambda t: pyptx_to_python(t, sugar=False), "loop", stores, installed=True)
                results["loop"] = {"rows": rows, "geomean": summarize(rows, ("cold", "as_installed", "warm"))}
                save()
            if "sugar_loop" in todo:
                print("--sugar loop vs pyptx sugar", flush=True)
                sugar_files = sorted(files, key=lambda p: p.stat().st_size)[:args.sugar_files or len(files)]
                rows = bench_loops(sugar_files, loop_repeat, sugar_loop, lambda t: pyptx_to_python(t, sugar=True),
                                   "sugar", stores)
                results["sugar_loop"] = {"rows": rows, "geomean": summarize(rows, ("cold", "warm"))}
                save()
        finally:
            stores.close()
    if "ir" in todo:
        print("kernel IR compile vs Triton", flush=True)
        rows, summary = bench_ir(ir_names, args.target, ir_repeat, triton_repeat, not args.no_triton)
        results["ir"] = {"rows": rows, "summary": summary}
        save()
    if "rss" in todo:
        print("peak RSS", flush=True)
        results["rss"] = bench_rss(max(files, key=lambda p: p.stat().st_size))
    if "startup" in todo:
        print("CLI start-up beside import pyptx", flush=True)
        results["startup"] = bench_startup.measure(3 if args.quick else 10, args.grown_cache)
        save()
    if "engine" in todo:
        print("CPU engine", flush=True)
        results["engine"] = bench_engine.measure(args.quick)
        save()
    for section in SECTIONS:
        results.setdefault(section, EMPTY[section])       # not run this time: a '-' in the tables
    results["meta"].setdefault("primed_files", 0)
    results["meta"]["load_end"] = load_average()
    results["summary"] = {"table": summary_table(results)}
    save()
    plot(results, args.out / "results.png")
    (args.out / "results.md").write_text(markdown(results))
    for row in results["summary"]["table"]:
        print(f"{row['figure']}: {row['result']} (goal {row['goal']}: {row['met']})")
    print(f"wrote {args.out / 'results.json'}, results.md, results.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
