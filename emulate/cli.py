"""`ptx2py run KERNEL.ptx --launch LAUNCH.json ...` and `ptx2py run-ir KERNEL.json ...`: run a
kernel on the CPU engine. Exit 0: the run completed with no sanitizer report; 1: a report;
2: bad input (or an instruction the engine does not emulate)."""

from __future__ import annotations

import io
import json
import sys

EXIT_OK, EXIT_REPORT, EXIT_INPUT = 0, 1, 2


def _err(msg: str) -> int:
    print(msg, file=sys.stderr)
    return EXIT_INPUT


def _load_inputs(path):
    import numpy as np

    if path is None:
        return {}
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _save_npz(path, arrays: dict) -> None:
    """Whole or nothing, with the permissions of the other outputs (outfile.write_atomic)."""
    import numpy as np

    from ptx2py.outfile import write_atomic

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_atomic(path, buffer.getvalue())


def check_outputs(args, inputs) -> None:
    """-o and --json refused before the run (OutputError): a missing or read-only folder, an input."""
    from ptx2py.outfile import check_output

    for out in (args.output, getattr(args, "json", None)):
        if out is not None:
            check_output(out, inputs)


def _finish(result, args, scaling_lines=()) -> int:
    from ptx2py.outfile import OutputError, write_atomic

    from .errors import fault_site, group_reports, render_grouped
    from .sanitizer import MAX_REPORTS
    from .sync_coverage import coverage_line, notes

    line = coverage_line(result.stats)
    if line:
        print(line, file=sys.stderr)
    for line in scaling_lines:
        print(line, file=sys.stderr)
    for line in notes(result.stats):          # what the launch left unexercised (not a finding)
        print(line, file=sys.stderr)
    for line in render_grouped(result.reports, MAX_REPORTS):     # each fault site once, then a summary
        print(line, file=sys.stderr)
    try:
        if args.output:
            _save_npz(args.output, result.outputs)
        if getattr(args, "json", None):
            stats = {k: v for k, v in result.stats.items() if k != "ptx"}
            sites = [{"kind": g[0].kind, "site": fault_site(g[0])[1], "reports": len(g)}
                     for g in group_reports(result.reports)]
            write_atomic(args.json, json.dumps({"reports": [r.to_json() for r in result.reports], "sites": sites,
                                                "stats": stats}, indent=1, default=_plain) + "\n")
    except OutputError as e:
        return _err(str(e))
    return EXIT_REPORT if result.reports else EXIT_OK


