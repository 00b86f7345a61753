"""Whole-file differential of `ptx2py lint` against ptxas: every file ptxas assembles must lint
with 0 errors; on a file ptxas rejects, lint must name ptxas' lines.

    python scripts/lint_file_differential.py corpus/ptx ../shared/corpus-external --json out.json

ptxas decides each file for its own `.target` (the first one); its verdicts are cached by the
file's content (a JSON file outside the repository), so a second run only lints. A file whose
`.version`/`.target` this ptxas does not know is `undecided` and counts for neither side.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

_TARGET = re.compile(r"^\s*\.target\s+([\w]+)", re.M)
# the lines ptxas blames: those of its errors, and for its 32-bit-ABI refusal (a fatal error that
# names no line) the line its warning names
_BLAMED = re.compile(r"line (\d+); (?:error|fatal)|uses 32-bit address on line '(\d+)'")
# ptxas refusing to run at all decides nothing about the PTX
_UNDECIDED = re.compile(r"is not defined for option|Unsupported .version|not supported by this ptxas"
                        r"|Unknown option|Unsupported \.target|PTX ISA version .* not supported|Unsupported gpu")


# -c: a relocatable object, so a call to a function another file defines is no error
PTXAS_FLAGS = ("-c", "-O0")


def ptxas_verdict(ptxas: str, path: str) -> dict:
    """{'verdict': accept | reject | undecided, 'lines': [blamed lines], 'error': first error}."""
    text = Path(path).read_text(errors="replace")
    m = _TARGET.search(text)
    arch = m.group(1) if m and m.group(1).startswith("sm_") else None
    if arch is None:
        return {"verdict": "undecided", "lines": [], "error": "no sm_ .target"}
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["nice", "-n", "10", ptxas, *PTXAS_FLAGS, "-arch", arch, path, "-o", os.path.join(tmp, "o")],
                           capture_output=True, text=True)
    out = r.stdout + r.stderr
    errors = [ln for ln in out.splitlines() if "error" in ln or "fatal" in ln]
    if r.returncode == 0:
        return {"verdict": "accept", "lines": [], "error": ""}
    if _UNDECIDED.search(out) or not errors:
        return {"verdict": "undecided", "lines": [], "error": errors[0] if errors else out[-200:]}
    lines = sorted({int(a or b) for a, b in _BLAMED.findall(out)})
    return {"verdict": "reject", "lines": lines, "error": errors[0]}


def lint_lines(path: str) -> dict:
    """{'errors': n, 'lines': [lines with an error], 'parse': parse error or '', 'seconds': s, 'bytes': n}."""
    from ptx2py import ptxgrammar
    from ptx2py.lint import lint_module

    text = ptxgrammar.read_ptx(path)
    start = time.process_time()
    try:
        module = ptxgrammar.parse(text, path)
    except ptxgrammar.ParseError as e:
        return {"errors": 1, "lines": [getattr(e, "line", 0) or 0], "parse": str(e).splitlines()[0],
                "seconds": time.process_time() - start, "bytes": len(text), "first": []}
    found = [v for v in lint_module(module, path) if v.severity == "error"]
    return {"errors": len(found), "lines": sorted({v.line for v in found}), "parse": "",
            "seconds": time.process_time() - start, "bytes": len(text), "first": [str(v) for v in found[:3]]}


@dataclass
class Tally:
    files: int = 0
    lines: int = 0
    bytes: int = 0
    accepted: int = 0
    rejected: int = 0
    undecided: int = 0
    false_alarm_files: int = 0
    false_alarm_errors: int = 0
    rejected_exact: int = 0       # lint's error lines are ptxas' lines
    rejected_named: int = 0       # lint names every ptxas line (and maybe more)
    examples: list = field(default_factory=list)


def producer_of(path: str, roots: list[str]) -> str:
    """The first folder below the root the file was found under (`nvcc`, `triton` ...)."""
    p = Path(path).resolve()
    for root in roots:
        r = Path(root).resolve()
        if r.is_dir() and r in p.parents:
            rel = p.relative_to(r).parts
            return f"{r.name}/{rel[0]}" if len(rel) > 1 else r.name
    return p.parent.name


def ptx_files(paths) -> list[str]:
    out = []
    for arg in paths:
        p = Path(arg)
        out += [str(f) for f in sorted(p.rglob("*.ptx"))] if p.is_dir() else [str(p)]
    return out


def _digest(path: str) -> str:
    return hashlib.sha1(" ".join(PTXAS_FLAGS).encode() + Path(path).read_bytes()).hexdigest()


def _to_judge(cached: dict | None) -> bool:
    # a rejection cached with no line is judged again: its line may be one _BLAMED learnt to read
    return cached is None or (cached["verdict"] == "reject" and not cached["lines"])


def verdicts(files, ptxas: str, cache_path: str | None, jobs: int) -> dict[str, dict]:
    cache = {}
    if cache_path and os.path.exists(cache_path):
        cache = json.loads(Path(cache_path).read_text())
    digests = {f: _digest(f) for f in files}
    todo = [f for f in files if _to_judge(cache.get(digests[f]))]
    with ThreadPoolExecutor(jobs) as pool:
        for f, v in zip(todo, pool.map(lambda f: ptxas_verdict(ptxas, f), todo)):
            cache[digests[f]] = v
    if cache_path and todo:
        Path(cache_path).parent.mkdir(parents=True, exist_ok=True)
        Path(cache_path).write_text(json.dumps(cache))
    return {f: cache[digests[f]] for f in files}


def run(paths, ptxas: str, cache_path: str | None = None, jobs: int = 2) -> dict:
    files = ptx_files(paths)
    judged = verdicts(files, ptxas, cache_path, jobs)
    with ProcessPoolExecutor(jobs) as pool:
        linted = dict(zip(files, pool.map(lint_lines, files, chunksize=4)))
    tallies: dict[str, Tally] = {}
    speed = {"bytes": 0, "seconds": 0.0, "largest": None}
    for f in files:
        t = tallies.setdefault(producer_of(f, list(paths)), Tally())
        v, lint = judged[f], linted[f]
        t.files += 1
        t.bytes += lint["bytes"]
        t.lines += Path(f).read_text(errors="replace").count("\n")
        if speed["largest"] is None or lint["bytes"] > speed["largest"]["bytes"]:
            speed["largest"] = {"file": f, "bytes": lint["bytes"], "seconds": lint["seconds"]}
        speed["bytes"] += lint["bytes"]
        speed["seconds"] += lint["seconds"]
        if v["verdict"] == "undecided":
            t.undecided += 1
        elif v["verdict"] == "accept":
            t.accepted += 1
            if lint["errors"]:
                t.false_alarm_files += 1
                t.false_alarm_errors += lint["errors"]
                t.examples.append({"file": f, "kind": "false-alarm", "lint": lint["first"] or [lint["parse"]]})
        else:
            t.rejected += 1
            blamed, named = set(v["lines"]), set(lint["lines"])
            t.rejected_exact += blamed == named
            t.rejected_named += bool(blamed) and blamed <= named
            if blamed != named:
                t.examples.append({"file": f, "kind": "rejected", "ptxas": v["error"], "ptxas_lines": v["lines"][:10],
                                   "lint_lines": lint["lines"][:10], "lint": lint["first"]})
    return {"producers": {k: asdict(v) for k, v in sorted(tallies.items())}, "speed": speed}


def summary(result: dict) -> str:
    rows = ["producer                         files    lines  accepted  false-alarm files/errors  rejected"
            "  exact/named  undecided"]
    total = Tally()
    for name, t in result["producers"].items():
        rows.append(f"{name:32} {t['files']:5} {t['lines']:8} {t['accepted']:9} {t['false_alarm_files']:11}/"
                    f"{t['false_alarm_errors']:<12} {t['rejected']:8} {t['rejected_exact']:6}/{t['rejected_named']:<6}"
                    f" {t['undecided']:6}")
        for k in ("files", "lines", "accepted", "false_alarm_files", "false_alarm_errors", "rejected",
                  "rejected_exact", "rejected_named", "undecided", "bytes"):
            setattr(total, k, getattr(total, k) + t[k])
    rows.append(f"{'total':32} {total.files:5} {total.lines:8} {total.accepted:9} {total.false_alarm_files:11}/"
                f"{total.false_alarm_errors:<12} {total.rejected:8} {total.rejected_exact:6}/{total.rejected_named:<6}"
                f" {total.undecided:6}")
    s = result["speed"]
    if s["largest"]:
        big = s["largest"]
        rate = s["bytes"] / 1e6 / max(s["seconds"], 1e-9)
        rows.append(f"lint speed (CPU time, parse + lint): {rate:.2f} MB/s overall;"
                    f" largest file {big['file']} {big['bytes'] / 1e6:.2f} MB in {big['seconds']:.2f} s")
    return "\n".join(rows)
