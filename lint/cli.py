"""`ptx2py lint PATH...`: check PTX files (or folders of them) against the instruction tables.

Prints `file:line:col: error: [rule-id] message`; exit 0 when clean, 1 on any violation,
2 when a file does not parse (the parse error is printed)."""

from __future__ import annotations

import sys
from pathlib import Path


def _files(paths):
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            yield from sorted(p.rglob("*.ptx"))
        else:
            yield p


def _allowed(values) -> set[str]:
    """`--allow-unknown frob,knob` or `--allow-unknown @file` (one opcode a line, # comments)."""
    out: set[str] = set()
    for value in values or ():
        if value.startswith("@"):
            text = Path(value[1:]).read_text()
            out |= {ln.split("#")[0].strip() for ln in text.splitlines()} - {""}
        else:
            out |= {v.strip() for v in value.split(",") if v.strip()}
    return out


def run_lint(args) -> int:
    from ptx2py import ptxgrammar
    from ptx2py.lint import lint_module
    from ptx2py.ptxgrammar import ParseError, read_ptx

    status = 0
    found_any = False
    allowed = _allowed(args.allow_unknown)
    for path in _files(args.paths):
        found_any = True
        try:
            text = read_ptx(str(path))
            module = ptxgrammar.parse(text, str(path))
        except ParseError as e:
            print(str(e), file=sys.stderr)
            status = 2
            continue
        except OSError as e:
            print(f"{path}: error: {e.strerror}", file=sys.stderr)
            status = 2
            continue
        for v in lint_module(module, str(path), strict=args.strict, allow_unknown=allowed):
            print(v)
            if v.severity == "error" and status == 0:
                status = 1
    if not found_any:
        print(f"{' '.join(map(str, args.paths))}: error: no .ptx files found", file=sys.stderr)
        return 2
    return status


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("lint", help="check instructions against the PTX ISA tables")
    p.add_argument("paths", nargs="+", help=".ptx files or folders")
    p.add_argument("--strict", action="store_true", help="(kept for scripts; unknown opcodes are always reported)")
    p.add_argument("--allow-unknown", action="append", metavar="OPS",
                   help="opcodes not to report as unknown: a comma list, or @file with one a line")
    p.set_defaults(func=run_lint)