def _plain(value):
    """numpy scalars and arrays in reports, as JSON values."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


def _options(args) -> dict:
    return {"schedule": args.schedule, "sanitize": not args.no_sanitize,
            "resident_ctas": getattr(args, "resident_ctas", 1), "max_steps": getattr(args, "max_steps", None),
            "progress": progress_bar()}


def progress_bar():
    """A bar of the blocks done, on a terminal only (a long run is not a hang), else None."""
    if not sys.stderr.isatty():
        return None
    bar = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            from tqdm import tqdm

            bar = tqdm(total=total, unit="block", desc="running", file=sys.stderr, leave=False)
        bar.update(done - bar.n)
        if done == total:
            bar.close()
    return update


def positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        import argparse

        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, not {text!r}")
    return value


def add_max_steps(p) -> None:
    from .watchdog import MAX_STEPS

    p.add_argument("--max-steps", type=positive_int, metavar="N",
                   help=f"watchdog: warp-instructions one block may run before the run stops with a report "
                        f"naming the loop (default {MAX_STEPS:,})")


def add_scaling_options(p, prefix: str = "") -> None:
    from .launch_scaling import BUDGET_FACTOR

    p.add_argument("--scale-budget", type=positive_int, metavar="N",
                   help=f"{prefix}thread-instructions the launch scaling may spend on runs of the base kernel "
                        f"(default {BUDGET_FACTOR} times the given launch's)")


def cmd_run(args) -> int:
    from ptx2py import ptxgrammar
    from ptx2py.launch.plan import InputsError
    from ptx2py.outfile import OutputError
    from ptx2py.transpile.dsl import DSLError

    from .errors import EmulationError
    from .frontend import checked_launch, run

    line_map, ptx_name = None, args.kernel
    try:
        check_outputs(args, (args.kernel, args.launch, args.inputs))
        if args.kernel.endswith(".py"):           # DSL code: compiled, reports also at its Python lines
            text, line_map, ptx_name = _compile_python(args.kernel)
        else:
            text = ptxgrammar.read_ptx(args.kernel)
        launch = checked_launch(args.launch, text, args.kernel_name)
        inputs = _load_inputs(args.inputs)
        module = ptxgrammar.parse(text, filename=ptx_name)
        sidecar = launch
        if args.max_ctas or args.max_elements:
            from .frontend import reduced_launch, select_spec

            launch = reduced_launch(select_spec(launch, args.kernel_name), args.max_ctas or 1 << 62,
                                    args.max_elements)
        result = run(module, launch, inputs, kernel=args.kernel_name, filename=ptx_name, **_options(args))
        result, scaling_lines = _covered(result, module, launch, inputs, args, ptx_name, sidecar)
    except (ptxgrammar.ParseError, DSLError, OutputError) as e:   # SidecarError too: located in the JSON
        return _err(str(e))
    except InputsError as e:
        return _err(f"{args.inputs}: error: {e}")
    except EmulationError as e:
        return _err(str(e) if ": error:" in str(e) else f"{args.kernel}: error: {e}")
    except OSError as e:
        return _err(f"{e.filename or args.kernel}: error: {e.strerror or e}")
    except ValueError as e:
        return _err(f"{args.kernel}: error: {e}")
    if ptx_name != args.kernel:
        result.reports[:] = [r.at_python(line_map, ptx_name, args.kernel) for r in result.reports]
    return _finish(result, args, scaling_lines)


def _covered(result, module, launch, inputs, args, ptx_name, sidecar):
    """--cover: the run at a launch grown until the pipeline is exercised (launch_scaling.py, from
    `launch`, reduced from `sidecar`), with the line saying what ran; without it, a launch that
    leaves gaps names the flag."""
    from .frontend import run, select_spec
    from .launch_scaling import scale_for_coverage

    if not result.stats["coverage"]["gaps"] and not args.cover:
        return result, []
    if not args.cover:
        return result, ["note: --cover grows the launch's problem size until the pipeline is exercised "
                        "(the outputs are then those of the larger launch)"]
    if inputs:
        return result, ["coverage: launch not scaled: --inputs fixes the buffers' shapes"]
    spec = select_spec(launch, args.kernel_name)
    scaling = scale_for_coverage(spec, result, lambda s: run(module, s, kernel=args.kernel_name, filename=ptx_name,
                                                              **_options(args)), args.scale_budget,
                                 keep_reports=True, origin=select_spec(sidecar, args.kernel_name))
    lines = [scaling.line()] if scaling.status != "not-needed" else []
    if scaling.scaled:
        lines.append("coverage: the outputs and reports are the scaled launch's: "
                     + ", ".join(f"{n} = {scaling.value}" for n in scaling.cls.scalars))
    return scaling.result, lines


def _compile_python(path: str):
    """(PTX text, {PTX line: Python line}, the PTX's file name) of a DSL module."""
    from ptx2py.transpile.traced import python_to_ptx_traced

    from .errors import python_ptx_name

    with open(path, encoding="utf-8") as f:
        source = f.read()
    ptx, line_map = python_to_ptx_traced(source, path, check=False)
    return ptx, line_map, python_ptx_name(path)


def _common(p):
    p.add_argument("--inputs", metavar="IN.npz", help="input buffers by parameter name (missing: seeded init)")
    p.add_argument("-o", "--output", metavar="OUT.npz", help="every buffer after the run, by name")
    p.add_argument("--schedule", default="inorder", help="warp order: inorder, reverse or random:SEED")
    p.add_argument("--no-sanitize", action="store_true", help="run without the sanitizer checks")
    p.add_argument("--resident-ctas", type=int, default=1, metavar="N",
                   help="interleave N CTAs (default 1: one after another); for CTAs that wait on each other")
    p.add_argument("--json", metavar="REPORT", help="write the reports and run statistics as JSON")
    add_max_steps(p)


def add_parser(subparsers):
    p = subparsers.add_parser("run", help="run a kernel on the CPU engine (with sanitizer checks)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("kernel", metavar="KERNEL.ptx", help="a PTX file, or a DSL .py module (compiled first)")
    p.add_argument("--launch", required=True, metavar="LAUNCH.json", help="launch sidecar (corpus/launch format)")
    p.add_argument("--kernel", dest="kernel_name", metavar="NAME", help="the .entry to run")
    p.add_argument("--max-ctas", type=int, metavar="N", help="reduced launch: run at most N CTAs")
    p.add_argument("--max-elements", type=int, metavar="N",
                   help="reduced launch: lower problem-size scalars (equal to a buffer's length) to N")
    p.add_argument("--cover", action="store_true",
                   help="when the launch leaves the pipeline unexercised (no stage refilled, no mbarrier phase "
                        "wrapped), grow its problem-size scalars until it is, within --scale-budget, and run that")
    add_scaling_options(p, "with --cover: ")
    _common(p)
    p.set_defaults(func=cmd_run)
    return p
