"""`ptx2py verify --races`: static race / synchronisation proofs with SentryWard (pip `sentryward`,
extra `ptx2py[races]`) for the base and the edited kernel.

SentryWard's input (`spverify.kernel-input/v1`, its sdist's docs/input-json.md) is written from
the launch sidecar (corpus/launch, read through launch/plan.py): pointers become named global
objects, scalars concrete values, CUtensorMaps descriptors (shape, box, strides, swizzle, zero OOB
fill). The launch is shrunk so a proof takes seconds: every problem dimension is capped (default
128, kept a multiple of the TMA box), strides follow the shrunk shapes, scalars that carried a
dimension or a stride follow them, and the grid shrinks by the same ratio. Its exit code is 0
even when it finds a race, so the verdict is read from its JSON (`result`) by race_report, which
names every witness by its PTX line and column (and Python line), and, for a finding the base
lacks, the edited lines.

SentryWard reports its first race only (its exhaustive search counts the rest but keeps one
sample). Where that first race is a same-warp duplicate store (every lane of a warp storing to
one shared address from one instruction: a race in the PTX memory model, harmless only if the
values agree), it is run again with each such store made by lane 0 alone, until its first race is
another kind: the base's verdict past its duplicate stores, and an edit's own race behind them.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .race_report import (
    FINDINGS,
    KERNEL_FILE,
    carried_lines,
    duplicate_store_line,
    edit_sites,
    finding_signature,
    read_result,
    without_loc,
)

# sidecar dtype (canonical, launch/plan.py) -> SentryWard element / scalar type
ELEMENT_TYPE = {"fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64", "fp8e4nv": "e4m3", "fp8e5": "e5m2",
                "i8": "s8", "u8": "u8", "i16": "s16", "u16": "u16", "i32": "s32", "u32": "u32", "i64": "s64",
                "u64": "u64", "i1": "u8"}
SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
INSTALL = "pip install 'ptx2py[races]'   (SentryWard, Apache-2.0, runs offline on the CPU)"
# what taking a same-warp duplicate store as one store per warp assumes
ONE_STORE_PER_WARP = ("lane 0 of each warp stores, the other lanes' equal values assumed, as SentryWard's "
                      "duplicate_tma_store_benign assumes for TMA stores")
DEDUP_ROUNDS = 8
_GUARD = re.compile(r"^@(!?)(%\w+)\s+")


class RaceSetupError(Exception):
    """No sidecar, or a sidecar the input JSON cannot be written from."""


def sentryward_available() -> str | None:
    """Why SentryWard cannot run here, or None."""
    try:
        import sentryward  # noqa: F401
    except ImportError:
        return f"SentryWard is not installed: {INSTALL}"
    return None


# --- shrinking ----------------------------------------------------------------------------------

def _shrunk_dim(dim: int, box: int, cap: int) -> int:
    if dim <= cap:
        return dim
    return max(box, cap // box * box)


def shrink_plan(plans, metas: list, cap: int) -> tuple[dict[int, int], dict[int, tuple]]:
    """(old value -> new value for dims and strides, plan index -> (shape, strides)) for every
    tensor argument, shapes capped at `cap` (a multiple of the TMA box where there is one)."""
    values: dict[int, int] = {}
    shapes: dict[int, tuple] = {}
    for p in plans:
        a = p.source
        if p.role not in ("buffer", "tensormap") or "shape" not in a:
            continue
        shape = [int(x) for x in a["shape"]]
        if p.role == "tensormap" and metas:
            box = [int(x) for x in metas[p.value]["block_size"]]
        else:
            box = [int(x) for x in a.get("block_shape", [1] * len(shape))]
        new = [_shrunk_dim(d, b, cap) for d, b in zip(shape, box)]
        strides = [int(x) for x in a.get("strides", [])]
        new_strides = [math.prod(new[i + 1:]) for i in range(len(new))] if strides else []
        for old, n in zip(shape + strides, new + new_strides):
            if old != n:
                values.setdefault(old, n)
        shapes[p.index] = (new, new_strides)
    return values, shapes


def shrink_flat(plans, spec: dict, cap: int, ctas: int) -> tuple[dict[int, int], float]:
    """For flat buffers (no tensor shapes): (old -> new values, grid ratio). Scalars that are
    matrix dimensions (a buffer holds their product: M x K) are capped at `cap`, and the grid
    shrinks as the largest buffer does; otherwise a 1-D grid and the buffer counts that are a
    multiple of it (and the scalars equal to one) are divided by the same ratio, so each CTA keeps
    its share of work."""
    scalars = {p.value for p in plans if p.role == "scalar" and isinstance(p.value, int)
               and not isinstance(p.value, bool) and p.value > cap}
    counts = {p.count for p in plans if p.role == "buffer" and p.count > 1}
    dims = {v for v in scalars if any(c % v == 0 and c // v in scalars for c in counts)}
    if dims:
        values = {v: cap for v in dims if v % cap == 0}
        new_counts = {c: values.get(a, a) * values.get(c // a, c // a) for c in counts for a in dims
                      if c % a == 0 and c // a in dims}
        values.update({c: n for c, n in new_counts.items() if n != c})
        ratio = max([c / n for c, n in new_counts.items()] or [1])
        return values, ratio
    grid = [int(g) for g in spec["grid"]] + [1] * (3 - len(spec["grid"]))
    if grid[1] != 1 or grid[2] != 1 or grid[0] <= ctas:
        return {}, 1
    ratio = grid[0] // ctas
    # only a buffer with a share per CTA shrinks (a weight vector shared by every CTA stays whole)
    return {c: c // ratio for c in counts if c % grid[0] == 0 and c % ratio == 0}, ratio


def _grid(spec: dict, ratio: float) -> list[int]:
    """The grid shrunk by `ratio` in CTAs in all, spread evenly over the grid's dimensions > 1."""
    grid = [int(g) for g in spec["grid"]] + [1] * (3 - len(spec["grid"]))
    k = sum(1 for g in grid if g > 1) or 1
    per_dim = ratio ** (1 / k)
    return [max(1, math.ceil(g / per_dim - 1e-9)) if g > 1 else 1 for g in grid]


