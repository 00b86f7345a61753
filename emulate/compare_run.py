"""`ptx2py verify BASE EDITED --run cpu`: both kernels on the CPU engine with the same inputs (the
launch sidecar of BASE or `--launch`, at a reduced launch of a few CTAs; `--inputs` or seeded),
every buffer compared bit for bit or within rtol/atol, with a per-buffer summary. Sanitizer reports of either run
count as a failure. Returns the same shape of result as verify.gpu_run.run_pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ptx2py.launch.plan import InputsError, canon_dtype, compare, kernel_specs

from .errors import EmulationError, python_ptx_name, render_grouped
from .frontend import reduced_launch, run
from .sync_coverage import coverage_line, notes

MAX_CTAS = 4


def _first_diff(a, b) -> int | None:
    ints = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]
    diff = np.flatnonzero(a.view(ints) != b.view(ints))
    return int(diff[0]) if diff.size else None


def compare_outputs(base: dict, edited: dict, dtypes: dict, rtol=None, atol=None) -> list[dict]:
    rows = []
    for name, a in base.items():
        b = edited[name]
        c = compare(b, a, dtypes[name], rtol, atol)
        rows.append({"buffer": name, "ok": c["ok"], "bitwise": c["bitwise"], "max_abs": c["max_abs"],
                     "max_rel": c["max_rel"], "n_diff": c["n_diff"], "first_diff": _first_diff(a, b)})
    return rows


def format_rows(kernel: str, rows: list[dict]) -> str:
    lines = [f"{kernel}: {'buffer':>16} {'ok':>4} {'max abs':>10} {'max rel':>10} {'first diff':>10}"]
    for r in rows:
        first = "-" if r["first_diff"] is None else str(r["first_diff"])
        lines.append(f"{'':{len(kernel)}}  {r['buffer']:>16} {'yes' if r['ok'] else 'NO':>4} "
                     f"{r['max_abs']:10.3g} {r['max_rel']:10.3g} {first:>10}")
    return "\n".join(lines)


def run_pair_cpu(base_ptx_path: str, edited_ptx: str, launch: dict, *, inputs: dict | None = None, rtol=None,
                 atol=None, kernel=None, max_ctas: int = MAX_CTAS, edited_name: str = "<edited>",
                 line_map: dict | None = None, max_steps: int | None = None, scale: bool = True,
                 scale_budget: int | None = None) -> dict:
    """Both kernels on the engine, on `launch` (a checked sidecar: launch.sidecar) and `inputs` (by
    name; the rest seeded), each block within `max_steps` warp-instructions (emulate.watchdog). When
    the edited kernel came from DSL code (edited_name a .py, line_map {PTX line: Python line} of its
    compiled PTX), its reports name the Python lines. When the launch leaves the base kernel's
    pipeline unexercised and `scale`, both run at a launch grown until it is (launch_scaling.py,
    within `scale_budget` thread-instructions); given `inputs`, the launch is kept."""
    from_python = edited_name.endswith(".py")
    edited_ptx_name = python_ptx_name(edited_name) if from_python else edited_name
    base_text = Path(base_ptx_path).read_text()
    specs = [s for s in kernel_specs(launch) if kernel is None or s["kernel"] == kernel]
    inputs = inputs or {}
    names = {a["name"] for s in specs for a in s["args"]}
    if set(inputs) - names:
        raise InputsError(f"inputs for unknown parameters: {', '.join(sorted(set(inputs) - names))}")
    results, lines = [], []
    for spec in specs:
        small = reduced_launch(spec, max_ctas)
        dtypes = {a["name"]: canon_dtype(a["dtype"]) for a in spec["args"] if a["kind"] != "scalar"}
        try:
            mine = {k: v for k, v in inputs.items() if k in {a["name"] for a in spec["args"]}}
            a = run(base_text, small, mine, filename=base_ptx_path, max_steps=max_steps)
            scaling = _scaled(base_text, base_ptx_path, small, a, max_steps, scale and not inputs, scale_budget)
            if scaling is not None and scaling.scaled:
                small, a = scaling.launch, scaling.result
            b = run(edited_ptx, small, mine, filename=edited_ptx_name, max_steps=max_steps)
        except EmulationError as e:
            results.append({"kernel": spec["kernel"], "status": "error", "error": str(e)})
            lines.append(f"{spec['kernel']}: {e}")
            continue
        rows = compare_outputs(a.outputs, b.outputs, dtypes, rtol, atol)
        edited_reports = [r.at_python(line_map, edited_ptx_name, edited_name) if from_python else r
                          for r in b.reports]
        reports = [r.render() for r in a.reports + edited_reports]
        status = "report" if reports else "match" if all(r["ok"] for r in rows) else "mismatch"
        gaps = b.stats["coverage"]["gaps"]        # what the edited kernel's launch left unexercised
        results.append({"kernel": spec["kernel"], "status": status, "buffers": rows, "reports": reports,
                        "grid": small["grid"], "full_grid": spec["grid"], "coverage": b.stats["coverage"],
                        "scaling": _scaling_json(scaling)})
        lines.append(format_rows(spec["kernel"], rows))
        lines += render_grouped(a.reports + edited_reports)     # each fault site once (JSON: every report)
        lines += [x for x in (coverage_line(b.stats),) if x]
        if a.stats["coverage"]["gaps"] or scaling is not None and scaling.scaled:
            lines.append(scaling.line() if scaling is not None else "coverage: launch not scaled: " + (
                "the inputs given fix the buffers' shapes" if inputs else "scaling is off (--no-scale)"))
        lines += notes(b.stats)
        if gaps and status == "match":
            lines.append(f"{spec['kernel']}: the match does not cover the pipeline at this launch "
                         f"({len(gaps)} gap{'s' if len(gaps) > 1 else ''} above)")
    statuses = {r["status"] for r in results}
    status = next((s for s in ("error", "report", "mismatch") if s in statuses), "match")
    lines.append(f"CPU engine ({status}): {len(results)} kernel(s) at reduced launches of at most "
                 f"{max_ctas} CTAs, same inputs")
    return {"status": status, "kernels": results, "message": "\n".join(lines), "device": "cpu"}


def _scaled(text, filename, launch, given, max_steps, scale, budget):
    """The launch_scaling search from the given launch's base run (None: scaling not allowed)."""
    from .launch_scaling import scale_for_coverage

    if not scale:
        return None
    return scale_for_coverage(launch, given, lambda s: run(text, s, filename=filename, max_steps=max_steps),
                              budget)


def _scaling_json(scaling) -> dict | None:
    if scaling is None:
        return None
    return {"status": scaling.status, "scaled": scaling.scaled, "scalars": scaling.cls.scalars if scaling.cls else [],
            "from": scaling.cls.value if scaling.cls else None, "to": scaling.value, "steps": scaling.steps,
            "thread_instructions": scaling.spent, "budget": scaling.budget, "line": scaling.line()}


def verify_on_cpu(args, report: dict, edited_ptx: str, code: int, launch: dict, inputs: dict) -> int:
    """verify's `--run cpu` step: run, print the per-buffer summary, set the exit status."""
    run_result = run_pair_cpu(args.base, edited_ptx, launch, inputs=inputs, rtol=args.rtol, atol=args.atol,
                              edited_name=args.edited, line_map=report.get("line_map"),
                              max_steps=getattr(args, "max_steps", None), scale=not getattr(args, "no_scale", False),
                              scale_budget=getattr(args, "scale_budget", None))
    report["run"] = run_result
    print(run_result["message"])
    return code if run_result["status"] == "match" else 1
