"""`ptx2py verify BASE.ptx EDITED.{py,ptx} [--full | --context N] [--ptxas PATH] [--races] [--html F]
[--run [--repeat N] [--warmup N] [--rtol R] [--atol A]] [--json F]`.

Exit 0 when both assemble (SASS differences are reported, not failures); 1 on a finding: the
edited module does not assemble, a lint rule is broken, --races finds a race or a lifecycle error,
or --run's outputs differ (or it fails to launch); 2 on input/tool errors."""

from __future__ import annotations

import json
import sys


def run_verify(args) -> int:
    from ptx2py.ptxgrammar import ParseError

    from .report import EXIT_FAIL, EXIT_INPUT, VerifyError, format_report, verify_files

    try:
        report = verify_files(args.base, args.edited, ptxas_path=args.ptxas)
    except ParseError as e:
        print(str(e), file=sys.stderr)
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
    print(format_report(report, context=args.context, full=args.full),
          file=sys.stdout if report.get("ok") else sys.stderr)
    code = report["exit"]
    if args.races:
        from .races import format_races, race_pair

        report["races"] = race_pair(args.base, report["edited_ptx"], edited_name=args.edited,
                                    line_map=report.get("line_map"), cap=args.races_size,
                                    timeout=args.races_timeout)
        print(format_races(report["races"]))
        if report["races"].get("finding"):
            code = EXIT_FAIL
    from ptx2py.emulate.compare_run import verify_on_cpu

    if args.run and report.get("ok") and cpu_run_wanted(args.run):
        code = verify_on_cpu(args, report, report["edited_ptx"], code)
    elif args.run and report.get("ok"):
        from .gpu_run import format_table, run_pair

        run = run_pair(args.base, report["edited_ptx"], repeat=args.repeat,
                       warmup=args.warmup, rtol=args.rtol, atol=args.atol)
        report["run"] = run
        if run.get("kernels"):
            print(format_table(run["kernels"]))
        print(run["message"])
        if run.get("status") in ("mismatch", "error"):
            code = EXIT_FAIL
    report.pop("edited_ptx", None)
    report.pop("line_map", None)
    if args.html:
        from .html import write_html

        write_html(report, args.html)
    if args.json:
        from ptx2py.outfile import write_atomic

        write_atomic(args.json, json.dumps(report, indent=1, default=str))
    return code


def cpu_run_wanted(choice: str) -> bool:
    """`--run cpu`, or `--run`/`--run auto` on a machine without a usable GPU."""
    if choice == "cpu":
        return True
    if choice == "gpu":
        return False
    from .gpu_run import skip_reason

    return bool(skip_reason())


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("verify", help="assemble base and edited PTX with ptxas and compare SASS")
    p.add_argument("base", help="the original .ptx")
    p.add_argument("edited", help="the edited .ptx or DSL .py")
    p.add_argument("--run", nargs="?", const="auto", choices=("auto", "gpu", "cpu"),
                   help="also run both (sidecar in corpus/launch): gpu, cpu (the emulate engine), auto (default)")
    p.add_argument("--repeat", type=int, default=50, help="with --run: timed launches per kernel (median; default 50)")
    p.add_argument("--warmup", type=int, default=5, help="with --run: untimed launches first (default 5)")
    p.add_argument("--rtol", type=float, help="with --run: compare outputs within this relative tolerance "
                   "instead of bit for bit")
    p.add_argument("--atol", type=float, help="with --run: ... and this absolute tolerance")
    from ptx2py.emulate.cli import add_max_steps

    add_max_steps(p)                    # --run cpu: the engine's watchdog
    p.add_argument("--full", action="store_true", help="print the whole aligned SASS diff")
    p.add_argument("--context", type=int, metavar="N",
                   help="print the aligned SASS diff with N rows around each change")
    p.add_argument("--ptxas", metavar="PATH", help="the ptxas to use (default: $PTX2PY_PTXAS, then PATH, $CUDA_HOME, "
                   "the CUDA pip wheels, Triton's; the first new enough for the module's .version)")
    p.add_argument("--races", action="store_true", help="also prove both kernels race-free with SentryWard "
                   "(pip install 'ptx2py[races]'; launch from the sidecar in corpus/launch, shrunk)")
    p.add_argument("--races-timeout", type=int, default=300, metavar="S", help="with --races: seconds per kernel")
    p.add_argument("--races-size", type=int, default=128, metavar="N", help="with --races: cap every problem "
                   "dimension at N (a multiple of the TMA box; the grid shrinks with it; default 128)")
    p.add_argument("--html", metavar="REPORT.html",
                   help="also write the report as a page with a side-by-side SASS diff")
    p.add_argument("--json", help="write the report to this file")
    p.set_defaults(func=run_verify)
