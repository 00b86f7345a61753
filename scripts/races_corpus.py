#!/usr/bin/env python3
"""`ptx2py verify --races` over corpus kernels: each original's SentryWard verdict, and broken
edits of each (a removed `bar.sync`, a removed mbarrier wait, a removed MMA-completion wait:
the last wait that follows a `tcgen05.commit`, before the accumulator is read), each reported
with its witnesses and the edited line. (A wait inside the K loop is no such edit: at the shrunk
launch K can fit one block, the loop does not run, and the kernel without it is race-free at that launch.)

    pip install -e '.[races]'
    python scripts/races_corpus.py [--kernels a.ptx,b.ptx] [--timeout 300] [--size 128] [--retry-size 16]
                                   [--no-edits] [--json out.json]

A removed wait is the `mbarrier.try_wait` turned into `mov.pred P, 1;` (the wait succeeds at
once; the first wait that follows no commit is the mbarrier wait); a removed barrier is the
`bar.sync` line deleted (the first one between a shared-memory
write and a read of shared memory, else the first one).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT = [
    "triton/matmul_tma_fp16_sm100.ptx", "triton/matmul_tma_bf16_sm100.ptx",
           "triton/matmul_fp16_64x64x32_w4s4_sm100.ptx",
    "triton/add_fp32_sm100.ptx", "triton/add_bf16_sm120.ptx", "triton/softmax_fp32_b1024_w4_sm100.ptx",
    "triton/transpose_fp32_64x64_sm100.ptx", "triton/row_reduce_fp32_sm120.ptx", "triton/histogram_i32_sm100.ptx",
    "triton/layernorm_fp16_b1024_w4_sm120.ptx", "triton/matmul_tma_fp16_sm120.ptx",
    "triton/matmul_tma_fp8e4nv_sm100.ptx", "triton/rmsnorm_fp16_b2048_w8_sm100.ptx",
           "triton/cumsum_fp32_b1024_sm120.ptx",
]
TRY_WAIT = re.compile(r"^(\s*)mbarrier\.try_wait[\w.:]*\s+(\w+|%\w+),.*;\s*$")
BAR_SYNC = re.compile(r"^\s*(bar\.sync|barrier\.sync)\b[^;]*;\s*$")


SHARED_WRITE = re.compile(r"\b(st\.shared|stmatrix|atom\.shared|red\.shared)")
SHARED_READ = re.compile(r"\b(ld\.shared|ldmatrix|cp\.async\.bulk\.tensor\.\w+\.global\.shared|atom\.shared)")


def _guards_shared(lines: list[str], i: int, span: int = 40) -> bool:
    """A barrier between a shared-memory write shortly before and a read shortly after."""
    before = any(SHARED_WRITE.search(x) for x in lines[max(0, i - span):i])
    after = any(SHARED_READ.search(x) for x in lines[i + 1:i + 1 + span])
    return before and after


def edits(text: str) -> list[tuple[str, int, str]]:
    """(kind, 1-based line, edited text) for each broken edit this kernel admits."""
    lines = text.splitlines(keepends=True)
    out = []
    waits = [i for i, ln in enumerate(lines) if TRY_WAIT.match(ln)]
    bars = [i for i, ln in enumerate(lines) if BAR_SYNC.match(ln)]
    if bars:
        i = next((b for b in bars if _guards_shared(lines, b)), bars[0])
        out.append(("removed bar.sync", i + 1, "".join(lines[:i] + lines[i + 1:])))

    def without_wait(i):
        m = TRY_WAIT.match(lines[i])
        return "".join(lines[:i] + [f"{m.group(1)}mov.pred {m.group(2)}, 1;\n"] + lines[i + 1:])

    def follows_commit(i):
        events = [j for j in range(i) if "tcgen05.commit" in lines[j] or TRY_WAIT.match(lines[j])]
        return bool(events) and "tcgen05.commit" in lines[events[-1]]

    mma = [i for i in waits if follows_commit(i)]
    load = [i for i in waits if not follows_commit(i)]
    if load:
        out.append(("removed mbarrier wait", load[0] + 1, without_wait(load[0])))
    if mma:
        out.append(("removed MMA-completion wait", mma[-1] + 1, without_wait(mma[-1])))
    return out


def summarize(rel: str, kind: str, line: int | None, e: dict, seconds: float) -> dict:
    """One row: the verdict, the witness lines, and whether a witness stands at the edited line:
    a lifecycle witness names it (role "edit"), or a race's two ends lie either side of it (a
    removed line L: the edited text's lines from L on are the original's L+1...)."""
    wit = e.get("witnesses", [])
    lines = sorted({w["ptx_line"] for w in wit})
    beyond = [w for w in wit if w.get("beyond_duplicates")]
    # the race ends of a finding new against the base: past the base's duplicate stores, or the first race
    fresh = beyond or ([] if e.get("race_counts") else wit)
    ends = sorted({w["ptx_line"] for w in fresh if "endpoint" in w})
    named = bool(line) and any(w.get("role") == "edit" and w["ptx_line"] == line for w in wit)
    brackets = bool(line) and any(w < line for w in ends) and any(w >= line for w in ends)
    counts = e.get("race_counts") or [None, None]
    counted = bool(line) and None not in counts and counts[1] > counts[0]
    at_edit = ("no edit" if not line else "the race's ends bracket the edited line" + (
               " (past the base's same-warp duplicate stores)" if beyond else "") if brackets
               else "a witness names the edited line" if named
               else f"the base's race comes first; the exhaustive race count rises {counts[0]} -> {counts[1]}"
               if counted else "NO witness at the edited line")
    return {"kernel": rel, "case": kind, "edited_line": line, "verdict": e["verdict"],
            "classification": e.get("classification"), "witness_lines": lines, "at_edit": at_edit,
            "witness_at_edit": named or brackets, "edit_seen_by_count": counted, "race_counts": counts,
            "dedup": {k: v for k, v in (e.get("dedup") or {}).items() if k != "raw"} or None,
            "seconds": round(seconds, 1), "shrunk": e.get("shrunk"),
            "lines": e["lines"]}


def tally(rows: list[dict]) -> str:
    """The figures: originals per verdict, and how many edits have a witness at the edited line."""
    originals = [r for r in rows if not r["edited_line"]]
    edits = [r for r in rows if r["edited_line"]]
    verdicts = {}
    for r in originals:
        v = r["verdict"] + (f" (one store per warp: {r['dedup']['verdict']})" if r["dedup"] else "")
        verdicts[v] = verdicts.get(v, 0) + 1
    kinds = {}
    for r in edits:
        k = kinds.setdefault(r["case"], [0, 0])
        k[0] += r["witness_at_edit"]
        k[1] += 1
    return (f"{len(originals)} kernels: " + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) +
            f"\n{len(edits)} broken edits on {len({r['kernel'] for r in edits})} kernels, "
            f"{sum(r['witness_at_edit'] for r in edits)} with a witness at the edited line: "
            + ", ".join(f"{k} {a}/{n}" for k, (a, n) in kinds.items()))


def main() -> int:
    from ptx2py.ptxgrammar import read_ptx
    from ptx2py.verify.races import launch_spec, race_one, sentryward_available

    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=",".join(DEFAULT))
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--no-edits", action="store_true")
    ap.add_argument("--size", type=int, default=128, help="cap on each problem dimension (verify --races-size)")
    ap.add_argument("--retry-size", type=int, default=16, help="when an original times out, run it and its edits "
                    "again at this size (0: do not)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if sentryward_available():
        print(sentryward_available())
        return 2
    results = []
    for rel in args.kernels.split(","):
        path = str(ROOT / "corpus" / "ptx" / rel)
        text = read_ptx(path)
        spec = launch_spec(path)
        original, cap = None, args.size
        for kind, line, edited in [("original", None, text)] + ([] if args.no_edits else edits(text)):
            t = time.time()
            base = None if original is None else {"ptx": text, "result": original}
            e = race_one(spec, edited, rel, cap=cap, timeout=args.timeout, base=base)
            if original is None and e["verdict"] == "timeout" and args.retry_size:
                cap = args.retry_size       # the original and its edits at the smaller launch alike
                print(f"{rel}: original: timeout at size {args.size}; again at size {cap}", flush=True)
                e = race_one(spec, edited, rel, cap=cap, timeout=args.timeout)
            original = original or e
            row = summarize(rel, kind, line, e, time.time() - t)
            results.append(row)
            dedup = f"; one store per warp: {row['dedup']['verdict']}" if row["dedup"] else ""
            print(f"{rel}: {kind}{f' at line {line}' if line else ''}: {e['verdict']}"
                  f"{' (' + row['classification'] + ')' if row['classification'] else ''}{dedup} "
                  f"(witness PTX lines {row['witness_lines'] or '-'}; {row['at_edit']}; {row['seconds']} s)",
                  flush=True)
            if e["verdict"] not in ("race_free", "verified"):
                print("    " + "\n    ".join(e["lines"][1:24]), flush=True)
    print(tally(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