# --- input JSON ---------------------------------------------------------------------------------

def input_json(ptx_text: str, spec: dict, cap: int = 128, ctas: int = 2) -> tuple[dict, dict]:
    """(SentryWard input JSON, a description of the shrunk launch) for one kernel."""
    from ptx2py.launch import plan as lp

    entry = lp.entry_info(ptx_text, spec["kernel"])
    plans = lp.plan_arguments(entry, spec)
    metas = list(spec.get("tensordesc_meta") or [])
    values, shapes = shrink_plan(plans, metas, cap)
    ratio = max([math.prod(p.source["shape"]) / math.prod(shapes[p.index][0]) for p in plans if p.index in shapes]
                or [1])
    if not values:
        values, ratio = shrink_flat(plans, spec, cap, ctas)
    decls, args, descs = [], [], []
    for p in plans:
        if p.role in ("buffer", "scratch"):
            decls.append({"parameter": p.index, "type": "pointer", "space": "global", "object": p.arg})
        elif p.role == "tensormap":
            decls.append({"parameter": p.index, "type": "tensor_map", "object": p.arg})
            new_shape, new_strides = shapes.get(p.index, (p.source["shape"], p.source["strides"]))
            src = dict(p.source, shape=new_shape, strides=new_strides)
            req = lp.tensor_map_request(src, metas[p.value] if metas else None)
            descs.append({"parameter": p.index, "object": p.arg, "element_type": ELEMENT_TYPE[p.dtype],
                          "rank": req["rank"], "global_shape": req["global_dim"], "box_shape": req["box_dim"],
                          "global_strides_bytes": req["global_strides"],
                          "element_strides": req["element_strides"], "swizzle": SWIZZLE[req["swizzle"]],
                          "interleave": "none", "oob_fill": "zero"})
        else:   # scalar, desc-shape, desc-stride, desc-flag
            value = p.value if p.value is not None else 0
            if isinstance(value, bool):
                value = int(value)
            if isinstance(value, int):
                value = values.get(value, value)
            ty = p.param.type
            if ty.startswith("f"):
                value = float(value)
            args.append({"parameter": p.index, "type": ty, "value": value})
    launch = lp.launch_request(spec, entry)
    grid = _grid(spec, ratio)
    doc = {"schema": "spverify.kernel-input/v1", "entry": spec["kernel"],
           "launch": {"grid_dim": grid, "block_dim": launch["block"], "dynamic_shared_bytes": launch["shared"]},
           "declarations": decls, "arguments": args}
    if descs:
        doc["tma_descriptors"] = descs
    shrunk = {"grid": [spec["grid"], grid], "values": {str(k): v for k, v in sorted(values.items())}, "cap": cap}
    return doc, shrunk


