"""The launch sidecar of a compiled Triton kernel (the corpus format, corpus/README.md: what
launch/plan.py reads to run it) and the Python name of each of its PTX parameters."""

from __future__ import annotations

import math
import re

from .errors import BridgeError

_DESC = re.compile(r"tensordesc<(\w+)\[([\d, ]+)\]>\Z")
_FLOAT = ("fp", "bf")
HIDDEN = ["global_scratch (u64 pointer)", "profile_scratch (u64 pointer)"]
NOTES = ("PTX params: each tensordesc arg expands to a 128-byte CUtensorMap (.param .align 64 .b8[128]) followed by "
         "its shape (i32 per dim) and strides (i64 per dim); two hidden pointer params (global/profile scratch) are "
         "appended. Pass null hidden pointers unless global_scratch_size > 0.")


def tensordesc_type(ty: str) -> tuple[str, list[int]]:
    m = _DESC.match(ty.replace(" ", ""))
    if not m:
        raise BridgeError(f"{ty}: not a tensordesc<dtype[block]> type")
    return m.group(1), [int(x) for x in m.group(2).split(",")]


def _contiguous(shape) -> list[int]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def launch_args(signature: dict, values: dict, inits: dict) -> tuple[list[dict], list[str]]:
    """The sidecar's `args` (every non-constexpr parameter, in order) and what is missing for a run."""
    args, missing = [], []
    for name, ty in signature.items():
        if ty == "constexpr":
            continue
        v = values.get(name)
        if ty.startswith("*"):
            dt = ty[1:]
            a = {"name": name, "kind": "pointer", "dtype": dt}
            if v is None:
                missing.append(f"{name}: element count (--arg {name}=N)")
            else:
                a["count"] = int(v)
            a["init"] = inits.get(name, "randn" if dt.startswith(_FLOAT) else "randint")
        elif ty.startswith("tensordesc"):
            dt, block = tensordesc_type(ty)
            a = {"name": name, "kind": "tma-descriptor", "dtype": dt}
            if v is None:
                missing.append(f"{name}: tensor shape (--arg {name}=2048x2048)")
                shape = [0] * len(block)
            else:
                shape = list(v)
            a.update(shape=shape, strides=_contiguous(shape), block_shape=block, count=int(math.prod(shape)),
                     init=inits.get(name, "randn" if dt.startswith(_FLOAT) else "randint"))
        else:
            if v is None:
                missing.append(f"{name}: scalar value (--arg {name}=VALUE)")
            a = {"name": name, "kind": "scalar", "dtype": ty, "value": 0 if v is None else v}
        args.append(a)
    return args, missing


def param_names(sidecar: dict) -> list[str]:
    """One Python name per PTX parameter, from the sidecar's argument names: `a_desc`,
    `a_desc_shape0`, `a_desc_stride1`, ..., `global_scratch`, `profile_scratch`."""
    from ptx2py.launch.plan import logical_slots

    names, seen = [], {}
    suffix = {"desc-shape": "shape", "desc-stride": "stride", "desc-flag": "flag"}
    for slot in logical_slots(sidecar):
        base = slot["arg"]["name"]
        if slot["role"] in suffix:
            key = (base, slot["role"], slot["dtype"])
            i = seen.get(key, 0)
            seen[key] = i + 1
            wide = slot["dtype"] == "i64" and slot["role"] == "desc-shape"
            base = f"{base}_{suffix[slot['role']]}{i}" + ("_i64" if wide else "")
        names.append(_python_name(base, names))
    return names


def _python_name(name: str, taken) -> str:
    n = re.sub(r"\W", "_", name).lstrip("_") or "p"
    if n in ("name", "demangled") or n[0].isdigit():
        n = "p_" + n
    while n in taken:
        n += "_"
    return n


def ttir_param_names(ttir: str, count: int) -> list[str] | None:
    """From a cached kernel's TTIR (`tt.func public @k(%a_desc: ..., %a_desc.shape.0: ...)`), one
    name per PTX parameter (the two hidden scratch pointers last); None when they do not line up."""
    m = re.search(r"tt\.func public @[\w$]+\((.*?)\)\s*(?:attributes|\{)", ttir, re.S)
    if not m:
        return None
    args = re.findall(r"%([\w.]+):", m.group(1))
    names: list[str] = []
    for a in args + ["global_scratch", "profile_scratch"]:
        names.append(_python_name(a.replace(".shape.", "_shape").replace(".stride.", "_stride"), names))
    return names if len(names) == count else None


def override_entry(src) -> dict | None:
    """Where Triton's kernel override looks for this kernel's PTX: `<TRITON_OVERRIDE_DIR>/<key>/<file>`
    (triton/compiler/compiler.py: `get_override_manager(src.hash())`, file `<src.name[:150]>.ptx`)."""
    if src is None:
        return None
    from triton.runtime.cache import _base32

    return {"key": _base32(src.hash()), "file": f"{src.name[:150]}.ptx"}


def specialisation(src, arg_names) -> dict:
    """What a build assumed: {"divisible": [names], "constants": {name: value}} (for the sidecar)."""
    divisible = sorted(arg_names[k[0]] for k, v in src.attrs.items() if len(k) == 1 and ["tt.divisibility", 16] in v)
    constants = {arg_names[k[0]]: v for k, v in src.constants.items() if len(k) == 1}
    return {"divisible": divisible, "constants": constants}


def build_sidecar(build, *, ptx_file: str, values: dict | None = None, inits: dict | None = None,
                  grid: list[int] | None = None, like: dict | None = None) -> dict:
    """The corpus-format sidecar of `build` (tritonbridge.compile.Build)."""
    import triton

    md = build.compiled.metadata
    target = md.target
    if like is not None:
        args, missing = like["args"], []
        grid = grid or like.get("grid")
    else:
        args, missing = launch_args(build.signature, values or {}, inits or {})
    if grid is None:
        missing.append("grid (--grid X,Y,Z)")
    fn = getattr(build.src, "fn", None)
    sidecar = {
        "ptx": ptx_file,
        "kernel": md.name,
        "source": build.source_ref or (f"{fn.file_name}::{fn.__name__}" if fn is not None else None),
        "target": {"backend": target.backend, "capability": target.arch, "warp_size": target.warp_size},
        "signature": dict(build.signature),
        "constexprs": dict(build.constexprs),
        "args": args,
        "grid": grid or [1, 1, 1],
        "block": [md.num_warps * 32, 1, 1],
        "num_warps": md.num_warps,
        "num_stages": md.num_stages,
        "num_ctas": md.num_ctas,
        "shared": md.shared,
        "global_scratch_size": md.global_scratch_size,
        "global_scratch_align": md.global_scratch_align,
        "profile_scratch_size": getattr(md, "profile_scratch_size", 0),
        "tensordesc_meta": [dict(m) for m in (getattr(md, "tensordesc_meta", None) or [])],
        "hidden_args": list(HIDDEN),
        "seed": 0,
        "notes": NOTES,
        "triton": {"version": triton.__version__, "override": override_entry(build.src),
                   "specialization": build.config.specialization if build.config else None},
    }
    if fn is not None:   # what the build assumed, so that to-triton knows which calls its PTX answers
        sidecar["triton"]["specialised"] = specialisation(build.src, fn.arg_names)
    if missing:
        sidecar["incomplete"] = missing  # a run needs these; launch/plan.py cannot guess them
    return sidecar
