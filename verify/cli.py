"""`ptx2py verify BASE.ptx EDITED.{py,ptx} [--full | --context N] [--ptxas PATH] [--races] [--html F]
[--run [auto|cpu|gpu] [--launch L.json] [--inputs IN.npz] [--repeat N] [--warmup N] [--rtol R] [--atol A]]
[--json F]`.

Exit 0 when both assemble (SASS differences are reported, not failures); 1 on a finding: the
edited module does not assemble, a lint rule is broken, --races finds a race or a lifecycle error,
or --run's outputs differ (or it fails to launch); 2 on input/tool errors (a sidecar that is missing or
invalid, `--run gpu` without a GPU)."""

from __future__ import annotations

import json
import sys


def run_verify(args) -> int:
    from ptx2py.launch.plan import InputsError
    from ptx2py.outfile import OutputError
    from ptx2py.ptxgrammar import ParseError

    from .report import EXIT_INPUT, VerifyError, verify_files

    if (args.launch or args.inputs) and not args.run and not (args.races and not args.inputs):
        print(f"error: {'--launch' if args.launch else '--inputs'} is for --run (the kernels' launch and inputs); "
              "add --run cpu, gpu or auto", file=sys.stderr)
        return EXIT_INPUT
    try:
        _check_outputs(args)
        run_setup = prepare_run(args) if args.run else None
        report = verify_files(args.base, args.edited, ptxas_path=args.ptxas)
        return _report_and_run(args, report, run_setup)
    except (ParseError, OutputError) as e:      # SidecarError too: located in the sidecar's JSON
        print(str(e), file=sys.stderr)
        return EXIT_INPUT
    except InputsError as e:
        print(f"{args.inputs or args.base}: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except VerifyError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as e:
        print(f"{e.filename}: error: {e.strerror}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as e:  # DSLError from the edited Python
        if type(e).__name__ == "DSLError":
            print(str(e), file=sys.stderr)
            return EXIT_INPUT
        raise


def _check_outputs(args) -> None:
    """--json and --html refused before ptxas runs: a missing or read-only folder, an input file."""
    from ptx2py.outfile import check_output

    for out in (args.json, args.html):
        if out is not None:
            check_output(out, (args.base, args.edited, args.launch, args.inputs))


def prepare_run(args) -> dict:
    """What `--run` needs, checked before any work: the engine (`gpu` without a usable GPU is an
    error; `auto` falls back to the CPU engine and says so), the sidecar (`--launch`, else found
    beside BASE or EDITED: launch.sidecar.find_sidecar), validated, and `--inputs`."""
    from ptx2py.emulate.cli import _load_inputs
    from ptx2py.launch.plan import kernel_specs
    from ptx2py.launch.sidecar import check_against_ptx, find_sidecar, load_sidecar
    from ptx2py.ptxgrammar import read_ptx

    from .report import VerifyError

    device = engine_for(args.run)
    if device == "gpu-missing":
        from .gpu_run import skip_reason

        raise VerifyError(f"--run gpu: {skip_reason()}; `--run cpu` runs both kernels on the CPU engine, "
                          "`--run auto` uses a GPU when there is one, else the CPU engine")
    path = args.launch or str(find_sidecar(args.base, args.edited))
    side = load_sidecar(path)
    base_text = read_ptx(args.base)
    for spec in kernel_specs(side.data):
        check_against_ptx(side, spec, base_text)
    return {"device": device, "launch": side.data, "sidecar": path, "inputs": _load_inputs(args.inputs)}


def engine_for(choice: str) -> str:
    """`cpu` or `gpu` for a `--run` choice; `gpu-missing` for `--run gpu` without a usable GPU."""
    if choice == "cpu":
        return "cpu"
    from .gpu_run import skip_reason

    why = skip_reason()
    if not why:
        return "gpu"
    if choice == "gpu":
        return "gpu-missing"
    print(f"--run auto: {why}: running both kernels on the CPU engine", file=sys.stderr)
    return "cpu"


def _report_and_run(args, report: dict, run_setup: dict | None) -> int:
    from .report import EXIT_FAIL, EXIT_INPUT, format_report

    print(format_report(report, context=args.context, full=args.full),
          file=sys.stdout if report.get("ok") else sys.stderr)
    code = report["exit"]
    if args.races:
        from .races import format_races, race_pair

        report["races"] = race_pair(args.base, report["edited_ptx"], edited_name=args.edited,
                                    line_map=report.get("line_map"), cap=args.races_size,
                                    timeout=args.races_timeout,
                                    sidecar=run_setup["sidecar"] if run_setup else args.launch)
        print(format_races(report["races"]))
        if report["races"].get("finding"):
            code = EXIT_FAIL
    if run_setup and report.get("ok"):
        code = _run_both(args, report, run_setup, code)
        if report["run"].get("status") == "skipped":
            code = EXIT_INPUT
    edited_ptx, line_map = report.pop("edited_ptx", None), report.pop("line_map", None)
    if args.html:
        from .html import page_sources, write_html

        write_html(report, args.html, page_sources(args.base, args.edited, edited_ptx, line_map))
    if args.json:
        from ptx2py.outfile import write_atomic

        write_atomic(args.json, json.dumps(report, indent=1, default=str))
    return code


def _run_both(args, report: dict, run_setup: dict, code: int) -> int:
    """--run: both kernels on the engine chosen (the CPU engine, or the GPU), on the same inputs."""
    from .report import EXIT_FAIL

    if run_setup["device"] == "cpu":
        from ptx2py.emulate.compare_run import verify_on_cpu

        return verify_on_cpu(args, report, report["edited_ptx"], code, run_setup["launch"], run_setup["inputs"])
    from .gpu_run import format_table, run_pair

    run = run_pair(args.base, report["edited_ptx"], repeat=args.repeat, warmup=args.warmup, rtol=args.rtol,
                   atol=args.atol, launch=run_setup["launch"], sidecar=run_setup["sidecar"],
                   inputs=run_setup["inputs"])
    report["run"] = run
    if run.get("kernels"):
        print(format_table(run["kernels"]))
    print(run["message"])
    return EXIT_FAIL if run.get("status") in ("mismatch", "error") else code


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("verify", help="assemble base and edited PTX with ptxas and compare SASS")
    p.add_argument("base", help="the original .ptx")
    p.add_argument("edited", help="the edited .ptx or DSL .py")
    p.add_argument("--run", nargs="?", const="auto", choices=("auto", "gpu", "cpu"),
                   help="also run both and compare their outputs: gpu (exit 2 without one), cpu (the CPU engine), "
                   "auto (the default: a GPU when there is one, else the CPU engine)")
    p.add_argument("--launch", metavar="L.json", help="with --run: the launch sidecar (default: BASE's stem .json "
                   "beside BASE, then EDITED's beside EDITED, then the corpus's own for a corpus file)")
    p.add_argument("--inputs", metavar="IN.npz", help="with --run: input buffers by parameter name (missing: seeded)")
    p.add_argument("--repeat", type=int, default=50, help="with --run: timed launches per kernel (median; default 50)")
    p.add_argument("--warmup", type=int, default=5, help="with --run: untimed launches first (default 5)")
    p.add_argument("--rtol", type=float, help="with --run: compare outputs within this relative tolerance "
                   "instead of bit for bit")
    p.add_argument("--atol", type=float, help="with --run: ... and this absolute tolerance")
    from ptx2py.emulate.cli import add_max_steps, add_scaling_options

    add_max_steps(p)                    # --run cpu: the engine's watchdog
    add_scaling_options(p, "with --run cpu: ")
    p.add_argument("--no-scale", action="store_true", help="with --run cpu: keep the given launch even when it "
                   "leaves the pipeline unexercised (default: grow its problem size until it does)")
    p.add_argument("--full", action="store_true", help="print the whole aligned SASS diff")
    p.add_argument("--context", type=int, metavar="N",
                   help="print the aligned SASS diff with N rows around each change")
    p.add_argument("--ptxas", metavar="PATH", help="the ptxas to use (default: $PTX2PY_PTXAS, then PATH, $CUDA_HOME, "
                   "the CUDA pip wheels, Triton's; the first new enough for the module's .version)")
    p.add_argument("--races", action="store_true", help="also prove both kernels race-free with SentryWard "
                   "(pip install 'ptx2py[races]'; launch from the sidecar, --launch or found as for --run, shrunk)")
    p.add_argument("--races-timeout", type=int, default=300, metavar="S", help="with --races: seconds per kernel")
    p.add_argument("--races-size", type=int, default=128, metavar="N", help="with --races: cap every problem "
                   "dimension at N (a multiple of the TMA box; the grid shrinks with it; default 128)")
    p.add_argument("--html", metavar="REPORT.html",
                   help="also write the report as one self-contained page: SASS, PTX and Python side by side, linked "
                        "line to line by ptxas's line info, the equal SASS runs folded")
    p.add_argument("--json", help="write the report to this file")
    p.set_defaults(func=run_verify)