# --- running and reading ------------------------------------------------------------------------

def run_sentryward(ptx_text: str, doc: dict, timeout: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="ptx2py-races-") as tmp:
        ptx, inp = Path(tmp) / KERNEL_FILE, Path(tmp) / "input.json"
        ptx.write_text(without_loc(ptx_text))     # its locations are then PTX lines (race_report)
        inp.write_text(json.dumps(doc))
        r = subprocess.run([sys.executable, "-m", "sentryward", str(ptx), "--input", str(inp),
                            "--timeout", str(timeout)], capture_output=True, text=True, timeout=timeout + 60)
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        tail = (r.stderr or r.stdout)[-2000:]
        return {"result": "tool_failure", "diagnostics": [{"code": "no_json", "message": tail}]}


# --- same-warp duplicate stores ------------------------------------------------------------------

def one_store_per_warp(ptx_text: str, lines: set[int]) -> str:
    """The PTX with the store on each of `lines` made by lane 0 of its warp only (under the store's
    own guard), written on the same line so that every line number stays."""
    out = ptx_text.splitlines(keepends=True)
    for ln in sorted(lines):
        text = out[ln - 1]
        stmt = text.strip()
        m = _GUARD.match(stmt)
        test = (f"setp.eq.and.u32 %dedup_p, %dedup_l, 0, {m.group(1)}{m.group(2)}" if m
                else "setp.eq.u32 %dedup_p, %dedup_l, 0")
        out[ln - 1] = (f"{text[:len(text) - len(text.lstrip())]}{{ .reg .b32 %dedup_l; .reg .pred %dedup_p; "
                       f"mov.u32 %dedup_l, %laneid; {test}; @%dedup_p {stmt[m.end():] if m else stmt} }}"
                       + text[len(text.rstrip("\r\n")):])
    return "".join(out)


def _duplicate_lines(raw: dict, threads: int) -> set[int]:
    return {ln for race in raw.get("races") or [] if (ln := duplicate_store_line(race, threads))}


def _at_statement(raw: dict, ptx_text: str, lines: set[int]) -> dict:
    """Race ends on rewritten lines put back at the column of the original statement."""
    text = ptx_text.splitlines()
    for race in raw.get("races") or []:
        for side in ("first", "second"):
            where = (race.get(side) or {}).get("location") or {}
            if where.get("line") in lines:
                ln = text[where["line"] - 1]
                where["column"] = len(ln) - len(ln.lstrip()) + 1
    return raw


def without_duplicate_stores(ptx_text: str, doc: dict, raw: dict, timeout: int, seed: set[int] = frozenset()
                             ) -> dict | None:
    """SentryWard reports its first race only: where that is a same-warp duplicate store (or `seed`
    names some), run it again with each one taken as one store per warp, until the first race it
    finds is no such store: {"lines": the stores taken so, "raw": its last result}, or None."""
    threads = math.prod(doc["launch"]["block_dim"])
    lines = set(seed) | _duplicate_lines(raw, threads)
    if not lines:
        return None
    for _ in range(DEDUP_ROUNDS):
        raw = _at_statement(run_sentryward(one_store_per_warp(ptx_text, lines), doc, timeout), ptx_text, lines)
        new = _duplicate_lines(raw, threads) - lines
        if not new:
            break
        lines |= new
    return {"lines": sorted(lines), "raw": raw}


def _dedup_lines(dedup: dict, verdict: str) -> list[str]:
    return [f"  with the same-warp duplicate stores at PTX lines {', '.join(map(str, dedup['lines']))} taken as one "
            f"store per warp ({ONE_STORE_PER_WARP}): {verdict}"]


