"""`ptx2py verify --races`: static race / synchronisation proofs with SentryWard (pip `sentryward`,
extra `ptx2py[races]`) for the base and the edited kernel.

SentryWard's input (`spverify.kernel-input/v1`, its sdist's docs/input-json.md) is written from
the launch sidecar (corpus/launch, read through launch/plan.py): pointers become named global
objects, scalars concrete values, CUtensorMaps descriptors (shape, box, strides, swizzle, zero OOB
fill). The launch is shrunk so a proof takes seconds: every problem dimension is capped (default
128, kept a multiple of the TMA box), strides follow the shrunk shapes, scalars that carried a
dimension or a stride follow them, and the grid shrinks by the same ratio. Its exit code is 0
even when it finds a race, so the verdict is read from its JSON (`result`); a witness's PTX line
is mapped to the Python line for Python input.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FINDINGS = {"not_wellsynced", "potential_race", "invalid_lifecycle"}
PROVED = {"race_free", "verified"}
# sidecar dtype (canonical, launch/plan.py) -> SentryWard element / scalar type
ELEMENT_TYPE = {"fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64", "fp8e4nv": "e4m3", "fp8e5": "e5m2",
                "i8": "s8", "u8": "u8", "i16": "s16", "u16": "u16", "i32": "s32", "u32": "u32", "i64": "s64",
                "u64": "u64", "i1": "u8"}
SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
INSTALL = "pip install 'ptx2py[races]'   (SentryWard, Apache-2.0, runs offline on the CPU)"


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
    shrinks as the largest buffer does; otherwise a 1-D grid and the buffer counts (and the
    scalars equal to one) are divided by the same ratio, so each CTA keeps its share of work."""
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
    return {c: c // ratio for c in counts if c % ratio == 0 and c // ratio > 0}, ratio


def _grid(spec: dict, ratio: float) -> list[int]:
    """The grid shrunk by `ratio` in CTAs in all, spread evenly over the grid's dimensions > 1."""
    grid = [int(g) for g in spec["grid"]] + [1] * (3 - len(spec["grid"]))
    k = sum(1 for g in grid if g > 1) or 1
    per_dim = ratio ** (1 / k)
    return [max(1, math.ceil(g / per_dim - 1e-9)) if g > 1 else 1 for g in grid]


# --- input JSON ---------------------------------------------------------------------------------

def input_json(ptx_text: str, spec: dict, cap: int = 128, ctas: int = 2) -> tuple[dict, dict]:
    """(SentryWard input JSON, a description of the shrunk launch) for one kernel."""
    from launch import plan as lp

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
        ptx, inp = Path(tmp) / "kernel.ptx", Path(tmp) / "input.json"
        ptx.write_text(ptx_text)
        inp.write_text(json.dumps(doc))
        r = subprocess.run([sys.executable, "-m", "sentryward", str(ptx), "--input", str(inp),
                            "--timeout", str(timeout)], capture_output=True, text=True, timeout=timeout + 60)
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"result": "tool_failure", "diagnostics": [{"code": "no_json", "message": (r.stderr or r.stdout)[-2000:]}]}


