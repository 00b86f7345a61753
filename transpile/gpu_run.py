"""Launch a base and an edited PTX kernel on a GPU and compare their outputs.

Launch parameters come from the sidecar JSON next to the corpus (`corpus/launch/<producer>/
<stem>.json`: kernel name, grid, block, shared bytes, and per argument its kind, dtype, count,
init). Uses cuda-python's `cuda.core`; without cuda-python or without a GPU, returns
{"status": "skipped", "message": ...} and launches nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "corpus" / "launch"

_DTYPES = {"f32": "float32", "fp32": "float32", "f16": "float16", "fp16": "float16", "bf16": "uint16",
           "f64": "float64", "i32": "int32", "u32": "uint32", "i64": "int64", "u64": "uint64", "i8": "int8",
           "u8": "uint8", "i16": "int16", "u16": "uint16", "i1": "bool", "fp8e4nv": "uint8", "fp8e5": "uint8"}


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
    for cand in LAUNCH.rglob(p.stem + ".json") if LAUNCH.is_dir() else ():
        return cand
    return None


def _skip(message: str) -> dict:
    return {"status": "skipped", "message": f"--run skipped: {message}"}


def run_pair(base_ptx_path: str, edited_ptx: str) -> dict:
    """Run base and edited with the same inputs; compare every pointer argument afterwards."""
    side = sidecar_for(base_ptx_path)
    if side is None:
        return _skip(f"no launch sidecar JSON for {base_ptx_path} under {LAUNCH}")
    try:
        import numpy as np
        try:
            from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
        except ImportError:
            from cuda.core.experimental import Device, LaunchConfig, Program, ProgramOptions, launch
    except ImportError as e:
        return _skip(f"cuda-python (cuda.core) or numpy is not installed ({e})")
    try:
        dev = Device()
        dev.set_current()
    except Exception as e:  # no driver / no GPU
        return _skip(f"no usable GPU ({type(e).__name__}: {e})")
    spec = json.loads(side.read_text())
    base_ptx = Path(base_ptx_path).read_text()
    results = []
    for ptx in (base_ptx, edited_ptx):
        results.append(_launch_one(ptx, spec, dev, np, Program, ProgramOptions, LaunchConfig, launch))
    mismatches = []
    for name, a in results[0].items():
        b = results[1][name]
        if a.tobytes() != b.tobytes():
            mismatches.append(name)
    if mismatches:
        return {"status": "mismatch", "message": f"--run: outputs differ in {', '.join(mismatches)}",
                "sidecar": str(side)}
    return {"status": "match", "message": f"--run: outputs identical ({len(results[0])} buffers, {side.name})",
            "sidecar": str(side)}


def _launch_one(ptx, spec, dev, np, Program, ProgramOptions, LaunchConfig, launch):
    cc = dev.compute_capability
    arch = f"sm_{cc[0]}{cc[1]}"
    prog = Program(ptx, code_type="ptx", options=ProgramOptions(arch=arch))
    mod = prog.compile("cubin")
    kernel = mod.get_kernel(spec["kernel"])
    stream = dev.create_stream()
    rng = np.random.default_rng(spec.get("seed", 0))
    args, buffers, hosts = [], {}, {}
    for a in spec["args"]:
        dtype = np.dtype(_DTYPES.get(a.get("dtype", "f32"), "float32"))
        if a["kind"] == "pointer":
            n = int(a.get("count", 1))
            init = a.get("init", "zeros")
            if init == "randn":
                host = rng.standard_normal(n).astype(np.float32)
                host = host.astype(dtype) if dtype.kind == "f" else (host.view(np.uint32) >> 16).astype(dtype) \
                    if dtype == np.uint16 else (host * 16).astype(dtype)
            elif init == "ones":
                host = np.ones(n, dtype)
            else:
                host = np.zeros(n, dtype)
            buf = dev.memory_resource.allocate(max(host.nbytes, 1), stream=stream)
            buf.copy_from(memoryview(host.tobytes()) if False else _host_buffer(host, dev), stream=stream)
            buffers[a["name"]] = (buf, host)
            args.append(buf)
        else:
            args.append(dtype.type(a.get("value", 0)))
    for _ in spec.get("hidden_args", []):
        args.append(np.uint64(0))
    cfg = LaunchConfig(grid=tuple(spec["grid"]), block=tuple(spec["block"]), shmem_size=int(spec.get("shared", 0)))
    launch(stream, cfg, kernel, *args)
    stream.sync()
    out = {}
    for name, (buf, host) in buffers.items():
        result = np.empty_like(host)
        dst = _host_buffer(result, dev)
        buf.copy_to(dst, stream=stream)
        stream.sync()
        out[name] = _read_host(dst, result)
    return out


def _host_buffer(array, dev):
    """A pinned host buffer holding `array` (cuda.core copies device <-> Buffer objects)."""
    from cuda.core import LegacyPinnedMemoryResource  # type: ignore

    mr = LegacyPinnedMemoryResource()
    buf = mr.allocate(max(array.nbytes, 1))
    import numpy as np

    view = np.from_dlpack(buf).view(np.uint8) if hasattr(buf, "__dlpack__") else None
    if view is not None:
        view[: array.nbytes] = array.view(np.uint8).reshape(-1)
    return buf


def _read_host(buf, like):
    import numpy as np

    view = np.from_dlpack(buf).view(np.uint8)
    return view[: like.nbytes].view(like.dtype).copy()
