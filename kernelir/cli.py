"""`ptx2py compile-ir KERNEL.json [-o OUT.ptx] [--python] [--target sm_90a]`.

Compiles a kernel IR file (a bare kernel or a problem file with a "kernel"
key) to PTX, or with --python to the ptx2py DSL Python that rebuilds it.
Errors print as ``KERNEL.json: error: <node path>: message`` and exit 2; the
output file is written atomically (temp file + os.replace), never partially.
"""
from __future__ import annotations

import json
import sys

from ptx2py.outfile import OutputError, check_output, write_atomic

EXIT_OK, EXIT_INPUT = 0, 2


def cmd_compile_ir(args) -> int:
    from .compiler import CompileError, compile_kernel
    from .load import IRError, load_kernel

    src = args.kernel
    try:
        if args.output not in (None, "-"):
            check_output(args.output, [src])
    except OutputError as e:
        print(e, file=sys.stderr)
        return EXIT_INPUT
    try:
        with open(src, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict) and "kernel" in data and "problem" in data:
            data = data["kernel"]
        kernel = load_kernel(data)
        text = compile_kernel(kernel, target=args.target)
        if args.python:
            from ptx2py import transpile
            text = transpile.ptx_to_python(text, filename=src)
    except (CompileError, IRError) as e:
        print(f"{src}: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as e:
        print(f"{src}: error: {e.strerror}", file=sys.stderr)
        return EXIT_INPUT
    except json.JSONDecodeError as e:
        print(f"{src}:{e.lineno}:{e.colno}: error: not valid JSON: {e.msg}", file=sys.stderr)
        return EXIT_INPUT
    except UnicodeDecodeError as e:
        print(f"{src}: error: not a UTF-8 text file (byte 0x{e.object[e.start]:02x} at offset {e.start})",
              file=sys.stderr)
        return EXIT_INPUT
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        try:
            write_atomic(args.output, text, inputs=[src])
        except OutputError as e:
            print(e, file=sys.stderr)
            return EXIT_INPUT
    return EXIT_OK


def _target(text: str) -> str:
    import argparse

    from .compiler import target_problem

    problem = target_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def add_parser(subparsers):
    p = subparsers.add_parser(
        "compile-ir", help="compile a kernel IR (JSON) to PTX",
        description="Compile a kernel IR file (a bare kernel, or a problem file with a \"kernel\" key) to "
                    "PTX in one pass, or with --python to the ptx2py DSL Python that rebuilds that PTX.")
    p.add_argument("kernel", metavar="KERNEL.json", help="kernel IR JSON (kernelir/schema.json)")
    p.add_argument("-o", "--output", metavar="OUT.ptx", help="output file (default: stdout)")
    p.add_argument("--python", action="store_true", help="write ptx2py DSL Python instead of PTX")
    p.add_argument("--target", default="sm_90a", type=_target,
                   help="GPU target, sm_80 or newer (default sm_90a)")
    p.set_defaults(func=cmd_compile_ir)
    return p
