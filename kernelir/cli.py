"""`ptx2py compile-ir KERNEL.json [-o OUT.ptx] [--python] [--target sm_90a]`.

Compiles a kernel IR file (a bare kernel or a problem file with a "kernel"
key) to PTX, or with --python to the ptx2py DSL Python that rebuilds it.
Errors print as ``KERNEL.json: error: <node path>: message`` and exit 2; the
output file is written atomically (temp file + os.replace), never partially.
"""
from __future__ import annotations

import json
import sys

from outfile import write_atomic

EXIT_OK, EXIT_INPUT = 0, 2


def cmd_compile_ir(args) -> int:
    from .compiler import CompileError, compile_kernel
    from .load import IRError, load_kernel

    src = args.kernel
    try:
        with open(src, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict) and "kernel" in data and "problem" in data:
            data = data["kernel"]
        kernel = load_kernel(data)
        text = compile_kernel(kernel, target=args.target)
        if args.python:
            import transpile
            text = transpile.ptx_to_python(text, filename=src)
    except (CompileError, IRError) as e:
        print(f"{src}: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except (OSError, json.JSONDecodeError) as e:
        print(f"{src}: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        try:
            write_atomic(args.output, text)
        except OSError as e:
            print(f"{args.output}: error: {e}", file=sys.stderr)
            return EXIT_INPUT
    return EXIT_OK


def add_parser(subparsers):
    p = subparsers.add_parser("compile-ir", help="compile a kernel IR (JSON) to PTX",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("kernel", metavar="KERNEL.json")
    p.add_argument("-o", "--output", metavar="OUT.ptx", help="output file (default: stdout)")
    p.add_argument("--python", action="store_true", help="write ptx2py DSL Python instead of PTX")
    p.add_argument("--target", default="sm_90a", help="GPU target (default sm_90a; sm_80 or newer)")
    p.set_defaults(func=cmd_compile_ir)
    return p
