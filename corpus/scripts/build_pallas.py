#!/usr/bin/env python3
"""Lower the JAX Pallas kernels in corpus/src/pallas/kernels.py for CUDA without a GPU, pull the Triton IR
(MLIR bytecode) out of the `__gpu$xla.gpu.triton` custom call, print it as .ttir text with jaxlib's MLIR
bindings, and compile that with triton.compile to PTX."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
_cache = tempfile.mkdtemp(prefix="ptx2py-pallas-cache-")
os.environ["TRITON_CACHE_DIR"] = _cache

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax  # noqa: E402
import jaxlib  # noqa: E402
import triton  # noqa: E402
from common import BUILD, LAUNCH, PTX, SRC, clean_dir, record, update_manifest, write_json  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.triton import dialect as tt_dialect  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

CAPS = [80, 90, 100]


def triton_calls(module):
    found = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    if (o.operation.name == "stablehlo.custom_call"
                            and "xla.gpu.triton" in str(o.operation.attributes["call_target_name"])):
                        found.append(o.operation)
                    walk(o.operation)
    walk(module.operation)
    return found


def attr_int(cfg, key, default):
    try:
        return ir.IntegerAttr(cfg[key]).value
    except (KeyError, ValueError):
        return default


def lower(fn, specs):
    """(.ttir text, kernel name, num_warps, num_stages, grid) of the one Triton custom call that
    `fn` lowers to for CUDA (no GPU needed)."""
    lowered = jax.jit(fn).trace(*specs).lower(lowering_platforms=("cuda",))
    calls = triton_calls(lowered.compiler_ir())
    assert len(calls) == 1, f"expected one triton custom call, got {len(calls)}"
    cfg = calls[0].attributes["mhlo.backend_config"]
    bytecode = ir.StringAttr(cfg["ir"]).value_bytes
    kname = ir.StringAttr(cfg["name"]).value
    nw, ns = attr_int(cfg, "num_warps", 4), attr_int(cfg, "num_stages", 3)
    grid = [attr_int(cfg, f"grid_{d}", 1) for d in "xyz"]
    ctx = ir.Context()
    tt_dialect.register_dialect(ctx)
    return str(ir.Module.parse(bytecode, context=ctx)), kname, nw, ns, grid


def main():
    sys.path.insert(0, str(SRC / "pallas"))
    import kernels as K

    outdir = PTX / "pallas"
    ldir = LAUNCH / "pallas"
    clean_dir(outdir, "*.ptx")
    clean_dir(ldir, "*.json")
    tdir = BUILD / "pallas"
    tdir.mkdir(parents=True, exist_ok=True)
    version = f"jax {jax.__version__} / jaxlib {jaxlib.__version__} / triton {triton.__version__}"
    records, failures = [], []
    for name, (fn, specs) in sorted(K.KERNELS.items()):
        try:
            ttir, kname, nw, ns, grid = lower(fn, specs)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name}: lowering: {type(e).__name__}: {e}")
            continue
        ttir_path = tdir / f"{name}.ttir"
        ttir_path.write_text(ttir)
        for cap in CAPS:
            out_name = f"{name}_sm{cap}"
            try:
                k = triton.compile(str(ttir_path), target=GPUTarget("cuda", cap, 32),
                                   options={"num_warps": nw, "num_stages": ns})
            except Exception as e:  # noqa: BLE001
                first = str(e).splitlines()[0] if str(e) else ""
                failures.append(f"{out_name}: triton.compile: {type(e).__name__}: {first}")
                continue
            path = outdir / f"{out_name}.ptx"
            path.write_text(k.asm["ptx"])
            outs = jax.eval_shape(fn, *specs)
            outs = outs if isinstance(outs, (tuple, list)) else [outs]
            args = [{"name": f"in{i}", "kind": "pointer", "dtype": str(s.dtype), "shape": list(s.shape),
                     "init": "randn"} for i, s in enumerate(specs)]
            args += [{"name": f"out{i}", "kind": "pointer", "dtype": str(s.dtype), "shape": list(s.shape),
                      "init": "zeros"} for i, s in enumerate(outs)]
            write_json(ldir / f"{out_name}.json", {
                "ptx": f"ptx/pallas/{out_name}.ptx", "kernel": k.metadata.name,
                                                   "source": f"src/pallas/kernels.py::{name}",
                "target": {"backend": "cuda", "capability": cap, "warp_size": 32}, "args": args, "grid": grid,
                "block": [nw * 32, 1, 1], "num_warps": nw, "num_stages": ns, "shared": k.metadata.shared,
                "global_scratch_size": k.metadata.global_scratch_size, "seed": 0,
                "notes": "Pallas passes inputs then outputs as pointers; two hidden Triton scratch pointers follow."})
            records.append(record(path, "pallas", version, features=["pallas", "triton"],
                                  source=f"src/pallas/kernels.py::{name}",
                                  launch=f"launch/pallas/{out_name}.json", kernel_name=kname))
    update_manifest("pallas", records)
    for f in failures:
        print("FAILED", f, file=sys.stderr)
    print(f"pallas: {len(records)} PTX files, {len(failures)} failures")
    import shutil
    shutil.rmtree(_cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
