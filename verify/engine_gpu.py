"""The CPU engine against the GPU on the same cases: one kernel, one launch (the engine's reduced
launch of a corpus sidecar, or an IR problem's launch), the same inputs (seeded from the
sidecar, or given), run on the engine (inorder schedule) and on the GPU; every buffer compared.

Comparison policy, per buffer (`policy`):
  bitwise       integer results and float results of exact arithmetic (the default);
  tolerance     float buffers of a kernel that uses `.approx` instructions (the engine states the
                ulp bound, not the hardware's bits) or whose float atomics make the result depend on
                the order of the atomics: |gpu - cpu| <= atol + rtol |cpu| with the stated rtol/atol;
  reference     buffers whose value depends on the order of atomics (an exch, a first-wins CAS):
                the GPU's output must satisfy the numpy reference (corpus/scripts/corpus_refs.py), as the
                engine's does, instead of equal the engine's.

Needs a GPU (verify.gpu_run.skip_reason says why not); scripts/gpu_suite.py (d) runs its cases through
scripts/gpusuite/gpu_case_run.py instead.
"""
from __future__ import annotations

import re

import numpy as np

from ptx2py.emulate import run as engine_run
from ptx2py.launch.plan import canon_dtype, compare

from .gpu_run import Session

APPROX = re.compile(r"\.approx\b|\b(?:ex2|lg2|sin|cos|tanh|rsqrt)\.")
FLOAT_ATOMIC = re.compile(r"\b(?:atom|red)(?:\.\w+)*\.add(?:\.\w+)*\.(?:f16x2|bf16x2|f16|bf16|f32|f64)\b")
FLOATS = {"fp32", "fp16", "bf16", "fp64", "fp8e4nv", "fp8e5"}
RTOL, ATOL = 1e-5, 1e-6


def policy(text: str, dtype: str, name: str, order_dependent=frozenset()) -> str:
    """How one buffer of a kernel is compared (see the module docstring)."""
    if name in order_dependent and canon_dtype(dtype) not in FLOATS:
        return "reference"
    if canon_dtype(dtype) in FLOATS and (name in order_dependent or APPROX.search(text)
                                         or FLOAT_ATOMIC.search(text)):
        return "tolerance"
    return "bitwise"


def gpu_outputs(gpu, text: str, spec: dict, inputs: dict | None = None) -> dict:
    """Every buffer after one GPU launch of `spec` (inputs by argument name replace the seeded
    ones), by argument name, in storage layout."""
    sess = Session(gpu, text, spec)
    module = None
    try:
        for p in sess.plans:
            if inputs and p.arg in inputs and p.index in sess.host:
                sess.host[p.index] = np.ascontiguousarray(inputs[p.arg]).reshape(-1).view(sess.host[p.index].dtype)
        module, _, _ = gpu.load(text)
        func = gpu.function(module, spec["kernel"])
        sess.prepare(func)
        sess.reset()
        sess.launch(func)
        gpu.sync()
        return {name: arr for name, (arr, _) in sess.outputs().items()}
    finally:
        sess.close()
        if module is not None:
            gpu.unload(module)


def engine_outputs(label: str, text: str, spec: dict, inputs: dict | None = None):
    """(outputs, None) of the engine's inorder run, or (None, why) on a refusal or a report; a
    top-level function, so that a process pool can run the engine side of many cases at once."""
    from ptx2py.emulate import EmulationError

    try:
        r = engine_run(text, spec, dict(inputs or {}), filename=label)
    except EmulationError as e:
        return None, "engine refused: " + str(e).splitlines()[0]
    if r.reports:
        return None, "engine report: " + r.reports[0].render()
    return r.outputs, None


def compare_case(gpu, label: str, text: str, spec: dict, inputs: dict | None = None, *,
                 order_dependent=frozenset(), check=None, rtol=RTOL, atol=ATOL, cpu=None) -> dict:
    """One row: the engine's and the GPU's outputs of the same launch, compared buffer by buffer.
    `check(outputs) -> list of differences` is the numpy reference for the `reference` buffers;
    `cpu` is engine_outputs' result when already run."""
    outputs, why = cpu or engine_outputs(label, text, spec, inputs)
    if outputs is None:
        return {"label": label, "status": "engine-refused" if "refused" in why else "error", "error": why}
    gpu_out = gpu_outputs(gpu, text, spec, inputs)
    dtypes = {a["name"]: a["dtype"] for a in spec["args"] if a["kind"] != "scalar"}
    buffers, bad = {}, []
    for name, want in outputs.items():
        how = policy(text, dtypes[name], name, order_dependent)
        got = gpu_out[name]
        if how == "reference":
            diffs = [d for d in (check(gpu_out) if check else ["no reference"]) if d.startswith(name + ":")]
            row = {"ok": not diffs, "how": how, "why": diffs[:1]}
        else:
            row = compare(got, want, canon_dtype(dtypes[name]), *((rtol, atol) if how == "tolerance" else (None, None)))
            row["how"] = how
        buffers[name] = row
        if not row["ok"]:
            bad.append(name)
    return {"label": label, "status": "mismatch" if bad else "match", "mismatches": bad, "buffers": buffers,
            "grid": spec["grid"], "block": spec["block"]}
