"""Launch plans for GPU runs, as pure functions (no GPU, no driver needed).

From a launch sidecar (`corpus/launch/<producer>/<stem>.json`, see corpus/README.md) and the
PTX `.entry` parameter list (parsed with ptxgrammar): one `ArgPlan` per PTX parameter (size,
alignment, role, what to fill), the packed parameter layout, `cuTensorMapEncodeTiled`
requests exactly as Triton 3.9's launcher builds them, seeded host data, and the comparison
of results. `gpu_run.py` executes these plans; roundtrip_tests/test_gpu_run_plans.py checks
them over every corpus sidecar.

Triton 3.9 appends two hidden pointer params (global scratch, profile scratch) and expands a
host TensorDescriptor into a 128-byte CUtensorMap (`.param .align 64 .b8 p[128]`) followed by
its shape (i32 per dim) and strides (i64 per dim); without tensordesc metadata (pre-Hopper
targets) into base pointer, shape and strides (i64), two i1 flags, shape (i32), strides (i64).
"""

from __future__ import annotations

import math
import re
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


class InputsError(PlanError):
    """An input array that does not fit its parameter (dtype, element count) or names none."""


def canon_dtype(dtype: str) -> str:
    try:
        return _DT[dtype]
    except KeyError:
        raise PlanError(f"unknown dtype {dtype!r}") from None


def dtype_bytes(dtype: str) -> int:
    return _STORAGE[canon_dtype(dtype)][1]


# ----------------------------------------------------------------------------- sidecars
def sidecar_for(ptx_path: str, edited: str | None = None) -> Path | None:
    """The launch sidecar of a PTX file (launch.sidecar.sidecar_candidates: beside it, beside the
    edited copy, or the corpus's own for a corpus file), or None."""
    from .sidecar import sidecar_candidates

    return next((c.resolve() for c in sidecar_candidates(ptx_path, edited) if c.is_file()), None)


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
    from ptx2py import ptxgrammar

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


def _array_slots(arg: dict, dt: str) -> list[dict]:
    """numba-cuda passes an array as meminfo, parent (null pointers), nitems, itemsize, data,
    shape[ndim] and strides[ndim] (bytes, C order), each an 8-byte parameter."""
    shape = [int(x) for x in arg["shape"]]
    item = dtype_bytes(dt)
    strides = [item * math.prod(shape[i + 1:]) for i in range(len(shape))]
    meta = [("u64", 0), ("u64", 0), ("i64", math.prod(shape)), ("i64", item)]
    slots = [dict(role="scalar", arg=arg, dtype=t, value=v, size=(8,)) for t, v in meta]
    slots.append(dict(role="buffer", arg=arg, dtype=dt, size=(8,)))
    return slots + [dict(role="scalar", arg=arg, dtype="i64", value=v, size=(8,)) for v in shape + strides]


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
        elif kind == "array":       # a numba-cuda array: its data model's fields, one parameter each
            slots += _array_slots(a, dt)
        elif kind == "tensormap":   # a CUtensorMap by value (nvcc __grid_constant__): 128 bytes, nothing after
            slots.append(dict(role="tensormap", arg=a, dtype=dt, value=None, size=(128,)))
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
    if spec.get("incomplete"):  # from-triton without launch values: sizes would be guesses
        raise PlanError(f"{spec.get('kernel')}: the sidecar lacks {'; '.join(spec['incomplete'])}")
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
        swizzle = int(arg.get("swizzle", 0))     # CU_TENSOR_MAP_SWIZZLE_{NONE,32B,64B,128B} = 0..3
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
        # A box that does not divide the dimension is valid: the last box is ragged and
        # cuTensorMapEncodeTiled's OOB fill covers it (Triton launches such maps).
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


def input_array(plan, host, made):
    """A given input, checked against its parameter: the buffer's storage dtype (bf16 as uint16 bits,
    fp8 as uint8), or an unsigned integer array of the same width (the raw bits), or for an integer
    buffer an integer array of its width; and its element count. Flattened. Anything else would run
    the kernel on other data than the user meant."""
    import numpy as np

    arr = np.asarray(host)
    where = f"input {plan.arg!r} (parameter {plan.param.name}, a {plan.dtype} buffer of {made.size} elements)"
    same_width = arr.dtype.itemsize == made.dtype.itemsize
    bits = same_width and (arr.dtype.kind == "u" or (arr.dtype.kind in "iu" and made.dtype.kind in "iu"))
    if arr.dtype != made.dtype and not bits:
        raise InputsError(f"{where}: the array is {arr.dtype}, the buffer needs {made.dtype} "
                          f"(or uint{8 * made.dtype.itemsize}: its raw bits)")
    if arr.size != made.size:
        raise InputsError(f"{where}: the array has {arr.size} elements {list(arr.shape)}")
    return np.ascontiguousarray(arr).reshape(-1).view(made.dtype)


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


# ----------------------------------------------------------------------------- clusters
def cluster_dims(spec: dict, entry: EntryInfo | None = None) -> tuple[int, int, int]:
    """The cluster a launch asks for: the entry's `.reqnctapercluster`, else the sidecar's
    `cluster`, else Triton's `num_ctas` (a 1-D cluster); (1, 1, 1) when none. The grid stays in
    CTAs and must be a whole number of clusters."""
    want = tuple(int(x) for x in spec.get("cluster") or ()) or None
    if want is None and int(spec.get("num_ctas") or 1) > 1:
        want = (int(spec["num_ctas"]),)
    have = tuple(entry.cluster) if entry is not None and entry.cluster else None
    if have and want and (have + (1, 1))[:3] != (want + (1, 1))[:3]:
        raise PlanError(f"the sidecar asks for a cluster {list(want)}, the entry's .reqnctapercluster is {list(have)}")
    dims = ((have or want or (1,)) + (1, 1))[:3]
    return (int(dims[0]), int(dims[1]), int(dims[2]))


def cluster_launch_request(spec: dict, entry: EntryInfo | None = None) -> dict:
    """launch_request with the cluster shape (`cluster`) and the grid checked against it; a
    Triton `num_ctas` is the cluster's size, not a refusal (its grid counts programs: Triton's
    launcher multiplies grid.x by num_ctas)."""
    cluster = cluster_dims(spec, entry)
    ctas = int(spec.get("num_ctas") or 1)
    grid = list(spec["grid"])
    if ctas > 1 and not spec.get("cluster"):
        grid[0] = int(grid[0]) * ctas
    req = launch_request({**spec, "grid": grid, "num_ctas": 1}, entry)
    for g, c, axis in zip(req["grid"], cluster, "xyz"):
        if g % c:
            raise PlanError(f"grid.{axis} = {g} is not a multiple of the cluster's {c}")
    if math.prod(cluster) > 16:
        raise PlanError(f"a cluster of {math.prod(cluster)} CTAs exceeds the hardware's 16")
    return {**req, "cluster": list(cluster)}
