"""Corpus kernels with launch sidecars on the engine: a reduced launch, three schedules, no
report, the same outputs under all three (but for the buffers a reference marks order-dependent),
and the result of every independent reference the kernel has: the stored oracle reference of
corpus/refs/ (Triton interpreter, Pallas interpret mode, float64 numpy; oracle_refs.py), the
numpy reference of corpus/scripts/corpus_refs.py, the tensor-core reference of gemm_refs.py
(within its accumulation-order bound). Verdicts (VERDICTS): `match`, `refused` (the engine
refused with a located reason), `mismatch` (a reference disagrees), `fail` (a crash, a report,
the step limit, outputs that differ between schedules) and `unverified` (no reference: agreement
of the schedules alone is no pass). Float outputs updated by float atomics that a reference
checked within a tolerance may differ between schedules; every other output must be bit-equal."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import corpus_refs
import numpy as np
import oracle_refs
from gemm_refs import reference_for as gemm_reference_for

from ptx2py.emulate.errors import EmulationError
from ptx2py.emulate.frontend import reduced_launch, run, seeded_inputs
from ptx2py.launch.plan import kernel_specs

ROOT = Path(__file__).resolve().parents[2]
SCHEDULES = ("inorder", "reverse", "random:1")
# loop extents lowered in reduced launches: a matmul's K, attention's sequence length, a persistent
# kernel's row count
LOOP_EXTENTS = {"K": 64, "N_CTX": 128, "n_rows": 8}
FLOAT_ATOMIC = re.compile(r"\b(?:atom|red)(?:\.[\w:]+)*\.add(?:\.noftz)?\.(?:f32|f64|f16|bf16|f16x2|bf16x2)\b")
FLOAT_DTYPES = {"fp16", "f16", "float16", "bf16", "bfloat16", "fp32", "f32", "float32", "fp64", "f64", "float64"}


def kernel_text(text: str, kernel: str) -> str:
    """A kernel's own .entry text with the module's .func bodies (which it may call); the whole
    module when it has no such entry."""
    entries = [m.start() for m in re.finditer(r"\.entry\s", text)]
    start = text.find(f".entry {kernel}")
    if start < 0:
        return text
    end = next((e for e in entries if e > start), len(text))
    funcs = "".join(m.group(0) for m in re.finditer(r"\.func[\s\S]*?\n}\n", text))
    return text[start:end] + funcs


def _target_of(sidecar: dict, path: Path) -> str:
    t = sidecar.get("target")
    if isinstance(t, dict):
        cap = int(t.get("capability", 0))
        return "sm_90a" if cap == 90 else f"sm_{cap}"
    if isinstance(t, str):
        return t
    m = re.search(r"sm_?(\d+a?)", path.name)
    return f"sm_{m.group(1)}" if m else "?"


def cases(targets, only, variants=True):
    """(producer, PTX, launch spec) of every sidecar kernel for `targets`; with variants, also of
    the other builds beside each PTX (build_variants)."""
    for side in sorted((ROOT / "corpus" / "launch").rglob("*.json")):
        data = json.loads(side.read_text())
        target = _target_of(data, side)
        if target not in targets or (only and not any(o in str(side) for o in only.split(","))):
            continue
        ptx = ROOT / "corpus" / data["ptx"] if "ptx" in data else None
        if ptx is None or not ptx.is_file():
            ptx = ROOT / "corpus" / "ptx" / side.relative_to(ROOT / "corpus" / "launch").with_suffix(".ptx")
        for build in [ptx] + (build_variants(ptx) if variants else []):
            for spec in kernel_specs(data):
                yield side.parent.name, build, spec


def build_variants(ptx: Path) -> list[Path]:
    """Other builds of the same source and target beside a PTX file (nvcc's `X.sm_80.G.ptx`,
    `.lineinfo.ptx`, `.fastmath.ptx`): the same kernels, so the same launch sidecar, unless the
    build has a sidecar of its own."""
    stem = ptx.name[: -len(".ptx")]
    own = ROOT / "corpus" / "launch" / ptx.parent.name
    return sorted(p for p in ptx.parent.glob(f"{stem}.*.ptx") if p.name.count(".") == stem.count(".") + 2
                  and not (own / (p.name[: -len(".ptx")] + ".json")).is_file())


def small_launch(spec: dict, ctas: int) -> dict:
    """The reduced launch of the sweep: `ctas` CTAs, problem sizes cut to 4 elements a thread,
    loop extents to LOOP_EXTENTS."""
    block = int(np.prod(spec.get("block", [1])))
    return reduced_launch(spec, ctas, max_elements=4 * ctas * block, scalars=LOOP_EXTENTS)


def source_stem(ptx: Path) -> str:
    return ptx.name.split(".")[0]


def _context(spec: dict, inputs: dict, outputs: dict) -> corpus_refs.Ctx:
    args = spec["args"]
    return corpus_refs.Ctx(inputs, outputs, {a["name"]: a["value"] for a in args if a["kind"] == "scalar"},
                           {a["name"]: tuple(a["shape"]) for a in args if a["kind"] == "array"},
                           [int(g) for g in spec["grid"]], [int(b) for b in spec["block"]],
                           dict(spec.get("constexprs") or {}))


VERDICTS = ("match", "refused", "unverified", "mismatch", "fail")   # no verdict for schedule agreement alone


def stored_reference(ptx: Path, spec: dict, small: dict) -> dict | None:
    """The manifest entry of corpus/refs/ that holds this kernel's reference at this very reduced
    launch (another --ctas has none)."""
    ent = oracle_refs.entry(str(ptx.relative_to(ROOT)), spec["kernel"])
    if ent is None or "file" not in ent or ent["launch"]["grid"] != small["grid"]:
        return None
    return ent


def _failed(kind: str, why: str, **extra) -> dict:
    return {"status": "fail", "failure": kind, "why": why, **extra}


def _reference_checks(ptx: Path, spec: dict, small: dict, producer: str) -> tuple:
    """(stored oracle entry, corpus_refs reference, gemm_refs reference) of a kernel, None where
    it has none."""
    return (stored_reference(ptx, spec, small), corpus_refs.reference_for(producer, source_stem(ptx), spec["kernel"]),
            gemm_reference_for(spec["kernel"]))


def run_case(ptx: Path, spec: dict, ctas: int, max_steps: int, producer: str | None = None) -> dict:
    """One sidecar kernel under the three schedules: `match` when every run is clean, equal under
    all schedules and within every independent reference it has; `unverified` without one."""
    text = ptx.read_text()
    small = small_launch(spec, ctas)
    producer = producer or ptx.parent.name
    stored, ref, gemm = _reference_checks(ptx, spec, small, producer)
    dtypes = {a["name"]: a.get("dtype") for a in small["args"]}
    outs, t0 = [], time.perf_counter()
    steps = 0
    try:
        inputs = seeded_inputs(text, small)
    except EmulationError as e:
        return {"status": "refused", "why": str(e).splitlines()[0]}
    for sched in SCHEDULES:
        try:
            r = run(text, small, {k: v.copy() for k, v in inputs.items()}, schedule=sched,
                    filename=str(ptx.relative_to(ROOT)), max_steps=max_steps)
        except EmulationError as e:
            return {"status": "refused", "why": str(e).splitlines()[0]}
        except Exception as e:  # noqa: BLE001 - report every kernel
            return _failed("crash", f"{type(e).__name__}: {e}")
        if any(x.kind == "trap" and "step limit" in x.message for x in r.reports):
            return _failed("too-long", r.reports[-1].render(), schedule=sched)
        if r.reports:
            return _failed("report", r.reports[0].render(), schedule=sched, kinds=sorted({x.kind for x in r.reports}))
        bad = corpus_refs.check(ref, _context(small, inputs, r.outputs)) if ref is not None else []
        bad += oracle_refs.check(stored, inputs, r.outputs, dtypes) if stored is not None else []
        if bad:
            return {"status": "mismatch", "why": f"{sched}: " + "; ".join(bad), "schedule": sched}
        outs.append(r.outputs)
        steps += r.stats["thread_instructions"]
    skip = (ref.order_dependent if ref is not None else frozenset()) | set((stored or {}).get("order_dependent", ()))
    references = [n for n, x in (("stored", stored), ("numpy", ref), ("gemm", gemm)) if x is not None]
    res = _verdict(text, spec["kernel"], small, outs, skip, references)
    if res["status"] == "unverified":
        res["why"] = _unverified_why(ptx, spec)
    return {**res, "seconds": time.perf_counter() - t0, "references": references,
            "oracle": (stored or {}).get("oracle"), "thread_instructions": steps, "grid": small["grid"]}


def _unverified_why(ptx: Path, spec: dict) -> str:
    ent = oracle_refs.entry(str(ptx.relative_to(ROOT)), spec["kernel"]) or {}
    return ent.get("why", "no independent reference (corpus/refs/manifest.json has no entry for it)")


def _verdict(text: str, kernel: str, small: dict, outs: list, skip=frozenset(), references=()) -> dict:
    """match / unverified / mismatch / fail from the outputs of the schedules (`skip`: buffers a
    reference marks order-dependent; `references`: the independent references that held under
    every schedule). Equal outputs under every schedule is a determinism check, not a verdict."""
    differ = [k for k in outs[0] if k not in skip
              and any(not np.array_equal(outs[0][k].view(np.uint8), o[k].view(np.uint8)) for o in outs[1:])]
    ref = gemm_reference_for(kernel)
    out: dict = {}
    if ref is not None:
        checks = [ref(o, small) for o in outs]
        bad = next((c for c in checks if not c["ok"]), None)
        out["gemm_reference"] = bad or checks[0]
        if bad:
            return {**out, "status": "mismatch", "why": f"{bad['what']}: max error {bad['max_err']:.3g}"}
    dtypes = {a["name"]: a.get("dtype") for a in small["args"]}
    within_bound = ref is not None or "stored" in references     # a tolerance, not bits, checked the floats
    atomic = within_bound and FLOAT_ATOMIC.search(kernel_text(text, kernel)) is not None
    if differ and atomic and all(dtypes.get(k) in FLOAT_DTYPES for k in differ):
        out["float_atomic_outputs"] = differ       # within the reference's bound under each schedule
    elif differ:
        return _failed("schedule-dependent", f"outputs differ between schedules: {', '.join(differ)}", **out)
    return {**out, "status": "match" if references or ref is not None else "unverified"}


def _entries(text: str) -> list[str]:
    return re.findall(r"\.entry\s+([\w$]+)\s*\(", text)


def _file_target(ptx: Path) -> str:
    """The target in a corpus file name: `X.sm_80[.variant].ptx`, or Triton/Pallas `X_sm90.ptx`
    (a capability, named as the sidecars name it)."""
    m = re.search(r"\.(sm_\d+a?)\b", ptx.name)
    if m:
        return m.group(1)
    m = re.search(r"_sm(\d+)\.ptx$", ptx.name)
    return _target_of({"target": {"capability": int(m.group(1))}}, ptx) if m else "?"


def not_covered(targets, only, covered: set) -> list[dict]:
    """Every kernel of a corpus PTX file for the targets that no sidecar describes, with why
    (launch_sidecars.NO_SIDECAR, else the file's producer has no sidecars for it)."""
    from launch_sidecars import NO_SIDECAR  # beside this file

    rows = []
    for ptx in sorted((ROOT / "corpus" / "ptx").rglob("*.ptx")):
        target = _file_target(ptx)
        if target not in targets or (only and not any(o in str(ptx) for o in only.split(","))):
            continue
        rel = str(ptx.relative_to(ROOT))
        why = NO_SIDECAR.get(f"{ptx.parent.name}/{source_stem(ptx)}", "no launch sidecar describes it")
        for kernel in _entries(ptx.read_text()):
            if (rel, kernel) not in covered:
                rows.append({"producer": ptx.parent.name, "ptx": rel, "kernel": kernel, "status": "no-sidecar",
                             "why": why})
    return rows
