"""Command line: `ptx2py` and `py2ptx`. Arguments, help, atomic writes, error printing
and exit codes live here; the work is done by the packages.

Exit codes, the same for every command:
  0  ok
  1  findings: a round trip that is not byte-identical, a lint violation, a verify mismatch
  2  bad input or usage: a file that does not parse, a missing file, an unknown option
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

from ptx2py.outfile import OutputError, check_output, write_atomic

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2
EXIT_FAIL = EXIT_FINDINGS
SUBCOMMANDS = ("check", "lint", "verify", "compile-ir", "from-triton", "to-triton", "run", "run-ir")

# One example per subcommand, shown in its --help and in `ptx2py --help`.
EXAMPLES = {
    "check": "ptx2py check corpus/ptx --jobs 4 --json out.json",
    "lint": "ptx2py lint kernel.ptx",
    "verify": "ptx2py verify base.ptx edited.py --context 3 --html report.html",
    "compile-ir": "ptx2py compile-ir kernel.json --target sm_90a -o kernel.ptx",
    "from-triton": "ptx2py from-triton kernels.py::add_kernel --signature '*fp32,*fp32,*fp32,i32' "
                   "--constexprs BLOCK=1024 --sugar -o add.py",
    "to-triton": "ptx2py to-triton add.py --out override",
    "run": "ptx2py run kernel.ptx --launch launch.json --max-ctas 2 -o out.npz",
    "run-ir": "ptx2py run-ir kernel.json --target sm_80 --params n=1000 -o out.npz",
}


# --- shared helpers ----------------------------------------------------------------

def read_input(path: str) -> str:
    from ptx2py.ptxgrammar import decode_ptx, read_ptx

    if path == "-":
        return decode_ptx(sys.stdin.buffer.read(), "<stdin>")
    return read_ptx(path)


def emit_output(text: str, out: str | None, inputs=()) -> int:
    if out in (None, "-"):
        sys.stdout.write(text)
        return EXIT_OK
    try:
        write_atomic(out, text, inputs)
    except OutputError as e:
        return report_error(e)
    return EXIT_OK


def output_refused(out: str | None, inputs=()) -> int | None:
    """EXIT_INPUT (with the located message) when `out` could not be written, checked before the
    work; None when it can (or is stdout)."""
    if out in (None, "-"):
        return None
    try:
        check_output(out, inputs)
    except OutputError as e:
        return report_error(e)
    return None


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


def progress(items, label: str, total: int | None = None):
    from tqdm import tqdm

    total = len(items) if total is None else total
    return tqdm(items, desc=label, unit="file", file=sys.stderr, disable=total < 20 or None,
                leave=False, total=total)


# --- ptx2py check ---------------------------------------------------------------------

def cmd_check(args) -> int:
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        print(f"{missing[0]}: error: no such file or folder", file=sys.stderr)
        return EXIT_INPUT
    refused = output_refused(args.json, args.paths)
    if refused is not None:
        return refused
    files = ptx_files(args.paths)
    if args.shard is not None:
        index, count = args.shard
        files = files[index - 1::count]
    if not files:
        print(f"{' '.join(args.paths)}: error: no .ptx files found" + (" in this shard" if args.shard else ""),
              file=sys.stderr)
        return EXIT_INPUT
    results, start = [], time.perf_counter()
    for (path, folder), result in zip(files, progress(check_results(files, args), "check", len(files))):
        result["folder"] = str(folder)
        results.append(result)
        if not result["ok"]:
            print(f"{path}: FAIL at {result['stage']}: {result.get('error', '')}", file=sys.stderr)
    print_summary(results)
    try:
        write_check_reports(args, results, time.perf_counter() - start)
    except OutputError as e:
        return report_error(e)
    return EXIT_OK if all(r["ok"] for r in results) else EXIT_FINDINGS


def write_check_reports(args, results: list[dict], seconds: float) -> None:
    """--junit-xml (with each stage's time) and --json (without: the same input gives the same file)."""
    if args.junit_xml:
        from ptx2py.roundtrip.junit import junit_xml

        stages = ("ptx",) + (() if args.no_python else ("python",)) + (("sugar",) if args.sugar else ())
        write_atomic(args.junit_xml, junit_xml(results, stages, seconds))
    if args.json:
        import json

        rows = [{k: v for k, v in r.items() if k != "seconds"} for r in results]
        write_atomic(args.json, json.dumps({"files": rows, "summary": summarize(rows)}, indent=1))


def check_results(files, args):
    """Results in file order, from `args.jobs` worker processes (in this one for 1)."""
    from functools import partial

    from ptx2py.roundtrip.check import check_file

    one = partial(check_file, python_stage=not args.no_python, sugar=args.sugar)
    jobs = min(args.jobs or os.cpu_count() or 1, len(files))
    paths = [path for path, _ in files]
    if jobs <= 1:
        yield from map(one, paths)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn" if sys.platform == "win32" else "fork").Pool(jobs) as pool:
        # Small chunks keep the cores busy to the end (file sizes differ 1000x).
        yield from pool.imap(one, paths, chunksize=max(1, min(8, len(paths) // (jobs * 8))))


def shard(text: str) -> tuple[int, int]:
    """`--shard I/N`: the I-th of N parts of the file list (1 <= I <= N)."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N such as 1/4, not {text!r}") from None
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"shard {text!r}: I must be between 1 and N")
    return index, count


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes >= 1, not {text!r}")
    return value


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
    from ptx2py import ptx_to_python
    from ptx2py.ptxgrammar import ParseError

    refused = output_refused(args.output, [args.input])
    if refused is not None:
        return refused
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
    return emit_output(source, args.output, inputs=[args.input])


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the examples and the exit-code table as written."""


EXIT_CODES = """exit codes: 0 ok; 1 findings (a round trip that differs, a lint violation, a verify
mismatch); 2 bad input or usage (a file that does not parse, a missing file, a bad option)"""


def py2ptx_main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="py2ptx", description="Run ptx2py Python (generated or hand-written DSL) and write the PTX it builds.",
        epilog="example:\n  py2ptx kernel.py -o kernel.ptx\n\n" + EXIT_CODES, formatter_class=HelpFormatter)
    parser.add_argument("input", help="Python file written by ptx2py or by hand in the DSL, or - for stdin")
    parser.add_argument("-o", "--output", help="output .ptx (default: stdout); never the input itself")
    parser.add_argument("--no-check", action="store_true",
                        help="do not check instructions against the tables for the module's .version/.target")
    parser.add_argument("--version", action=VersionAction, version="py2ptx")
    args = parser.parse_args(argv)
    from ptx2py import DSLError, python_to_ptx

    refused = output_refused(args.output, [args.input])
    if refused is not None:
        return refused
    try:
        from ptx2py.ptxgrammar import read_file_bytes

        data = sys.stdin.buffer.read() if args.input == "-" else read_file_bytes(args.input)
        source = data.decode("utf-8-sig")   # a BOM is allowed in Python source
        import warnings

        from ptx2py.transpile.legacy import LegacyHeaderWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LegacyHeaderWarning)
            ptx = python_to_ptx(source, filename=args.input, check=not args.no_check)
        for w in caught:   # a module written by ptx2py 0.1 (its import line)
            if issubclass(w.category, LegacyHeaderWarning):
                print(f"warning: {w.message}", file=sys.stderr)
    except DSLError as e:
        return report_error(_ptx_given_to_py2ptx(e, source, args.input) or e)
    except OSError as e:
        return report_error(f"{args.input}: error: {e.strerror}")
    except UnicodeDecodeError as e:
        return report_error(f"{args.input}: error: not a text file (byte 0x{e.object[e.start]:02x} at "
                            f"offset {e.start} is not UTF-8)")
    return emit_output(ptx, args.output, inputs=[args.input])


_PTX_DIRECTIVE = re.compile(r"^[ \t]*\.(version|target|address_size|visible|entry|func)\b", re.M)


def _ptx_given_to_py2ptx(err, source: str, filename: str):
    """The located error for a PTX file given to py2ptx (it is not Python): at its first PTX
    directive, with the command that reads PTX; None for anything else."""
    from ptx2py import DSLError

    m = _PTX_DIRECTIVE.search(source) if err.message.startswith("invalid Python") else None
    if not m:
        return None
    line = source.count("\n", 0, m.start()) + 1
    text = source.splitlines()[line - 1]
    return DSLError(f"this input looks like PTX (a `.{m.group(1)}` directive), not Python; py2ptx reads the "
                    f"Python that ptx2py writes: to turn this PTX into Python run `ptx2py {filename}`",
                    filename, line, len(text) - len(text.lstrip()) + 1, text)


class VersionAction(argparse.Action):
    """`--version`: the installed version, looked up only when asked for (importlib.metadata
    costs a quarter of a start-up)."""

    def __init__(self, option_strings, version, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show the version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)
        self.version = version

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{self.version} {_version()}")
        parser.exit()


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("ptx2py")
    except Exception:  # noqa: BLE001  (running from a checkout that is not installed)
        return "unknown"


def ptx2py_main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return run_subcommand(argv)
    if argv and _looks_like_a_command(argv[0]):
        return unknown_command(argv[0])
    return cmd_transpile(transpile_parser().parse_args(argv))


def transpile_parser() -> argparse.ArgumentParser:
    commands = " | ".join(SUBCOMMANDS)
    examples = "\n".join(f"  {e}" for e in ["ptx2py kernel.ptx --sugar -o kernel.py", *(
        EXAMPLES[c] for c in SUBCOMMANDS if c in EXAMPLES)])
    parser = argparse.ArgumentParser(
        prog="ptx2py", usage=f"ptx2py [-h] [--version] FILE [-o OUT.py] [--sugar]\n"
                             f"       ptx2py {{{commands}}} ... (ptx2py COMMAND --help for each)",
        description="PTX -> Python (one PTX instruction is one Python call; py2ptx turns it back into "
                    "the same bytes), and the commands " + ", ".join(SUBCOMMANDS) + ".",
        epilog=f"examples:\n{examples}\n\n{EXIT_CODES}", formatter_class=HelpFormatter)
    parser.add_argument("input", metavar="FILE", help="PTX file, or - for stdin")
    parser.add_argument("-o", "--output", help="output .py (default: stdout); never the input itself")
    parser.add_argument("--sugar", action="store_true", help="readable Python (still re-emits the same bytes)")
    parser.add_argument("--launch", help="launch sidecar JSON naming the kernel parameters (--sugar)")
    parser.add_argument("--source", help="kernel source (Triton .py) naming the kernel parameters (--sugar)")
    parser.add_argument("--version", action=VersionAction, version="ptx2py")
    return parser


def _looks_like_a_command(word: str) -> bool:
    """A bare word that is not a file: a mistyped subcommand (`chek`), not a PTX path."""
    return (not word.startswith("-") and word != "-" and not os.path.exists(word)
            and "." not in word and "/" not in word and os.sep not in word)


def unknown_command(word: str) -> int:
    import difflib

    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.6)
    hint = f" — did you mean '{close[0]}'?" if close else f" (commands: {', '.join(SUBCOMMANDS)})"
    print(f"ptx2py: error: unknown command '{word}'{hint}", file=sys.stderr)
    return EXIT_INPUT


def run_subcommand(argv) -> int:
    parser = argparse.ArgumentParser(prog="ptx2py", formatter_class=HelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser(
        "check", help="round-trip PTX files and folders",
        description="Round-trip every .ptx file given or found under the folders: parse -> emit, "
                    "PTX -> Python -> PTX (and with --sugar the readable Python); a per-folder summary.")
    check.add_argument("paths", nargs="+", metavar="PATH", help=".ptx files or folders to search for them")
    check.add_argument("--json", help="write per-file results and the summary to this file")
    check.add_argument("--junit-xml", metavar="F",
                       help="write JUnit XML to this file (CI): a test case per file and stage, with its time")
    check.add_argument("--no-python", action="store_true", help="only parse -> emit")
    check.add_argument("--sugar", action="store_true", help="check the --sugar Python too")
    check.add_argument("--jobs", "-j", type=positive, metavar="N",
                       help="worker processes (default: all cores)")
    check.add_argument("--shard", type=shard, metavar="I/N",
                       help="check only the I-th of N equal parts of the sorted file list (CI matrices)")
    check.set_defaults(func=cmd_check)
    for extra in _extra_subcommands():
        extra(sub)
    for name, p in sub.choices.items():
        if name in EXAMPLES and not p.epilog:
            p.epilog = f"example:\n  {EXAMPLES[name]}\n\n{EXIT_CODES}"
            p.formatter_class = HelpFormatter
    args = parser.parse_args(argv)
    return args.func(args)


def _extra_subcommands():
    """Subcommands defined by other packages (lint, verify, compile-ir), when present."""
    found = []
    for module, attr in (("ptx2py.lint.cli", "add_parser"), ("ptx2py.verify.cli", "add_parser"),
                         ("ptx2py.kernelir.cli", "add_parser"), ("ptx2py.tritonbridge.cli", "add_parser"),
                         ("ptx2py.emulate.cli", "add_parser"), ("ptx2py.kernelir.run_cli", "add_parser")):
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
    except BrokenPipeError:  # the reader went away (`ptx2py verify ... | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def ptx2py_command() -> int:
    """The `ptx2py` console script."""
    return main_guard(ptx2py_main)


def py2ptx_command() -> int:
    """The `py2ptx` console script."""
    return main_guard(py2ptx_main)


if __name__ == "__main__":
    sys.exit(ptx2py_command())
