"""`ptx2py from-triton FILE.py::KERNEL ...` and `ptx2py to-triton k.py --out DIR`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

EXIT_INPUT = 2


def add_parser(sub) -> None:
    p = sub.add_parser("from-triton", help="compile a Triton kernel (no GPU needed) and write Python, PTX and sidecar",
                       description="Compile FILE.py::KERNEL with Triton for a target and write k.py (the PTX as "
                                   "Python, parameters named from the source), k.ptx and k.json (launch sidecar). "
                                   "Also takes a Triton cache folder of one kernel.")
    p.add_argument("kernel", help="FILE.py::KERNEL, or a Triton cache folder (~/.triton/cache/<KEY>)")
    p.add_argument("--signature", help="types: 'x_ptr=*fp32:16,n=i32' or positional '*fp32,*fp32,i32' "
                                       "(:16 = 16-byte aligned / multiple of 16)")
    p.add_argument("--constexprs", help="BM=128,BN=128,ACT=leaky_relu")
    p.add_argument("--num-warps", type=int)
    p.add_argument("--num-stages", type=int)
    p.add_argument("--target", help="sm_90a (default), sm_100a, sm_80, ...")
    p.add_argument("--specialization", choices=("signature", "jit"), default=None,
                   help="signature: the types and :16 hints as given (the corpus, Triton's AOT compiler); jit: what "
                        "kernel[grid](...) builds for the --arg values, so to-triton's override matches the program's "
                        "launch (default: jit when every scalar has an --arg value, else signature)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="launch value: a scalar's value, a pointer's element count (N or N:zeros for an output), "
                        "a descriptor's shape (2048x2048); repeatable")
    p.add_argument("--grid", help="launch grid X,Y,Z for the sidecar")
    p.add_argument("--like", help="take signature, constexprs, warps, stages, target, args and grid from a sidecar "
                                  "(corpus/launch/triton/*.json)")
    p.add_argument("--record-path", help="the source path Triton writes into the debug info (default: the file's own)")
    p.add_argument("--record-triton-root", help="the folder Triton's own library is recorded under in the debug info "
                                               "(.../site-packages/triton), to reproduce a build made elsewhere")
    p.add_argument("--sugar", action="store_true", help="readable Python (still re-emits the same PTX)")
    p.add_argument("-o", "--output", required=True, help="k.py (k.ptx and k.json are written beside it)")
    p.set_defaults(func=run_from_triton)

    t = sub.add_parser("to-triton", help="put an edited kernel where Triton's kernel override picks it up",
                       description="Re-emit the PTX of k.py (or take k.ptx) and write it as "
                                   "OVERRIDE_DIR/<key>/<kernel>.ptx for TRITON_KERNEL_OVERRIDE=1; prints the "
                                   "environment lines. The key comes from the k.json beside it.")
    t.add_argument("input", help="k.py (or k.ptx) written by from-triton, possibly edited")
    t.add_argument("--out", required=True, help="the override folder (TRITON_OVERRIDE_DIR)")
    t.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="the real call's value of an integer parameter (Triton specialises on a multiple of 16 and "
                        "on 1): the override is written under that call's key only; without it, under every key a "
                        "call with 16-byte aligned tensors can look up; repeatable")
    t.set_defaults(func=run_to_triton)


def _values(items: list[str]) -> tuple[dict, dict]:
    from .errors import BridgeError
    from .options import constexpr_value

    values, inits = {}, {}
    for item in items:
        name, sep, v = item.partition("=")
        if not sep or not name.isidentifier():
            raise BridgeError(f"--arg: {item!r} is not NAME=VALUE")
        v, _, init = v.partition(":")
        if init:
            inits[name] = init
        shape = "x" in v and v.replace("x", "").isdigit()
        values[name] = [int(x) for x in v.split("x")] if shape else constexpr_value(v)
    return values, inits


def _config(args, fn):
    from .compile import KernelConfig
    from .errors import BridgeError
    from .options import parse_assignments, parse_signature, parse_target

    like = json.loads(Path(args.like).read_text()) if args.like else None
    sig, hints, consts = ({}, {}, {})
    if args.signature:
        sig, hints, consts = parse_signature(args.signature, fn.arg_names)
    elif like:
        sig = {k: v for k, v in like["signature"].items() if v != "constexpr"}
    else:
        raise BridgeError("from-triton: --signature (or --like SIDECAR) is needed to compile a kernel")
    constexprs = dict(like["constexprs"]) if like else {}
    constexprs.update(consts)
    constexprs.update(parse_assignments(args.constexprs, "--constexprs"))
    values, inits = _values(args.arg)
    cap = parse_target(args.target) if args.target else (like["target"]["capability"] if like else 90)
    scalars = [n for n, t in sig.items() if not t.startswith(("*", "tensordesc")) and n not in constexprs]
    spec = args.specialization or ("jit" if args.arg and all(n in values for n in scalars) else "signature")
    cfg = KernelConfig(signature=sig, constexprs=constexprs, hints=hints, values=values, capability=cap,
                       num_warps=args.num_warps or (like["num_warps"] if like else 4),
                       num_stages=args.num_stages or (like["num_stages"] if like else 3), specialization=spec)
    return cfg, inits, like


def _private_cache() -> None:
    import atexit
    import os
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="ptx2py-triton-cache-")
    os.environ["TRITON_CACHE_DIR"] = folder
    atexit.register(shutil.rmtree, folder, True)


def _check_outputs(args) -> None:
    """k.py, k.ptx and k.json refused before Triton compiles (OutputError): a missing or read-only
    folder, a folder, the kernel's own source."""
    from ptx2py.outfile import check_output

    py = Path(args.output)
    for out in (py, py.with_suffix(".ptx"), py.with_suffix(".json")):
        check_output(str(out), (args.kernel.partition("::")[0],))