def _ptx_lines(obj, out: set[int]) -> None:
    """Every PTX line number a result names (`line`, `ptx_line`, `*_line` keys, anywhere)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, int) and not isinstance(v, bool) and (k == "line" or k.endswith("_line")):
                out.add(v)
            else:
                _ptx_lines(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _ptx_lines(v, out)


_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_OPCODE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)")
# which PTX instructions can be a race endpoint: (mode, memory space) -> opcode pattern
ACCESS_OPCODES = {
    ("write", "shared"): re.compile(r"^(st\.shared|st\.volatile\.shared|stmatrix|atom\.shared|red\.shared|"
                                    r"cp\.async\.bulk\.tensor\.\w+\.shared|cp\.async\.bulk\.shared|tcgen05\.cp)"),
    ("read", "shared"): re.compile(r"^(ld\.shared|ld\.volatile\.shared|ldmatrix|atom\.shared|"
                                   r"cp\.async\.bulk\.tensor\.\w+\.global\.shared|tcgen05\.mma|tcgen05\.cp)"),
    ("write", "global"): re.compile(r"^(st\.global|st\.|atom\.|red\.|cp\.async\.bulk\.tensor\.\w+\.global)"),
    ("read", "global"): re.compile(r"^(ld\.global|ld\.|atom\.|cp\.async\.bulk\.tensor\.\w+\.shared)"),
    ("write", "tensor"): re.compile(r"^(tcgen05\.st|tcgen05\.mma|tcgen05\.cp)"),
    ("read", "tensor"): re.compile(r"^(tcgen05\.ld|tcgen05\.mma)"),
}


def source_sites(ptx_text: str) -> dict[tuple[str, int, int], list[tuple[int, str]]]:
    """(source file, line, column) of each `.loc` -> the (PTX line, opcode) of the instructions under it."""
    files = {int(n): path for n, path in _FILE.findall(ptx_text)}
    sites: dict[tuple[str, int, int], list[tuple[int, str]]] = {}
    current = None
    for k, line in enumerate(ptx_text.splitlines(), 1):
        m = _LOC.match(line)
        if m:
            f, ln, col = map(int, m.groups())
            current = (files.get(f, str(f)), ln, col)
            continue
        op = _OPCODE.match(line)
        if current and op and not line.lstrip().startswith(("//", ".")):
            sites.setdefault(current, []).append((k, op.group(1)))
    return sites


def race_endpoint_lines(endpoint: dict, space: str, sites) -> list[int]:
    """The PTX lines that can be this endpoint: under its source location, an access of its mode
    to its memory space (SentryWard names the source location of the access, not its PTX line)."""
    loc = endpoint.get("location") or {}
    key = (loc.get("file"), loc.get("line"), loc.get("column"))
    pattern = ACCESS_OPCODES.get((endpoint.get("mode"), space))
    if pattern is None:
        return []
    return [ln for ln, op in sites.get(key, []) if pattern.match(op)]


def _race_lines(race: dict, sites, describe) -> tuple[list[str], list[dict]]:
    region = race.get("region") or {}
    space = region.get("address_space", "")
    out, witnesses = [f"    race on {space} memory, {region.get('bytes')} B at offset {region.get('offset')} "
                      f"({race.get('overlap', '')}):"], []
    for side in ("first", "second"):
        e = race.get(side) or {}
        loc = e.get("location") or {}
        src = f"{Path(str(loc.get('file'))).name}:{loc.get('line')}:{loc.get('column')}" if loc else "no source location"
        lines = race_endpoint_lines(e, space, sites)
        out.append(f"      {e.get('mode')} of {e.get('bytes')} B by thread {e.get('actor')} at {src}"
                   + ("" if lines else " (no PTX line found for it)"))
        for ln in lines[:6]:
            w = describe(ln)
            witnesses.append(dict(w, endpoint=side))
            out.append(f"        {w['where']}: {w['ptx']}")
    return out, witnesses


def read_result(result: dict, ptx_text: str, name: str, line_map: dict[int, int] | None) -> dict:
    """The verdict, its diagnostics as lines, and the witness lines in PTX (and Python) terms."""
    verdict = result.get("result", "tool_failure")
    ptx_lines = ptx_text.splitlines()
    lines = [f"{verdict}; checks: " + ", ".join(f"{k} {v}" for k, v in (result.get("checks") or {}).items())]
    witnesses = []

    def describe(ln: int) -> dict:
        text = ptx_lines[ln - 1].strip() if 0 < ln <= len(ptx_lines) else ""
        text = text if len(text) <= 100 else text[:97] + "..."
        py = (line_map or {}).get(ln)
        where = f"{name}:{py} (PTX line {ln})" if py else f"{name} (PTX line {ln})" if line_map is not None \
            else f"{name}:{ln}"
        return {"ptx_line": ln, "python_line": py, "ptx": text, "where": where}

    for d in result.get("diagnostics") or []:
        where: set[int] = set()
        _ptx_lines(d, where)
        lines.append(f"  {d.get('code')}: {d.get('message', '')}".rstrip(": "))
        for ln in sorted(where):
            w = describe(ln)
            witnesses.append(w)
            lines.append(f"    at {w['where']}: {w['ptx']}")
        for w in (d.get("details") or {}).get("witnesses", [])[:4]:
            if "from_instruction" in w:   # lifecycle witnesses name SentryWard's lowered instructions only
                lines.append(f"    witness: lowered instruction #{w['from_instruction']} -> #{w['to_instruction']} "
                             f"({w.get('kind', '')}; SentryWard gives no PTX line for it)")
    if result.get("races"):
        sites = source_sites(ptx_text)
        for race in result["races"][:4]:
            more, wit = _race_lines(race, sites, describe)
            lines += more
            witnesses += wit
    if verdict == "unsupported":
        why = ("its wgmma instructions (sm_90a) are unsupported"
               if "wgmma" in json.dumps(result.get("diagnostics")) else "see the diagnostics above")
        lines.append(f"  SentryWard does not model this kernel: {why}; "
                     "run it on the CPU engine instead: ptx2py verify --run cpu BASE EDITED")
    return {"verdict": verdict, "finding": verdict in FINDINGS, "proved": verdict in PROVED, "lines": lines,
            "witnesses": witnesses, "raw": result}


def launch_specs(ptx_path: str) -> list[dict]:
    """Every kernel's launch spec from the sidecar of `ptx_path` (RaceSetupError without one)."""
    from launch import plan as lp

    sidecar = lp.sidecar_for(ptx_path)
    if sidecar is None:
        raise RaceSetupError(f"no launch sidecar for {ptx_path} in corpus/launch")
    return [dict(spec, sidecar=str(sidecar)) for spec in lp.kernel_specs(json.loads(sidecar.read_text()))]