def race_count(ptx_text: str, doc: dict, timeout: int) -> int | None:
    """How many racing access pairs SentryWard's exhaustive search counts (None where it cannot
    say). Its command line stops at the first race and has no option for the search; the native
    verifier's `--exhaustive-memory-search` is reached through its Python driver, which is not a
    public API, so any failure to call it is an unknown count, never zero."""
    try:
        from sentryward.frontend.ptx_native import _run_ptx
    except ImportError:
        return None
    with tempfile.TemporaryDirectory(prefix="ptx2py-races-") as tmp:
        ptx, inp = Path(tmp) / KERNEL_FILE, Path(tmp) / "input.json"
        ptx.write_text(without_loc(ptx_text))
        inp.write_text(json.dumps(doc))
        try:
            result = _run_ptx(ptx, inp, wellsync_timeout_seconds=timeout, exhaustive_memory_search=True)
        except (TypeError, ValueError, OSError, subprocess.SubprocessError):
            return None
    count = result.get("race_count")
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def launch_specs(ptx_path: str, sidecar: str | None = None) -> list[dict]:
    """Every kernel's launch spec from `sidecar`, else the sidecar found for `ptx_path`
    (launch.sidecar.find_sidecar; RaceSetupError without one)."""
    from ptx2py.launch import plan as lp

    sidecar = Path(sidecar) if sidecar else lp.sidecar_for(ptx_path)
    if sidecar is None:
        raise RaceSetupError(f"no launch sidecar for {ptx_path} (beside it, or the corpus's own in corpus/launch)")
    from ptx2py.launch.sidecar import load_sidecar

    data = load_sidecar(sidecar).data            # checked as for --run: a SidecarError is located in it
    return [dict(spec, sidecar=str(sidecar)) for spec in lp.kernel_specs(data)]


def launch_spec(ptx_path: str) -> dict:
    return launch_specs(ptx_path)[0]


def race_one(spec: dict, ptx_text: str, name: str, line_map: dict[int, int] | None = None, *,
             cap: int = 128, timeout: int = 300, base: dict | None = None) -> dict:
    """One kernel through SentryWard at the shrunk launch of `spec`; `base` ({"ptx": text,
    "result": race_one's answer for it}) lets a finding the base lacks name the edited lines."""
    from ptx2py.launch import plan as lp

    try:
        doc, shrunk = input_json(ptx_text, spec, cap)
    except (lp.PlanError, KeyError, ValueError) as e:
        return {"verdict": "not run", "finding": False, "witnesses": [],
                "lines": [f"not run: the sidecar does not describe this launch: {e}"]}
    raw = run_sentryward(ptx_text, doc, timeout)
    if base is None or "raw" not in base["result"]:
        res = _alone(raw, ptx_text, name, line_map, doc, timeout)
    else:
        res = _against_base(raw, base, ptx_text, name, line_map, doc, timeout)
    res.update(input=doc, shrunk=shrunk)
    return res


def _alone(raw: dict, ptx_text: str, name: str, line_map, doc: dict, timeout: int) -> dict:
    """The verdict of one kernel, and where its first race is a same-warp duplicate store, the
    verdict with such stores taken as one per warp."""
    threads = math.prod(doc["launch"]["block_dim"])
    res = read_result(raw, ptx_text, name, line_map, threads_per_cta=threads)
    dedup = without_duplicate_stores(ptx_text, doc, raw, timeout)
    if dedup:
        more = read_result(dedup["raw"], ptx_text, name, line_map, threads_per_cta=threads)
        res["lines"] += _dedup_lines(dedup, more["verdict"]) + ["  " + x for x in more["lines"][1:]]
        res["dedup"] = dict(dedup, verdict=more["verdict"])
    return res


