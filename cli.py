"""Command line: `ptx2py` and `py2ptx`. Arguments, atomic writes, error printing
and exit codes live here; the work is done by the packages."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2
SUBCOMMANDS = ("check", "lint", "verify", "compile-ir")


# --- shared helpers ----------------------------------------------------------------

def write_atomic(path: str, text: str) -> None:
    """Write all of `text` or nothing: a temp file in the same folder, then rename."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".ptx2py-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def read_input(path: str) -> str:
    from ptxgrammar import read_ptx

    if path == "-":
        data = sys.stdin.buffer.read()
        tmp = tempfile.NamedTemporaryFile(delete=False)
        tmp.write(data)
        tmp.close()
        try:
            return read_ptx(tmp.name, "<stdin>")
        finally:
            os.unlink(tmp.name)
    return read_ptx(path)


def emit_output(text: str, out: str | None) -> None:
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        write_atomic(out, text)


def report_error(err) -> int:
    print(str(err), file=sys.stderr)
    return EXIT_INPUT


def ptx_files(paths: list[str]) -> list[tuple[Path, Path]]:
    """(file, the folder it is reported under) for every .ptx file in the arguments."""
    found = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            found += [(f, f.parent) for f in sorted(p.rglob("*.ptx"))]
        else:
            found.append((p, p.parent))
    return found


def progress(items, label: str):
    from tqdm import tqdm

    return tqdm(items, desc=label, unit="file", file=sys.stderr, disable=len(items) < 20 or None,
                leave=False)


# --- ptx2py check ---------------------------------------------------------------------

def cmd_check(args) -> int:
    from roundtrip.check import check_file

    files = ptx_files(args.paths)
    if not files:
        print("error: no .ptx files found", file=sys.stderr)
        return EXIT_INPUT
    results = []
    for path, folder in progress(files, "check"):
        result = check_file(path, python_stage=not args.no_python, sugar=args.sugar)
        result["folder"] = str(folder)
        results.append(result)
        if not result["ok"]:
            print(f"{path}: FAIL at {result['stage']}: {result.get('error', '')}", file=sys.stderr)
    print_summary(results)
    if args.json:
        write_atomic(args.json, json.dumps({"files": results, "summary": summarize(results)}, indent=1))
    return EXIT_OK if all(r["ok"] for r in results) else EXIT_FAIL


STAGE_NAMES = {"ptx": "parse->emit", "python": "PTX->Python->PTX", "sugar": "--sugar PTX->Python->PTX"}


def summarize(results) -> dict:
    """Per folder: files, bytes, per-stage pass counts, explicit-formatting share."""
    by_folder: dict = defaultdict(lambda: {"files": 0, "ok": 0, "bytes": 0, "statements": 0, "explicit": 0,
                                           "stages": defaultdict(lambda: [0, 0])})
    for r in results:
        s = by_folder[r["folder"]]
        s["files"] += 1
        s["ok"] += r["ok"]
        s["bytes"] += r.get("bytes", 0)
        s["statements"] += r.get("statements", 0)
        s["explicit"] += r.get("explicit_format", 0)
        for stage in STAGE_NAMES:
            if r.get(stage) is not None:
                s["stages"][stage][0] += r[stage]
                s["stages"][stage][1] += 1
    for s in by_folder.values():
        s["explicit_share"] = s["explicit"] / s["statements"] if s["statements"] else 0.0
        s["stages"] = {k: {"passed": v[0], "run": v[1]} for k, v in s["stages"].items()}
    return dict(by_folder)


def print_summary(results) -> None:
    for folder, s in sorted(summarize(results).items()):
        stages = ", ".join(f"{STAGE_NAMES[k]} {v['passed']}/{v['run']}" for k, v in s["stages"].items())
        line = f"{folder}: {s['ok']}/{s['files']} ok ({stages}), {s['bytes'] / 1e6:.2f} MB"
        if s["statements"]:
            line += f", explicit formatting on {100 * s['explicit_share']:.2f}% of statements"
        print(line)
    good = sum(r["ok"] for r in results)
    print(f"total: {good}/{len(results)} files pass every stage")


# --- ptx2py FILE / py2ptx FILE --------------------------------------------------------

def cmd_transpile(args) -> int:
    from ptxgrammar import ParseError
    from transpile import ptx_to_python

    try:
        text = read_input(args.input)
        source = ptx_to_python(text, sugar=args.sugar, filename="<stdin>" if args.input == "-" else args.input,
                               launch=getattr(args, "launch", None), source=getattr(args, "source", None))
    except ParseError as e:
        return report_error(e)
    except OSError as e:
        return report_error(f"{e.filename or args.input}: error: {e.strerror}")
    except ValueError as e:  # a --launch sidecar that is not JSON
        return report_error(f"{args.launch}: error: {e}")
    emit_output(source, args.output)
    return EXIT_OK


def py2ptx_main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="py2ptx", description="Run ptx2py Python and write the PTX it builds.")
    parser.add_argument("input", help="Python file written by ptx2py or by hand in the DSL")
    parser.add_argument("-o", "--output", help="output .ptx (default: stdout)")
    parser.add_argument("--no-check", action="store_true",
                        help="do not check instructions against the tables for the module's .version/.target")
    args = parser.parse_args(argv)
    from transpile import DSLError, python_to_ptx

    try:
        source = sys.stdin.read() if args.input == "-" else Path(args.input).read_text()
        ptx = python_to_ptx(source, filename=args.input, check=not args.no_check)
    except DSLError as e:
        return report_error(e)
    except OSError as e:
        return report_error(f"{args.input}: error: {e.strerror}")
    emit_output(ptx, args.output)
    return EXIT_OK


def ptx2py_main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return run_subcommand(argv)
    parser = argparse.ArgumentParser(
        prog="ptx2py", description="PTX -> Python. Subcommands: " + ", ".join(SUBCOMMANDS))
    parser.add_argument("input", help="PTX file, or - for stdin")
    parser.add_argument("-o", "--output", help="output .py (default: stdout)")
    parser.add_argument("--sugar", action="store_true", help="readable Python (still re-emits the same bytes)")
    parser.add_argument("--launch", help="launch sidecar JSON naming the kernel parameters (--sugar)")
    parser.add_argument("--source", help="kernel source (Triton .py) naming the kernel parameters (--sugar)")
    return cmd_transpile(parser.parse_args(argv))


def run_subcommand(argv) -> int:
    parser = argparse.ArgumentParser(prog="ptx2py")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="round-trip PTX files and folders")
    check.add_argument("paths", nargs="+")
    check.add_argument("--json", help="write per-file results to this file")
    check.add_argument("--no-python", action="store_true", help="only parse -> emit")
    check.add_argument("--sugar", action="store_true", help="check the --sugar Python too")
    check.set_defaults(func=cmd_check)
    for extra in _extra_subcommands():
        extra(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def _extra_subcommands():
    """Subcommands defined by other packages (lint, verify, compile-ir), when present."""
    found = []
    for module, attr in (("lint.cli", "add_parser"), ("verify.cli", "add_parser"),
                         ("kernelir.cli", "add_parser")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ImportError:
            continue
        found.append(getattr(mod, attr))
    return found


def main_guard(fn):
    try:
        return fn()
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main_guard(ptx2py_main))
