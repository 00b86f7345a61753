#!/usr/bin/env python3
"""Regenerate corpus/refs/: for every kernel with a launch sidecar, the independent reference of
the sweep's reduced launch (oracle_refs.py says what is stored).

Triton kernels run their source (corpus/src/triton/kernels.py) under Triton's interpreter
(TRITON_INTERPRET=1, CPU, numpy buffers), Pallas kernels (corpus/src/pallas/kernels.py) run
`pallas_call(..., interpret=True)` on CPU JAX, both with the seeded inputs the engine gets
(emulate.frontend.seeded_inputs) and the same reduced grid, scalars and constexprs. Where the
interpreter is known to be wrong (FAULTS) a float64 numpy reference (float64_refs.py) is computed
too; where the two disagree the float64 one is stored and the manifest says which oracle was
wrong and why. Other producers keep their numpy references (corpus_refs.py, gemm_refs.py); the
manifest names them, or says why a kernel has none.

    python corpus/scripts/make_oracle_refs.py [--only SUBSTR]
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"          # before triton.jit decorates the corpus sources
os.environ.setdefault("JAX_PLATFORMS", "cpu")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import oracle_refs  # noqa: E402
from corpus_check import LOOP_EXTENTS, cases, small_launch, source_stem  # noqa: E402
from corpus_refs import NO_REFERENCE, reference_for  # noqa: E402
from float64_refs import FLOAT64_REFS  # noqa: E402
from gemm_refs import reference_for as gemm_reference_for  # noqa: E402
from oracle_runs import ORACLES, run_oracle  # noqa: E402

from ptx2py.emulate.errors import EmulationError  # noqa: E402
from ptx2py.emulate.frontend import seeded_inputs  # noqa: E402

CTAS = 2

# Triton 3.9 interpreter faults (kernel source features -> why its result is not trusted there):
# such kernels get a float64 reference too, and it decides.
FAULTS = {
    "bf16": "the interpreter truncates fp32 -> bf16 instead of rounding to nearest even, and adds bf16 values "
            "without an fp32 cast as their 16-bit storage patterns (1.5 + 1.5 gives inf)",
    "fp8": "the interpreter rounds fp32 -> fp8 ties away from zero and mishandles overflow and NaN",
    "bf16-dot": "the interpreter's tl.dot of bf16 operands returns garbage",
}

# relative tolerance of a float buffer by storage dtype: a few ulps of the output format (the PTX
# may fuse multiply-adds, use .approx functions, sum in another order); atol is the same factor of
# the buffer's largest reference magnitude (cancellation in sums)
FLOAT_RTOL = {"fp32": 2e-5, "float32": 2e-5, "fp16": 2e-3, "float16": 2e-3, "bf16": 1.6e-2, "bfloat16": 1.6e-2,
              "fp8e4nv": 0.13, "fp8e5": 0.26, "fp64": 1e-12, "float64": 1e-12}
# tensor-core products: Triton's default fp32 dot is tf32 (10-bit mantissa operands), and an fp16
# or bf16 output can round either way of a tie after a different accumulation order
DOT_RTOL = {"fp32": 2e-3, "float32": 2e-3}
DOT_SOURCES = ("matmul", "attn")


def tolerance(dtype: str, want: np.ndarray, dot: bool) -> dict:
    """The tolerance of a buffer from the values the oracle wrote there (none: bit for bit)."""
    rtol = (DOT_RTOL.get(dtype) if dot else None) or FLOAT_RTOL.get(dtype)
    if rtol is None or want.size == 0:
        return {"rule": "exact"}
    scale = float(np.nanmax(np.abs(oracle_refs.values(want, dtype)), initial=1.0))
    scale = scale if np.isfinite(scale) else 1.0
    return {"rule": "close", "rtol": rtol, "atol": rtol * scale}


def _save(buffers: dict) -> str:
    """Store {name: (idx, val)} compressed under corpus/refs/, named by its content."""
    arrays = {f"{n}.{part}": a for n, (idx, val) in buffers.items() for part, a in (("idx", idx), ("val", val))}
    raw = io.BytesIO()
    np.savez_compressed(raw, **arrays)
    digest = hashlib.sha256(b"".join(arrays[k].tobytes() + k.encode() for k in sorted(arrays))).hexdigest()[:16]
    path = oracle_refs.REFS / f"{digest}.npz"
    if not path.is_file():
        path.write_bytes(raw.getvalue())
    return path.name


def _changes(inputs: dict, outputs: dict) -> dict:
    """buffer -> (flat indices where `outputs` differs from `inputs`, its values there)."""
    out = {}
    for name, after in outputs.items():
        before = inputs[name]
        diff = (before.view(np.uint8).reshape(before.size, -1) != after.view(np.uint8).reshape(after.size, -1)).any(-1)
        idx = np.flatnonzero(diff).astype(np.uint32)
        out[name] = (idx, after[idx])
    return out


def _faults(spec: dict, source: str) -> list[str]:
    dts = {a.get("dtype") for a in spec["args"]}
    found = []
    if dts & {"bf16", "bfloat16"}:
        found.append("bf16-dot" if any(s in source for s in DOT_SOURCES) else "bf16")
    if dts & {"fp8e4nv", "fp8e5"}:
        found.append("fp8")
    return found


def _float64_decides(oracle: str, spec: dict, small: dict, inputs: dict, outputs: dict,
                     faults: list) -> tuple | None:
    """(the outputs to store, what the manifest records) for a kernel the interpreter may get wrong:
    its float64 reference's buffers where they and the interpreter's disagree; None without one."""
    f64 = FLOAT64_REFS.get(spec.get("source", "").split("::")[-1])
    if f64 is None:
        return None
    want = f64(small, inputs)
    dtypes = {a["name"]: a.get("dtype") for a in small["args"]}
    wrong = {}
    for b, w in want.items():
        written = _changes(inputs, {b: w})[b][1]
        why = oracle_refs.compare(b, outputs[b], w, dtypes[b], tolerance(dtypes[b], written, True))
        if why:
            wrong[b] = why
    if not wrong:
        return outputs, {"float64_agrees": True}
    return {**outputs, **want}, {"oracle_wrong": {
        "oracle": oracle, "buffers": sorted(wrong), "decided_by": "float64 numpy reference (float64_refs.py)",
        "why": "; ".join(FAULTS[f] for f in faults), "disagreement": "; ".join(wrong.values())[:400]}}


def oracle_entry(producer: str, ptx: Path, spec: dict) -> tuple[dict, dict | None]:
    """The manifest entry of one interpreter-checked kernel and its reference buffers."""
    text = ptx.read_text()
    small = small_launch(spec, CTAS)
    inputs = seeded_inputs(text, small)
    oracle, version = ORACLES[producer]
    base = {"oracle": oracle, "oracle_version": version, "seed": int(small.get("seed", 0) or 0),
            "launch": {"ctas": CTAS, "grid": small["grid"], "loop_extents": LOOP_EXTENTS}}
    try:
        outputs = run_oracle(producer, spec, small, inputs)
    except Exception as e:  # noqa: BLE001 - an oracle that cannot run the kernel leaves it unverified
        return {**base, "oracle": "none", "why": f"{oracle} failed: {type(e).__name__}: {str(e)[:300]}"}, None
    faults = _faults(spec, spec.get("source", ""))
    if faults:
        decided = _float64_decides(oracle, spec, small, inputs, outputs, faults)
        if decided is None:
            why = "; ".join(FAULTS[f] for f in faults)
            return {**base, "oracle": "none", "why": f"{why}, and no float64 reference is written for it"}, None
        outputs, verdict = decided
        base.update(verdict)
        if "oracle_wrong" in verdict:
            base["oracle"] = "float64 numpy (float64_refs.py)"
    buffers = _changes(inputs, outputs)
    dtypes = {a["name"]: a.get("dtype") for a in small["args"]}
    dot = any(s in spec.get("source", "") for s in DOT_SOURCES)
    ref = reference_for(producer, source_stem(ptx), spec["kernel"])
    base.update(buffers=sorted(buffers), tolerance={b: tolerance(dtypes[b], buffers[b][1], dot) for b in buffers},
                order_dependent=sorted(ref.order_dependent) if ref is not None else [])
    return base, buffers


def numpy_entry(producer: str, ptx: Path, spec: dict) -> dict:
    ref = reference_for(producer, source_stem(ptx), spec["kernel"])
    if ref is not None:
        return {"oracle": "numpy (corpus_refs.py)"}
    if gemm_reference_for(spec["kernel"]) is not None:
        return {"oracle": "numpy (gemm_refs.py)"}
    why = NO_REFERENCE.get((producer, source_stem(ptx)), "no numpy reference is written for it")
    return {"oracle": "none", "why": why}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only")
    args = ap.parse_args(argv)
    oracle_refs.REFS.mkdir(exist_ok=True)
    old = oracle_refs.manifest()["kernels"] if args.only else {}
    kernels = dict(old)
    for producer, ptx, spec in cases(oracle_refs.ALL_TARGETS, args.only):
        k = oracle_refs.key(str(ptx.relative_to(ROOT)), spec["kernel"])
        if producer not in ORACLES:
            kernels[k] = numpy_entry(producer, ptx, spec)
            continue
        try:
            ent, buffers = oracle_entry(producer, ptx, spec)
        except EmulationError as e:
            ent, buffers = {"oracle": "none", "why": f"no seeded inputs: {str(e).splitlines()[0]}"}, None
        if buffers is not None:
            ent["file"] = _save(buffers)
        kernels[k] = ent
        print(f"{ent['oracle'][:30]:30} {k}  {ent.get('why', '')[:120]}", flush=True)
    used = {e["file"] for e in kernels.values() if "file" in e}
    for stale in oracle_refs.REFS.glob("*.npz"):
        if stale.name not in used:
            stale.unlink()
    manifest = {"about": "independent references of the sweep's reduced launches; see corpus/scripts/oracle_refs.py",
                "regenerate": "python corpus/scripts/make_oracle_refs.py",
                "tolerance_policy": "exact: bit for bit (integers); close: |got - want| <= atol + rtol |want| with "
                                    "rtol a few ulps of the storage dtype (tf32 for fp32 tl.dot) and atol = rtol * "
                                    "max |want|; elements the oracle leaves alone keep their seeded bits",
                "known_oracle_faults": FAULTS,
                "kernels": dict(sorted(kernels.items()))}
    oracle_refs.MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
