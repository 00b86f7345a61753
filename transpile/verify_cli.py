"""`ptx2py verify BASE.ptx EDITED.{py,ptx} [--run] [--json F]`.

Exit 0 when both assemble (differences are reported, not failures; with --run, a run whose
outputs differ exits 1), 1 when the edited module does not assemble, 2 on input/tool errors."""

from __future__ import annotations

import json
import sys


def run_verify(args) -> int:
    from ptxgrammar import ParseError

    from .verify import EXIT_FAIL, EXIT_INPUT, VerifyError, format_report, verify_files

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
    if args.run and report.get("ok"):
        from .gpu_run import run_pair

        run = run_pair(args.base, report_edited_ptx(args.edited, report))
        report["run"] = run
        print(run["message"])
        if run.get("status") == "mismatch":
            code = EXIT_FAIL
    if args.json:
        report.pop("edited_ptx", None)
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    return code


def report_edited_ptx(path: str, report: dict) -> str:
    from .verify import load_edited

    return load_edited(path)[0]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("verify", help="assemble base and edited PTX with ptxas and compare SASS")
    p.add_argument("base", help="the original .ptx")
    p.add_argument("edited", help="the edited .ptx or DSL .py")
    p.add_argument("--run", action="store_true", help="also launch both on a GPU (sidecar JSON in corpus/launch)")
    p.add_argument("--json", help="write the report to this file")
    p.set_defaults(func=run_verify)