def run_from_triton(args) -> int:
    from ptx2py.outfile import OutputError, write_atomic

    from .compile import compile_kernel, from_cache_dir, load_kernel, record_triton_root
    from .errors import BridgeError
    from .options import grid
    from .outputs import outputs

    try:
        _check_outputs(args)
        if Path(args.kernel).is_dir():
            build, inits, like, values = from_cache_dir(args.kernel), {}, None, {}
        else:
            if args.record_path or args.record_triton_root:
                _private_cache()  # Triton's cache key ignores recorded paths: a hit would keep the old ones
            fn = load_kernel(args.kernel, args.record_path)
            if args.record_triton_root:
                record_triton_root(args.record_triton_root)
            cfg, inits, like = _config(args, fn)
            build, values = compile_kernel(fn, cfg, args.kernel), cfg.values
        files = outputs(build, args.output, sugar=args.sugar, values=values, inits=inits,
                        grid=grid(args.grid), like=like if not args.arg else None)
    except BridgeError as e:
        print(str(e) if ": error: " in str(e) else f"error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except OutputError as e:
        print(str(e), file=sys.stderr)
        return EXIT_INPUT
    except (OSError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as e:  # noqa: BLE001 - Triton itself fails in many ways (asserts in its launcher helpers)
        print(f"{args.kernel}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_INPUT
    try:
        for path, text in files.items():
            write_atomic(path, text)
    except OutputError as e:
        print(str(e), file=sys.stderr)
        return EXIT_INPUT
    side = json.loads(files[str(Path(args.output).with_suffix(".json"))])
    print(f"wrote {', '.join(files)} ({side['kernel']}, sm_{side['target']['capability']})", file=sys.stderr)
    for m in side.get("incomplete", ()):
        print(f"note: the sidecar lacks {m}", file=sys.stderr)
    return 0


def run_to_triton(args) -> int:
    from ptx2py.outfile import OutputError, write_atomic

    from .errors import BridgeError
    from .override import CACHE_NOTE, place

    try:
        given, _ = _values(args.arg)
        places, ptx, env, notes = place(args.input, args.out, given)
    except BridgeError as e:
        print(str(e) if ": error: " in str(e) else f"error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as e:  # a DSLError / ParseError from the edited Python or PTX: already located
        if type(e).__name__ in ("DSLError", "ParseError"):
            print(str(e), file=sys.stderr)
            return EXIT_INPUT
        raise
    try:
        for target, matches in places:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(str(target), ptx)
            print(f"wrote {target}: the override key of {matches}", file=sys.stderr)
    except OutputError as e:
        print(str(e), file=sys.stderr)
        return EXIT_INPUT
    except OSError as e:
        print(f"{args.out}: error: {e.strerror}", file=sys.stderr)
        return EXIT_INPUT
    for note in notes:
        print(note, file=sys.stderr)
    print(CACHE_NOTE, file=sys.stderr)
    print("\n".join(env))
    return 0