def _against_base(raw: dict, base: dict, ptx_text: str, name: str, line_map, doc: dict, timeout: int) -> dict:
    """The edited kernel's verdict, its witnesses, and what shows the edit: a finding the base
    lacks names the edited lines; one it shares is looked past (the duplicate stores taken as one
    per warp) or, failing that, counted exhaustively on both sides."""
    threads = math.prod(doc["launch"]["block_dim"])
    new = finding_signature(raw, ptx_text) - finding_signature(base["result"]["raw"], base["ptx"])
    edits = edit_sites(base["ptx"], ptx_text) if new or raw.get("races") else None
    beyond = None if new or not raw.get("races") else _beyond_duplicates(base, raw, ptx_text, doc, timeout)
    if beyond:
        res = read_result(raw, ptx_text, name, line_map, threads_per_cta=threads)
        more = read_result(beyond["raw"], ptx_text, name, line_map, edits=edits, threads_per_cta=threads)
        res["lines"] += (["  the base has this same first finding; SentryWard reports the first one it finds only"]
                         + _dedup_lines(beyond, f"the base is {base['result']['dedup']['verdict']}, the edited "
                                        f"kernel {more['verdict']}:")
                         + ["  " + x for x in more["lines"][1:]])
        res["witnesses"] += [dict(w, beyond_duplicates=True) for w in more["witnesses"]]
        res["dedup"] = dict(beyond, verdict=more["verdict"])
        return res
    counts = None
    if not new and raw.get("races"):     # the first race is the base's: count them all, both sides
        base_count = base["result"].setdefault("race_count", race_count(base["ptx"], base["result"]["input"],
                                                                        timeout))
        counts = (base_count, race_count(ptx_text, doc, timeout))
    elif not new:
        counts = (None, None)
    return read_result(raw, ptx_text, name, line_map, edits=edits, race_counts=counts, threads_per_cta=threads)


def _beyond_duplicates(base: dict, raw: dict, ptx_text: str, doc: dict, timeout: int) -> dict | None:
    """The edited kernel with the base's same-warp duplicate stores (and its own) taken as one
    store per warp, when that shows a finding the base so taken lacks; else None."""
    dedup = base["result"].get("dedup")
    if not dedup:
        return None
    carried = carried_lines(base["ptx"], ptx_text)
    seed = {carried[ln] for ln in dedup["lines"] if ln in carried}
    beyond = without_duplicate_stores(ptx_text, doc, raw, timeout, seed)
    new = finding_signature(beyond["raw"], ptx_text) - finding_signature(dedup["raw"], base["ptx"])
    return beyond if new and beyond["raw"].get("result") in FINDINGS else None


def race_pair(base_path: str, edited_ptx: str, *, edited_name: str, line_map: dict[int, int] | None = None,
              cap: int = 128, timeout: int = 300, sidecar: str | None = None) -> dict:
    """Every kernel of the sidecar, base and edited, through SentryWard:
    {"kernels": {name: {"base": ..., "edited": ...}}, "finding": bool}, or a reason it did not run."""
    why = sentryward_available()
    if why:
        return {"status": "skipped", "message": f"--races skipped: {why}", "finding": False}
    from ptx2py.ptxgrammar import read_ptx

    try:
        specs = launch_specs(base_path, sidecar)
    except RaceSetupError as e:
        return {"status": "skipped", "finding": False, "message": f"--races skipped: {e}"}
    base_ptx = read_ptx(base_path)
    kernels = {}
    for spec in specs:
        base = race_one(spec, base_ptx, base_path, None, cap=cap, timeout=timeout)
        kernels[spec["kernel"]] = {"base": base, "edited": race_one(
            spec, edited_ptx, edited_name, line_map, cap=cap, timeout=timeout, base={"ptx": base_ptx, "result": base})}
    return {"status": "done", "sidecar": specs[0]["sidecar"], "kernels": kernels,
            "finding": any(k["edited"]["finding"] for k in kernels.values())}


def format_races(races: dict) -> str:
    if races.get("status") != "done":
        return races["message"]
    lines = []
    for name, k in races["kernels"].items():
        for side in ("base", "edited"):
            r = k[side]
            sh = r.get("shrunk")
            note = (f" (launch shrunk: grid {sh['grid'][0]} -> {sh['grid'][1]}, dims/strides {sh['values']})"
                    if sh else "")
            lines.append(f"races {name} {side}: " + r["lines"][0] + note)
            lines += r["lines"][1:]
    return "\n".join(lines)