def launch_spec(ptx_path: str) -> dict:
    return launch_specs(ptx_path)[0]


def race_one(spec: dict, ptx_text: str, name: str, line_map: dict[int, int] | None = None, *,
             cap: int = 128, timeout: int = 300) -> dict:
    """One kernel through SentryWard at the shrunk launch of `spec`."""
    from launch import plan as lp

    try:
        doc, shrunk = input_json(ptx_text, spec, cap)
    except (lp.PlanError, KeyError, ValueError) as e:
        return {"verdict": "not run", "finding": False, "witnesses": [],
                "lines": [f"not run: the sidecar does not describe this launch: {e}"]}
    res = read_result(run_sentryward(ptx_text, doc, timeout), ptx_text, name, line_map)
    res.update(input=doc, shrunk=shrunk)
    return res


def race_pair(base_path: str, edited_ptx: str, *, edited_name: str, line_map: dict[int, int] | None = None,
              cap: int = 128, timeout: int = 300) -> dict:
    """Every kernel of the sidecar, base and edited, through SentryWard:
    {"kernels": {name: {"base": ..., "edited": ...}}, "finding": bool}, or a reason it did not run."""
    why = sentryward_available()
    if why:
        return {"status": "skipped", "message": f"--races skipped: {why}", "finding": False}
    from ptxgrammar import read_ptx

    try:
        specs = launch_specs(base_path)
    except RaceSetupError as e:
        return {"status": "skipped", "finding": False, "message": f"--races skipped: {e}"}
    base_ptx = read_ptx(base_path)
    kernels = {}
    for spec in specs:
        kernels[spec["kernel"]] = {
            "base": race_one(spec, base_ptx, base_path, None, cap=cap, timeout=timeout),
            "edited": race_one(spec, edited_ptx, edited_name, line_map, cap=cap, timeout=timeout)}
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
            note = f" (launch shrunk: grid {sh['grid'][0]} -> {sh['grid'][1]}, dims/strides {sh['values']})" if sh else ""
            lines.append(f"races {name} {side}: " + r["lines"][0] + note)
            lines += r["lines"][1:]
    return "\n".join(lines)
