"""Launch a base and an edited PTX kernel on a GPU, compare their outputs and time them.

Launch descriptions come from the sidecar JSON next to the corpus (`corpus/launch/<producer>/
<stem>.json`, see corpus/README.md): kernel name, grid, block, dynamic shared bytes, and per
argument its kind (pointer / scalar / tma-descriptor), dtype, element count (or shape) or scalar
value, and init (randn / rand / randint / zeros / ones).

The work is split in two:

* pure functions, testable without a GPU (roundtrip_tests/test_gpu_run_plans.py):
  `entry_params` (the `.entry` parameter list, parsed with ptxgrammar), `kernel_specs`,
  `plan_arguments` (one ArgPlan per PTX parameter: size, alignment, role, what to fill),
  `param_layout`, `tensor_map_request` (the cuTensorMapEncodeTiled arguments, exactly as Triton
  3.9's launcher builds them), `host_array`, `scalar_bytes`, `compare`, `launch_request`;
* a thin driver layer over `cuda.bindings.driver` (cuModuleLoadData, cuTensorMapEncodeTiled,
  cuLaunchKernel with a packed `kernelParams` array, CUDA events for timing).

Triton 3.9 appends two hidden pointer params (global scratch, profile scratch) and expands a
host TensorDescriptor into a 128-byte CUtensorMap (`.param .align 64 .b8 p[128]`) followed by
its shape (i32 per dim) and strides (i64 per dim); without tensordesc metadata (pre-Hopper
targets) into base pointer, shape and strides (i64), two i1 flags, shape (i32), strides (i64).

Without cuda-python, a driver or a GPU, `run_pair` returns {"status": "skipped", "message": ...}.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "corpus" / "launch"

# ----------------------------------------------------------------------------------- dtypes
# sidecar dtype -> (canonical, bytes)
_DT = {
    "f32": "fp32", "fp32": "fp32", "float32": "fp32",
    "f16": "fp16", "fp16": "fp16", "float16": "fp16",
    "bf16": "bf16", "bfloat16": "bf16",
    "f64": "fp64", "fp64": "fp64", "float64": "fp64",
    "i32": "i32", "int32": "i32", "u32": "u32", "uint32": "u32",
    "i64": "i64", "int64": "i64", "u64": "u64", "uint64": "u64",
    "i16": "i16", "int16": "i16", "u16": "u16", "uint16": "u16",
    "i8": "i8", "int8": "i8", "u8": "u8", "uint8": "u8", "i1": "i1", "u1": "i1", "bool": "i1",
    "fp8e4nv": "fp8e4nv", "float8_e4m3fn": "fp8e4nv", "fp8e5": "fp8e5", "float8_e5m2": "fp8e5",
}
# canonical -> (numpy storage dtype, bytes)
_STORAGE = {
    "fp32": ("float32", 4), "fp16": ("float16", 2), "bf16": ("uint16", 2), "fp64": ("float64", 8),
    "i32": ("int32", 4), "u32": ("uint32", 4), "i64": ("int64", 8), "u64": ("uint64", 8),
    "i16": ("int16", 2), "u16": ("uint16", 2), "i8": ("int8", 1), "u8": ("uint8", 1), "i1": ("uint8", 1),
    "fp8e4nv": ("uint8", 1), "fp8e5": ("uint8", 1),
}
_FLOATS = {"fp32", "fp16", "bf16", "fp64", "fp8e4nv", "fp8e5"}

_PTX_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
              "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
              "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16}

# Triton's TMA dtype enum differs from the host CUtensorMapDataType (triton/backends/nvidia/driver.py)
TMA_DTYPE_DEVICE_TO_HOST = {i: i for i in range(16)}
TMA_DTYPE_DEVICE_TO_HOST.update({8: 10, 9: 8, 10: 9})
# host CUtensorMapDataType for a sidecar dtype (used when the sidecar has no tensordesc_meta)
_TMA_HOST_DTYPE = {"u8": 0, "fp8e4nv": 0, "fp8e5": 0, "i8": 0, "u16": 1, "i16": 1, "u32": 2, "i32": 3,
                   "u64": 4, "i64": 5, "fp16": 6, "fp32": 7, "fp64": 8, "bf16": 9}
TMA_ELEM_BYTES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}
L2_PROMOTION_128B = 2
OOB_FILL_NONE, OOB_FILL_NAN = 0, 1
INTERLEAVE_NONE = 0


class PlanError(ValueError):
    """The sidecar and the PTX parameter list disagree, or a launch cannot be described."""


def canon_dtype(dtype: str) -> str:
    try:
        return _DT[dtype]
    except KeyError:
        raise PlanError(f"unknown dtype {dtype!r}") from None


def dtype_bytes(dtype: str) -> int:
    return _STORAGE[canon_dtype(dtype)][1]


# ----------------------------------------------------------------------------- sidecars
def sidecar_for(ptx_path: str) -> Path | None:
    p = Path(ptx_path).resolve()
    try:
        rel = p.relative_to(ROOT / "corpus" / "ptx")
    except ValueError:
        rel = None
    if rel is not None:
        cand = LAUNCH / rel.with_suffix(".json")
        if cand.is_file():
            return cand
    for cand in sorted(LAUNCH.rglob(p.stem + ".json")) if LAUNCH.is_dir() else ():
        return cand
    return None


def kernel_specs(sidecar: dict) -> list[dict]:
    """One launch spec per kernel: nvcc sidecars list `kernels`, Triton/Pallas describe one."""
    top = {k: v for k, v in sidecar.items() if k != "kernels"}
    if "kernels" in sidecar:
        return [{**top, **k} for k in sidecar["kernels"]]
    return [dict(sidecar)]


# ----------------------------------------------------------------------------- PTX params
@dataclass(frozen=True)
class ParamDecl:
    name: str
    type: str          # "u64", "b8", ...
    dim: int | None    # array length, None for a scalar param
    size: int          # bytes
    align: int         # bytes
    pointer: bool      # `.ptr` attribute


@dataclass(frozen=True)
class EntryInfo:
    name: str
    params: tuple[ParamDecl, ...]
    reqntid: tuple[int, ...] | None = None
    maxntid: tuple[int, ...] | None = None
    cluster: tuple[int, ...] | None = None


_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$%][\w$%]*)\s*\(")


def _entry_heads(text: str) -> dict[str, str]:
    """name -> the text of `.visible .entry name(...) directives` (up to the body's `{`)."""
    heads = {}
    for m in _ENTRY_RE.finditer(text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            c = text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        j = text.find("{", i)
        if j < 0:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        heads[m.group(1)] = text[start:j]
    return heads


def _module_header(text: str) -> str:
    lines = [ln for ln in text.splitlines()[:80] if ln.strip().startswith((".version", ".target", ".address_size"))]
    return "\n".join(lines) + "\n"


def entry_info(ptx_text: str, kernel: str) -> EntryInfo:
    """The `.entry kernel` parameter list and launch-bound directives, parsed with ptxgrammar.

    Only the entry's head is parsed (with an empty body), which is exact for the parameter list
    and much faster than parsing a 3 MB module."""
    import ptxgrammar

    heads = _entry_heads(ptx_text)
    if kernel not in heads:
        raise PlanError(f"no .entry {kernel} in the PTX (entries: {', '.join(heads) or 'none'})")
    snippet = _module_header(ptx_text) + heads[kernel].replace(".extern", "") + "\n{\n\tret;\n}\n"
    try:
        module = ptxgrammar.parse(snippet)
        fn = next(f for f in module.functions if f.name == kernel)
    except Exception:  # fall back to the whole module
        module = ptxgrammar.parse(ptx_text)
        fn = next(f for f in module.functions if f.name == kernel and f.head.kind == ".entry")
    head = fn.head
    params = []
    for p in (head.params.params if head.params is not None else ()):
        words = [a for a in p.attrs if isinstance(a, str)]
        aligns = [int(a.value) for a in p.attrs if type(a).__name__ == "Align"]
        ty = next((w[1:] for w in words if w[1:] in _PTX_BYTES), None)
        if ty is None:
            raise PlanError(f"{kernel}: parameter {p.name} has no size type ({' '.join(words)})")
        elem = _PTX_BYTES[ty]
        dim = int(p.dim) if p.dim not in (None, "") else None
        size = elem * (dim if dim is not None else 1)
        params.append(ParamDecl(p.name, ty, dim, size, aligns[0] if aligns and dim is not None else elem,
                                ".ptr" in words))
    dirs = {}
    for d in head.directives:
        if type(d).__name__ == "PerfDirective" and d.name in (".reqntid", ".maxntid", ".reqnctapercluster",
                                                               ".explicitcluster"):
            dirs[d.name] = tuple(int(v, 0) for v in d.values)
    return EntryInfo(kernel, tuple(params), dirs.get(".reqntid"), dirs.get(".maxntid"),
                     dirs.get(".reqnctapercluster"))


def entry_params(ptx_text: str, kernel: str) -> list[ParamDecl]:
    return list(entry_info(ptx_text, kernel).params)


# ----------------------------------------------------------------------------- planning
@dataclass
class ArgPlan:
    index: int                 # PTX parameter index
    param: ParamDecl
    role: str                  # buffer | scalar | tensormap | desc-shape | desc-stride | desc-flag | scratch
    arg: str                   # sidecar argument name (or scratch name)
    dtype: str | None = None   # canonical element / scalar dtype
    value: object = None       # scalar value; for tensormap the index into tensordesc_meta
    nbytes: int = 0            # device buffer size (buffer, scratch)
    count: int = 0             # elements (buffer)
    init: str | None = None
    output: bool = False       # initialised to zeros (an output); every buffer is compared anyway
    offset: int = 0            # offset in the packed parameter block (param_layout)
    source: dict = field(default_factory=dict, repr=False)   # the sidecar arg

    @property
    def size(self) -> int:
        return self.param.size

    @property
    def align(self) -> int:
        return self.param.align


def _count(arg: dict) -> int:
    if "count" in arg:
        return int(arg["count"])
    if "shape" in arg:
        return int(math.prod(arg["shape"]))
    return 1


def _hidden_count(spec: dict) -> int:
    if "hidden_args" in spec:
        return len(spec["hidden_args"])
    if "global_scratch_size" in spec:   # Triton-compiled (Pallas): global + profile scratch
        return 2
    return 0


def _grid_programs(spec: dict) -> int:
    return int(math.prod(spec.get("grid", [1, 1, 1]))) * int(spec.get("num_ctas") or 1)


def logical_slots(spec: dict) -> list[dict]:
    """The parameters the sidecar implies, in order: one dict per PTX parameter."""
    slots: list[dict] = []
    metas = list(spec.get("tensordesc_meta") or [])
    ndesc = 0
    for a in spec["args"]:
        kind = a["kind"]
        dt = canon_dtype(a.get("dtype", "fp32"))
        if kind == "pointer":
            slots.append(dict(role="buffer", arg=a, dtype=dt, size=(8,)))
        elif kind == "scalar":
            slots.append(dict(role="scalar", arg=a, dtype=dt, value=a.get("value", 0), size=(dtype_bytes(dt),)))
        elif kind in ("tma-descriptor", "tensordesc"):
            shape, strides = list(a["shape"]), list(a["strides"])
            if metas:
                if ndesc >= len(metas):
                    raise PlanError(f"{a['name']}: more descriptor args than tensordesc_meta entries")
                slots.append(dict(role="tensormap", arg=a, dtype=dt, value=ndesc, size=(128,)))
            else:   # decomposed: base, shape (i64), strides (i64), padding flag, tf32 flag
                slots.append(dict(role="buffer", arg=a, dtype=dt, size=(8,)))
                slots += [dict(role="desc-shape", arg=a, dtype="i64", value=s, size=(8,)) for s in shape]
                slots += [dict(role="desc-stride", arg=a, dtype="i64", value=s, size=(8,)) for s in strides]
                slots += [dict(role="desc-flag", arg=a, dtype="i1", value=0, size=(1,)) for _ in range(2)]
            slots += [dict(role="desc-shape", arg=a, dtype="i32", value=s, size=(4,)) for s in shape]
            slots += [dict(role="desc-stride", arg=a, dtype="i64", value=s, size=(8,)) for s in strides]
            ndesc += 1
        else:
            raise PlanError(f"{a.get('name')}: unknown argument kind {kind!r}")
    if metas and ndesc != len(metas):
        raise PlanError(f"{ndesc} descriptor args but {len(metas)} tensordesc_meta entries")
    nh = _hidden_count(spec)
    sizes = [int(spec.get("global_scratch_size") or 0), int(spec.get("profile_scratch_size") or 0)]
    names = ["global_scratch", "profile_scratch"]
    for i in range(nh):
        per = sizes[i] if i < 2 else 0
        slots.append(dict(role="scratch", arg={"name": names[i] if i < 2 else f"hidden{i}"}, dtype="u64",
                          nbytes=per * _grid_programs(spec), size=(8,)))
    return slots


def plan_arguments(entry: EntryInfo | list[ParamDecl], spec: dict) -> list[ArgPlan]:
    """One ArgPlan per `.entry` parameter, matched against the sidecar's argument list."""
    params = list(entry.params if isinstance(entry, EntryInfo) else entry)
    slots = logical_slots(spec)
    if len(slots) != len(params):
        raise PlanError(f"{spec.get('kernel')}: the sidecar implies {len(slots)} parameters "
                        f"({', '.join(s['role'] for s in slots)}), the PTX declares {len(params)}")
    plans = []
    for i, (p, s) in enumerate(zip(params, slots)):
        if p.size not in s["size"]:
            raise PlanError(f"{spec.get('kernel')}: parameter {i} ({p.name}, .{p.type}"
                            f"{'' if p.dim is None else f'[{p.dim}]'}, {p.size} bytes) does not fit "
                            f"{s['role']} {s['arg'].get('name')} ({s['size'][0]} bytes)")
        if s["role"] == "tensormap" and p.align < 64:
            raise PlanError(f"{p.name}: a CUtensorMap parameter needs .align 64 (has {p.align})")
        a = s["arg"]
        plan = ArgPlan(i, p, s["role"], a.get("name", f"arg{i}"), s.get("dtype"), s.get("value"), source=a)
        if s["role"] in ("buffer", "tensormap"):
            plan.count = _count(a)
            plan.nbytes = plan.count * dtype_bytes(plan.dtype)
            plan.init = a.get("init", "zeros")
            plan.output = plan.init == "zeros"
        elif s["role"] == "scratch":
            plan.nbytes = s["nbytes"]
        plans.append(plan)
    return plans


def param_layout(plans: list[ArgPlan]) -> int:
    """Assign each plan an aligned offset in one packed host block (like the .param space);
    returns the block size."""
    off = 0
    for p in plans:
        off = (off + p.align - 1) // p.align * p.align
        p.offset = off
        off += p.size
    return off


def buffers_of(plans: list[ArgPlan]) -> list[ArgPlan]:
    """The plans that own device memory, one per sidecar argument (tensormap args own theirs)."""
    return [p for p in plans if p.role in ("buffer", "tensormap")]


def launch_request(spec: dict, entry: EntryInfo | None = None) -> dict:
    grid = [int(x) for x in spec["grid"]] + [1] * (3 - len(spec["grid"]))
    block = [int(x) for x in spec["block"]] + [1] * (3 - len(spec["block"]))
    shared = int(spec.get("shared", 0) or 0)
    if min(grid) < 1 or min(block) < 1 or math.prod(block) > 1024:
        raise PlanError(f"bad launch shape grid={grid} block={block}")
    if grid[0] > 2**31 - 1 or grid[1] > 65535 or grid[2] > 65535:
        raise PlanError(f"grid {grid} exceeds the hardware limits")
    if entry is not None:
        if entry.reqntid and math.prod(entry.reqntid) != math.prod(block):
            raise PlanError(f"block {block} but .reqntid {entry.reqntid}")
        if entry.maxntid and math.prod(block) > math.prod(entry.maxntid):
            raise PlanError(f"block {block} exceeds .maxntid {entry.maxntid}")
    if int(spec.get("num_ctas") or 1) != 1:
        raise PlanError("num_ctas > 1 (cluster launch) is not supported")
    return {"grid": grid, "block": block, "shared": shared, "optin": shared > 48 * 1024}


# ----------------------------------------------------------------------------- TMA
def tensor_map_request(plan: ArgPlan | dict, meta: dict | None = None, global_address: int = 0) -> dict:
    """The arguments of cuTensorMapEncodeTiled for a host TensorDescriptor, as Triton 3.9's
    launcher builds them (fillTMADescriptorTiled): dims innermost first, rank-1 byte strides,
    box = tensordesc_meta.block_size reversed, element strides 1, no interleave, the meta's
    swizzle, L2 promotion 128B, no OOB fill (padding="zero")."""
    arg = plan.source if isinstance(plan, ArgPlan) else plan
    dt = canon_dtype(arg["dtype"])
    shape, strides = [int(x) for x in arg["shape"]], [int(x) for x in arg["strides"]]
    rank = len(shape)
    if len(strides) != rank or not 1 <= rank <= 5:
        raise PlanError(f"{arg.get('name')}: rank {rank} shape {shape} strides {strides}")
    if strides[-1] != 1:
        raise PlanError(f"{arg.get('name')}: the innermost stride must be 1 (is {strides[-1]})")
    if meta is not None:
        elem_size = int(meta["elem_size"])
        data_type = TMA_DTYPE_DEVICE_TO_HOST[int(meta["elem_type"])]
        block = [int(x) for x in meta["block_size"]]
        swizzle = int(meta["swizzle"])
        if meta.get("is_im2col"):
            raise PlanError(f"{arg.get('name')}: im2col descriptors are not supported")
        if meta.get("fp4_padded"):
            shape = shape[:-1] + [shape[-1] * 2]
    else:
        elem_size = dtype_bytes(dt)
        data_type = _TMA_HOST_DTYPE[dt]
        block = [int(x) for x in arg["block_shape"]]
        swizzle = 0
    if len(block) != rank:
        raise PlanError(f"{arg.get('name')}: block {block} has rank {len(block)}, tensor rank {rank}")
    return {
        "data_type": data_type,
        "rank": rank,
        "global_address": int(global_address),
        "global_dim": list(reversed(shape)),
        "global_strides": [s * elem_size for s in reversed(strides[:-1])],
        "box_dim": list(reversed(block)),
        "element_strides": [1] * rank,
        "interleave": INTERLEAVE_NONE,
        "swizzle": swizzle,
        "l2_promotion": L2_PROMOTION_128B,
        "oob_fill": OOB_FILL_NONE,
        "elem_size": elem_size,
    }


def check_tensor_map_request(req: dict) -> list[str]:
    """The documented cuTensorMapEncodeTiled constraints; returns the violations."""
    bad = []
    es = req["elem_size"]
    if TMA_ELEM_BYTES.get(req["data_type"]) != es:
        bad.append(f"data type {req['data_type']} is {TMA_ELEM_BYTES.get(req['data_type'])} bytes, elem_size {es}")
    if req["global_address"] % 16:
        bad.append("global address not 16-byte aligned")
    for d in req["global_dim"]:
        if not 0 < d <= 2**32:
            bad.append(f"global dim {d} out of (0, 2^32]")
    for s in req["global_strides"]:
        if s % 16 or s >= 2**40:
            bad.append(f"global stride {s} B not a multiple of 16 below 2^40")
    for b, g in zip(req["box_dim"], req["global_dim"]):
        if not 0 < b <= 256:
            bad.append(f"box dim {b} out of (0, 256]")
        if b > g:
            bad.append(f"box dim {b} larger than the tensor dim {g}")
        elif g % b:
            bad.append(f"box dim {b} does not divide tensor dim {g}")
    inner = req["box_dim"][0] * es
    if req["interleave"] == INTERLEAVE_NONE and inner % 16:
        bad.append(f"inner box {inner} B not a multiple of 16")
    limit = {1: 32, 2: 64, 3: 128}.get(req["swizzle"])
    if limit is not None and inner > limit:
        bad.append(f"inner box {inner} B exceeds the swizzle span {limit} B")
    if any(e != 1 for e in req["element_strides"]):
        bad.append("element strides other than 1")
    return bad


# ----------------------------------------------------------------------------- host data
def _to_bf16_bits(x):
    import numpy as np

    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def _fp8_bytes(rng, n, kind):
    import numpy as np

    lo, hi = (0x20, 0x40) if kind == "fp8e4nv" else (0x30, 0x40)    # |x| in ~[1/8, 2): no inf/NaN
    mag = rng.integers(lo, hi, n, dtype=np.uint8)
    sign = (rng.integers(0, 2, n, dtype=np.uint8) << 7).astype(np.uint8)
    return mag | sign


def host_array(plan: ArgPlan, rng):
    """The seeded initial contents of a buffer, in its device storage layout."""
    import numpy as np

    dt, n, init = plan.dtype, plan.count, plan.init or "zeros"
    store = np.dtype(_STORAGE[dt][0])
    if init == "zeros":
        return np.zeros(n, store)
    if init == "ones":
        if dt == "bf16":
            return np.full(n, 0x3F80, np.uint16)
        if dt == "fp8e4nv":
            return np.full(n, 0x38, np.uint8)
        if dt == "fp8e5":
            return np.full(n, 0x3C, np.uint8)
        return np.ones(n, store)
    if dt in ("fp8e4nv", "fp8e5"):
        return _fp8_bytes(rng, n, dt)       # any random init: finite fp8 values
    if init == "randint":
        x = rng.integers(0, 256, n)         # non-negative: kernels index with x % NBINS
        return _to_bf16_bits(x.astype(np.float32)) if dt == "bf16" else x.astype(store)
    if init == "rand":
        x = rng.random(n, dtype=np.float32)
    elif init == "randn":
        x = rng.standard_normal(n, dtype=np.float32)
    else:
        raise PlanError(f"{plan.arg}: unknown init {init!r}")
    if dt == "bf16":
        return _to_bf16_bits(x)
    if dt in _FLOATS:
        return x.astype(store)
    return (x * 16).astype(store)   # integer buffer with a float init


def scalar_bytes(plan: ArgPlan) -> bytes:
    import numpy as np

    dt = plan.dtype
    v = plan.value if plan.value is not None else 0
    if dt == "bf16":
        return _to_bf16_bits(np.array([float(v)], np.float32)).tobytes()
    if dt in ("fp8e4nv", "fp8e5"):
        raise PlanError(f"{plan.arg}: fp8 scalars are not supported")
    arr = np.array([v], dtype=np.dtype(_STORAGE[dt][0]))
    b = arr.tobytes()
    if len(b) != plan.size:
        raise PlanError(f"{plan.arg}: {dt} scalar is {len(b)} bytes, parameter {plan.param.name} is {plan.size}")
    return b


def to_float(raw, dtype: str):
    """Stored bytes -> float64 values (None for fp8, which is compared bit for bit)."""
    import numpy as np

    dt = canon_dtype(dtype)
    if dt == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dt in ("fp8e4nv", "fp8e5"):
        return None
    return raw.astype(np.float64)


def compare(a, b, dtype: str, rtol: float | None = None, atol: float | None = None) -> dict:
    """Bitwise comparison of two stored buffers; with rtol/atol, a tolerance comparison of the
    decoded values (NaNs must sit at the same places). Always reports max abs / rel error."""
    import numpy as np

    equal_bits = a.tobytes() == b.tobytes()
    out = {"bitwise": equal_bits, "max_abs": 0.0, "max_rel": 0.0, "n_diff": 0}
    if not equal_bits:
        ints = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]
        out["n_diff"] = int(np.count_nonzero(a.view(ints) != b.view(ints)))
        fa, fb = to_float(a, dtype), to_float(b, dtype)
        if fa is not None:
            with np.errstate(all="ignore"):
                d = np.abs(fa - fb)
                both_nan = np.isnan(fa) & np.isnan(fb)
                d[both_nan] = 0.0
                rel = d / np.maximum(np.abs(fb), np.finfo(np.float64).tiny)
                out["max_abs"] = float(np.nanmax(np.where(np.isnan(d), np.inf, d))) if d.size else 0.0
                out["max_rel"] = float(np.nanmax(np.where(np.isnan(rel), np.inf, rel))) if d.size else 0.0
    if rtol is None and atol is None:
        out["ok"] = equal_bits
    elif equal_bits:
        out["ok"] = True
    else:
        fa, fb = to_float(a, dtype), to_float(b, dtype)
        if fa is None:
            out["ok"] = False
        else:
            with np.errstate(all="ignore"):
                out["ok"] = bool(np.allclose(fa, fb, rtol=rtol or 0.0, atol=atol or 0.0, equal_nan=True))
    return out


# ----------------------------------------------------------------------------- assembling
def _ptx_version(text: str) -> tuple[int, int] | None:
    m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _ptx_target(text: str) -> str | None:
    m = re.search(r"^\s*\.target\s+([\w]+)", text, re.M)
    return m.group(1) if m else None


def gpu_name_for(ptx_target: str | None, cc: tuple[int, int]) -> str:
    """The --gpu-name for a PTX target on a device: arch-specific targets (sm_90a) must match
    the device exactly; portable ones assemble for the device's own sm_XY."""
    dev = f"sm_{cc[0]}{cc[1]}"
    if ptx_target and ptx_target.endswith(("a", "f")):
        if ptx_target[:-1] != dev:
            raise PlanError(f"PTX targets {ptx_target}, the device is {dev}")
        return ptx_target
    if ptx_target:
        m = re.match(r"sm_(\d+)", ptx_target)
        if m and int(m.group(1)) > cc[0] * 10 + cc[1]:
            raise PlanError(f"PTX targets {ptx_target}, newer than the device ({dev})")
    return dev


def driver_ptx_isa(driver_version: int) -> tuple[int, int]:
    """Newest PTX ISA the driver's JIT accepts (cuDriverGetVersion: 1000*major + 10*minor)."""
    from .verify import ptx_isa_for_release

    return ptx_isa_for_release((driver_version // 1000, (driver_version % 1000) // 10))


def lower_ptx_version(text: str, isa: tuple[int, int]) -> str:
    return re.sub(r"^(\s*\.version\s+)\d+\.\d+", rf"\g<1>{isa[0]}.{isa[1]}", text, count=1, flags=re.M)


def assemble_cubin(ptx: str, gpu_name: str, tool=None) -> tuple[bytes, str]:
    """ptx -> cubin with `tool`, or the first ptxas new enough for its .version (transpile.verify)."""
    from .verify import find_ptxas

    if tool is None:
        tool, found = find_ptxas(_ptx_version(ptx))
        if tool is None:
            raise RuntimeError("no ptxas supports PTX ISA %s; found: %s" % (
                _ptx_version(ptx), "; ".join(t.describe() for t in found) or "none"))
    with tempfile.TemporaryDirectory(prefix="ptx2py-run-") as d:
        src, out = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx)
        r = subprocess.run([tool.path, "--gpu-name", gpu_name, "-o", str(out), str(src)],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"{tool.path} failed: {r.stderr.strip()[:2000]}")
        return out.read_bytes(), tool.describe()


# ----------------------------------------------------------------------------- driver layer
def driver_module():
    try:
        from cuda.bindings import driver as cu
        return cu
    except ImportError:
        pass
    try:
        from cuda import cuda as cu  # type: ignore
        return cu
    except ImportError:
        return None


class CudaError(RuntimeError):
    pass


class Gpu:
    """Primary context on device 0, through cuda.bindings.driver."""

    def __init__(self, cu=None):
        self.cu = cu or driver_module()
        if self.cu is None:
            raise ImportError("cuda-python (cuda.bindings) is not installed")
        cu = self.cu
        self.ck(cu.cuInit(0))
        self.dev = self.ck(cu.cuDeviceGet(0))
        self.ctx = self.ck(cu.cuDevicePrimaryCtxRetain(self.dev))
        self.ck(cu.cuCtxSetCurrent(self.ctx))
        A = cu.CUdevice_attribute
        self.cc = (self.attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                   self.attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
        self.smem_optin = self.attr(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        name = self.ck(cu.cuDeviceGetName(128, self.dev))
        self.name = name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)
        self.driver_version = int(self.ck(cu.cuDriverGetVersion()))
        self._load_method: dict[str, str] = {}

    def attr(self, a) -> int:
        return int(self.ck(self.cu.cuDeviceGetAttribute(a, self.dev)))

    def ck(self, result):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            try:
                _, msg = self.cu.cuGetErrorString(err)
                msg = msg.decode() if isinstance(msg, bytes) else msg
            except Exception:  # noqa: BLE001
                msg = ""
            raise CudaError(f"CUDA error {int(err)} ({getattr(err, 'name', err)}): {msg}")
        return rest[0] if len(rest) == 1 else (tuple(rest) if rest else None)

    # -- modules
    def _load_image(self, image: bytes):
        import numpy as np

        buf = np.frombuffer(image + b"\0", dtype=np.uint8).copy()
        return self.ck(self.cu.cuModuleLoadData(buf.ctypes.data))

    def load(self, ptx: str, method: str | None = None):
        """Load a PTX module. Methods, tried in order unless one is given: `ptxas` (assemble to a
        cubin with the newest suitable ptxas, as Triton does), `jit` (the driver JIT),
        `jit-lowered` (the driver JIT after lowering `.version` to the driver's ISA).
        Returns (module, method, note)."""
        errors = []
        methods = [method] if method else ["ptxas", "jit", "ptxas-lowered", "jit-lowered"]
        for m in methods:
            try:
                if m == "ptxas":
                    gpu = gpu_name_for(_ptx_target(ptx), self.cc)
                    cubin, tool = assemble_cubin(ptx, gpu)
                    return self._load_image(cubin), m, f"{tool}, --gpu-name {gpu}"
                if m == "jit":
                    return self._load_image(ptx.encode()), m, "driver JIT"
                if m == "ptxas-lowered":
                    module, note = self._load_lowered_cubin(ptx)
                    return module, m, note
                if m == "jit-lowered":
                    isa = driver_ptx_isa(self.driver_version)
                    return (self._load_image(lower_ptx_version(ptx, isa).encode()), m,
                            f"driver JIT, .version lowered to {isa[0]}.{isa[1]}")
                raise ValueError(f"unknown load method {m}")
            except PlanError:
                raise
            except Exception as e:  # noqa: BLE001 - try the next method
                errors.append(f"{m}: {type(e).__name__}: {e}")
        raise CudaError("could not load the module: " + " | ".join(errors))

    def _load_lowered_cubin(self, ptx: str):
        """Older ptxas releases first (no newer than the driver where possible), the PTX's
        `.version` lowered to what each accepts: a cubin an older driver can load."""
        from .verify import find_ptxas_all

        gpu = gpu_name_for(_ptx_target(ptx), self.cc)
        drv = (self.driver_version // 1000, (self.driver_version % 1000) // 10)
        tools = sorted((t for t in find_ptxas_all() if t.release), key=lambda t: t.release)
        tools = [t for t in tools if t.release <= drv] or tools
        errors = []
        for t in tools:
            try:
                text = ptx
                v = _ptx_version(ptx)
                if v and v > t.max_ptx:
                    text = lower_ptx_version(ptx, t.max_ptx)
                cubin, desc = assemble_cubin(text, gpu, t)
                return self._load_image(cubin), f"{desc}, --gpu-name {gpu}, .version {_ptx_version(text)}"
            except Exception as e:  # noqa: BLE001
                errors.append(f"{t.path}: {e}")
        raise CudaError("; ".join(errors) or "no ptxas found")

    def function(self, module, name: str):
        return self.ck(self.cu.cuModuleGetFunction(module, name.encode()))

    def set_dynamic_smem(self, func, shared: int):
        cu = self.cu
        static = int(self.ck(cu.cuFuncGetAttribute(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func)))
        if static + shared > self.smem_optin:
            raise CudaError(f"{static} B static + {shared} B dynamic shared memory exceeds the "
                            f"device's opt-in limit {self.smem_optin} B")
        self.ck(cu.cuFuncSetAttribute(func, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      shared))

    # -- memory
    def alloc(self, nbytes: int):
        return self.ck(self.cu.cuMemAlloc(max(int(nbytes), 256)))

    def upload(self, dptr, host):
        if host.nbytes:
            self.ck(self.cu.cuMemcpyHtoD(dptr, host.ctypes.data, host.nbytes))

    def download(self, dptr, host):
        if host.nbytes:
            self.ck(self.cu.cuMemcpyDtoH(host.ctypes.data, dptr, host.nbytes))
        return host

    def zero(self, dptr, nbytes):
        self.ck(self.cu.cuMemsetD8(dptr, 0, max(int(nbytes), 256)))

    def free(self, dptr):
        self.cu.cuMemFree(dptr)

    def encode_tensor_map(self, req: dict) -> bytes:
        import ctypes

        cu = self.cu
        tmap = self.ck(cu.cuTensorMapEncodeTiled(
            cu.CUtensorMapDataType(req["data_type"]), req["rank"], req["global_address"],
            [cu.cuuint64_t(x) for x in req["global_dim"]],
            [cu.cuuint64_t(x) for x in req["global_strides"]],
            [cu.cuuint32_t(x) for x in req["box_dim"]],
            [cu.cuuint32_t(x) for x in req["element_strides"]],
            cu.CUtensorMapInterleave(req["interleave"]), cu.CUtensorMapSwizzle(req["swizzle"]),
            cu.CUtensorMapL2promotion(req["l2_promotion"]), cu.CUtensorMapFloatOOBfill(req["oob_fill"])))
        return ctypes.string_at(tmap.getPtr(), 128)

    # -- launching
    def launch(self, func, req: dict, kparams_addr: int):
        g, b = req["grid"], req["block"]
        self.ck(self.cu.cuLaunchKernel(func, g[0], g[1], g[2], b[0], b[1], b[2], req["shared"], 0,
                                       kparams_addr, 0))

    def sync(self, timeout_s: float = 60.0):
        """cuCtxSynchronize, but give up (raise) when the work is still running after timeout_s."""
        cu = self.cu
        ev = self.ck(cu.cuEventCreate(0))
        try:
            self.ck(cu.cuEventRecord(ev, 0))
            deadline = time.monotonic() + timeout_s
            while True:
                r = cu.cuEventQuery(ev)
                err = r[0] if isinstance(r, tuple) else r
                if int(err) == 0:
                    break
                if err != cu.CUresult.CUDA_ERROR_NOT_READY:
                    self.ck((err,))
                if time.monotonic() > deadline:
                    raise TimeoutError(f"kernel still running after {timeout_s:.0f} s (hang?)")
                time.sleep(0.0005)
            self.ck(cu.cuCtxSynchronize())
        finally:
            cu.cuEventDestroy(ev)

    def time_ms(self, fn, repeat: int, warmup: int) -> list[float]:
        cu = self.cu
        for _ in range(warmup):
            fn()
        self.sync()
        start, stop = self.ck(cu.cuEventCreate(0)), self.ck(cu.cuEventCreate(0))
        times = []
        try:
            for _ in range(repeat):
                self.ck(cu.cuEventRecord(start, 0))
                fn()
                self.ck(cu.cuEventRecord(stop, 0))
                self.sync()
                times.append(float(self.ck(cu.cuEventElapsedTime(start, stop))))
        finally:
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(stop)
        return times


_GPU: Gpu | None = None


def get_gpu() -> Gpu:
    """One Gpu per process (the primary context is shared anyway)."""
    global _GPU
    if _GPU is None:
        _GPU = Gpu()
    return _GPU


# ----------------------------------------------------------------------------- a launch session
class Session:
    """Device buffers, descriptors and the packed parameter block for one sidecar kernel; the
    same buffers serve the base and the edited kernel (reset to the seeded inputs before each
    checked launch)."""

    def __init__(self, gpu: Gpu, ptx_text: str, spec: dict):
        import numpy as np

        self.gpu, self.spec = gpu, spec
        self.entry = entry_info(ptx_text, spec["kernel"])
        self.plans = plan_arguments(self.entry, spec)
        self.req = launch_request(spec, self.entry)
        rng = np.random.default_rng(int(spec.get("seed", 0) or 0))
        self.host = {}      # plan index -> initial contents
        self.dev = {}       # plan index -> device pointer
        self.scratch = {}   # plan index -> (device pointer, nbytes)
        try:
            for p in self.plans:
                if p.role in ("buffer", "tensormap"):
                    self.host[p.index] = host_array(p, rng)
                    self.dev[p.index] = gpu.alloc(p.nbytes)
                elif p.role == "scratch" and p.nbytes > 0:
                    self.scratch[p.index] = (gpu.alloc(p.nbytes), p.nbytes)
            size = param_layout(self.plans)
            self.block = np.zeros(size + 128, np.uint8)
            base = (-self.block.ctypes.data) % 64          # 64-byte aligned start (CUtensorMap)
            self.base_addr = self.block.ctypes.data + base
            view = self.block[base: base + size]
            metas = list(spec.get("tensordesc_meta") or [])
            self.tensor_maps = {}
            for p in self.plans:
                if p.role == "buffer":
                    raw = np.array([int(self.dev[p.index])], np.uint64).tobytes()
                elif p.role == "tensormap":
                    r = tensor_map_request(p, metas[p.value] if metas else None, int(self.dev[p.index]))
                    bad = check_tensor_map_request(r)
                    if bad:
                        raise PlanError(f"{p.arg}: " + "; ".join(bad))
                    raw = gpu.encode_tensor_map(r)
                    self.tensor_maps[p.arg] = r
                elif p.role == "scratch":
                    ptr = self.scratch.get(p.index, (0, 0))[0]
                    raw = np.array([int(ptr)], np.uint64).tobytes()
                else:
                    raw = scalar_bytes(p)
                assert len(raw) == p.size, (p, len(raw))
                view[p.offset: p.offset + p.size] = np.frombuffer(raw, np.uint8)
            self.kparams = np.array([self.base_addr + p.offset for p in self.plans], np.uint64)
        except BaseException:
            self.close()
            raise

    def reset(self):
        for i, h in self.host.items():
            self.gpu.upload(self.dev[i], h)
        for ptr, n in self.scratch.values():
            self.gpu.zero(ptr, n)

    def outputs(self) -> dict:
        import numpy as np

        out = {}
        for p in self.plans:
            if p.index in self.dev:
                out[p.arg] = (self.gpu.download(self.dev[p.index], np.empty_like(self.host[p.index])), p.dtype)
        return out

    def prepare(self, func):
        if self.req["optin"]:
            self.gpu.set_dynamic_smem(func, self.req["shared"])

    def launch(self, func):
        self.gpu.launch(func, self.req, int(self.kparams.ctypes.data))

    def close(self):
        for ptr in list(getattr(self, "dev", {}).values()):
            self.gpu.free(ptr)
        for ptr, _ in list(getattr(self, "scratch", {}).values()):
            self.gpu.free(ptr)
        self.dev, self.scratch = {}, {}


def _skip(message: str) -> dict:
    return {"status": "skipped", "message": f"--run skipped: {message}"}


def skip_reason() -> str | None:
    """Why nothing can run here (no cuda-python, no driver, no GPU), or None."""
    if driver_module() is None:
        return "cuda-python (cuda.bindings) is not installed"
    try:
        import numpy  # noqa: F401
    except ImportError:
        return "numpy is not installed"
    try:
        get_gpu()
    except Exception as e:  # noqa: BLE001 - no driver library / no device
        return f"no usable GPU ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    return None


def run_pair(base_ptx_path: str, edited_ptx: str, *, repeat: int = 50, warmup: int = 5,
             rtol: float | None = None, atol: float | None = None, kernel: str | None = None,
             base_ptx: str | None = None, sync_timeout_s: float = 60.0) -> dict:
    """Launch the base module (file) and the edited PTX (text) with the same seeded inputs,
    compare every buffer (bitwise, or within rtol/atol when given) and time both (median of
    `repeat` launches after `warmup`, CUDA events). One result per sidecar kernel present in
    both modules (or just `kernel`).

    status: match | mismatch | error | skipped."""
    side = sidecar_for(base_ptx_path)
    if side is None:
        return _skip(f"no launch sidecar JSON for {base_ptx_path} under {LAUNCH}")
    why = skip_reason()
    if why:
        return _skip(why)
    gpu = get_gpu()
    base_text = base_ptx if base_ptx is not None else Path(base_ptx_path).read_text()
    specs = [s for s in kernel_specs(json.loads(side.read_text()))
             if kernel is None or s["kernel"] == kernel]
    if not specs:
        return {"status": "error", "message": f"--run: no sidecar kernel {kernel!r} in {side.name}"}
    results = []
    for spec in specs:
        try:
            results.append(run_spec(gpu, base_text, edited_ptx, spec, repeat=repeat, warmup=warmup,
                                    rtol=rtol, atol=atol, sync_timeout_s=sync_timeout_s))
        except Exception as e:  # noqa: BLE001 - report, keep going
            results.append({"kernel": spec.get("kernel"), "status": "error",
                            "error": f"{type(e).__name__}: {e}"})
    statuses = {r["status"] for r in results}
    status = "error" if "error" in statuses else "mismatch" if "mismatch" in statuses else "match"
    tol = "bitwise" if rtol is None and atol is None else f"rtol={rtol or 0:g} atol={atol or 0:g}"
    if status == "match":
        msg = f"--run: outputs {'identical' if tol == 'bitwise' else 'within ' + tol} ({side.name}, " \
              f"{len(results)} kernel{'s' if len(results) != 1 else ''})"
    else:
        bad = [f"{r['kernel']}: {r.get('error') or 'differs in ' + ', '.join(r.get('mismatches', []))}"
               for r in results if r["status"] != "match"]
        msg = f"--run: {status} ({tol}): " + "; ".join(bad)
    return {"status": status, "message": msg, "sidecar": str(side), "device": gpu.name,
            "tolerance": tol, "kernels": results}


def run_spec(gpu: Gpu, base_text: str, edited_text: str, spec: dict, *, repeat=50, warmup=5,
             rtol=None, atol=None, sync_timeout_s=60.0) -> dict:
    name = spec["kernel"]
    ed_entry = entry_info(edited_text, name)
    sess = Session(gpu, base_text, spec)
    modules = []
    try:
        if [p.size for p in ed_entry.params] != [p.param.size for p in sess.plans]:
            raise PlanError(f"{name}: the edited kernel's parameter list differs from the base's")
        base_mod, method, note = gpu.load(base_text)
        modules.append(base_mod)
        ed_mod, _, _ = gpu.load(edited_text, method)    # same assembly path for both
        modules.append(ed_mod)
        funcs = [gpu.function(base_mod, name), gpu.function(ed_mod, name)]
        outs, times = [], []
        for f in funcs:
            sess.prepare(f)
            sess.reset()
            sess.launch(f)
            gpu.sync(sync_timeout_s)
            outs.append(sess.outputs())
        for f in funcs:
            times.append(gpu.time_ms(lambda f=f: sess.launch(f), repeat, warmup) if repeat > 0 else [])
        buffers, mismatches = {}, []
        for key, (a, dt) in outs[0].items():
            c = compare(outs[1][key][0], a, dt, rtol, atol)
            buffers[key] = c
            if not c["ok"]:
                mismatches.append(key)
        med = [statistics.median(t) if t else None for t in times]
        return {"kernel": name, "status": "mismatch" if mismatches else "match", "mismatches": mismatches,
                "buffers": buffers, "max_abs": max((c["max_abs"] for c in buffers.values()), default=0.0),
                "max_rel": max((c["max_rel"] for c in buffers.values()), default=0.0),
                "bitwise": all(c["bitwise"] for c in buffers.values()),
                "base_ms": med[0], "edited_ms": med[1],
                "ratio": (med[1] / med[0]) if med[0] and med[1] is not None else None,
                "repeat": repeat, "warmup": warmup, "load": f"{method}: {note}",
                "grid": sess.req["grid"], "block": sess.req["block"], "shared": sess.req["shared"]}
    finally:
        sess.close()
        for m in modules:
            gpu.cu.cuModuleUnload(m)


def format_table(rows: list[dict]) -> str:
    """kernel | status | outputs | base ms | edited ms | ratio."""
    def ms(v):
        return "-" if v is None else f"{v:.4f}"

    lines = [f"{'kernel':44} {'status':9} {'outputs':26} {'base ms':>9} {'edited ms':>10} {'ratio':>7}"]
    for r in rows:
        if r.get("status") == "error" or "bitwise" not in r:
            outs = (r.get("error") or r.get("message") or "")[:60]
        elif r["bitwise"]:
            outs = "identical"
        else:
            outs = f"max abs {r['max_abs']:.3g} rel {r['max_rel']:.3g}"
        ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.3f}"
        lines.append(f"{str(r.get('label') or r.get('kernel'))[:44]:44} {r.get('status', '?'):9} {outs:26} "
                     f"{ms(r.get('base_ms')):>9} {ms(r.get('edited_ms')):>10} {ratio:>7}")
    return "\n".join(lines)
