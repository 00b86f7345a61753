"""`ptx2py run-ir KERNEL.json`: compile an IR kernel (a bundled problem, a problem file of one's own
or a bare kernel) and run THE COMPILED PTX on the CPU engine (never the IR interpreter); buffers in
and out by their IR names; input buffers not given are seeded (run_cpu.seeded_inputs)."""

from __future__ import annotations

import json
import os

from ptx2py.emulate.cli import _common, _err, _finish, _load_inputs, _options, check_outputs


def _params(text: str | None) -> dict:
    out = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, _, value = item.partition("=")
        if not _:
            raise ValueError(f"--params item {item!r} is not name=value")
        v = value.strip()
        out[name.strip()] = float(v) if any(c in v for c in ".eEn") and not v.lstrip("-").isdigit() else int(v, 0)
    return out


def cmd_run_ir(args) -> int:
    from ptx2py.emulate.errors import EmulationError
    from ptx2py.launch.plan import InputsError
    from ptx2py.outfile import OutputError

    from .compiler import CompileError
    from .load import IRError, load_kernel
    from .problems import NAMES
    from .run_cpu import run_ir, seeded_inputs

    try:
        check_outputs(args, (args.kernel, args.inputs))
        with open(args.kernel, encoding="utf-8") as f:
            data = json.load(f)
        meta = {}
        if isinstance(data, dict) and "kernel" in data and "problem" in data:
            meta, data = data["problem"], data["kernel"]
        kernel = load_kernel(data)
        params = {**meta.get("test_params", meta.get("params", {})), **_params(args.params)}
        stem = os.path.splitext(os.path.basename(args.kernel))[0]
        inputs = seeded_inputs(kernel, params, _load_inputs(args.inputs), stem if stem in NAMES else kernel.name)
        result = run_ir(kernel, params, inputs, args.target, **_options(args))
    except (OutputError, InputsError) as e:
        return _err(str(e) if ": error:" in str(e) else f"{args.inputs}: error: {e}")
    except (CompileError, IRError, EmulationError, ValueError, KeyError) as e:
        return _err(str(e) if ": error:" in str(e) else f"{args.kernel}: error: {e}")
    except OSError as e:
        return _err(f"{e.filename or args.kernel}: error: {e.strerror or e}")
    return _finish(result, args)


def add_parser(subparsers):
    q = subparsers.add_parser("run-ir", help="compile an IR kernel and run its PTX on the CPU engine")
    q.add_argument("kernel", metavar="KERNEL.json")
    q.add_argument("--target", default="sm_80", choices=("sm_80", "sm_90a"))
    q.add_argument("--params", help="scalar params, e.g. n=1000,a=2.5")
    _common(q)
    q.set_defaults(func=cmd_run_ir)
    return q
