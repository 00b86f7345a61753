"""`ptx2py verify BASE.ptx EDITED.{py,ptx} [--run [--repeat N] [--warmup N] [--rtol R] [--atol A]] [--json F]`.

Exit 0 when both assemble (differences are reported, not failures; with --run, a run whose
outputs differ (or that fails to launch) exits 1; --run prints a table of both kernels' median
times), 1 when the edited module does not assemble, 2 on input/tool errors."""

from __future__ import annotations

import json
import sys


def run_verify(args) -> int:
    from ptxgrammar import ParseError

    from .sass import EXIT_FAIL, EXIT_INPUT, VerifyError, format_report, verify_files

    try:
        report = verify_files(args.base, args.edited)
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
    print(format_report(report), file=sys.stdout if report.get("ok") else sys.stderr)
    code = report["exit"]
    from emulate.compare_run import cpu_run_wanted, verify_on_cpu

    if args.run and report.get("ok") and cpu_run_wanted(args.run):
        code = verify_on_cpu(args, report, report_edited_ptx(args.edited, report), code)
    elif args.run and report.get("ok"):
        from .gpu_run import run_pair

        from .gpu_run import format_table

        run = run_pair(args.base, report_edited_ptx(args.edited, report), repeat=args.repeat,
                       warmup=args.warmup, rtol=args.rtol, atol=args.atol)
        report["run"] = run
        if run.get("kernels"):
            print(format_table(run["kernels"]))
        print(run["message"])
        if run.get("status") in ("mismatch", "error"):
            code = EXIT_FAIL
    if args.json:
        report.pop("edited_ptx", None)
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    return code


def report_edited_ptx(path: str, report: dict) -> str:
    from .sass import load_edited

    return load_edited(path)[0]


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
    p.add_argument("--json", help="write the report to this file")
    p.set_defaults(func=run_verify)
