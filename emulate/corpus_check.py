"""Corpus kernels with launch sidecars on the engine: a reduced launch, three schedules, the same
outputs under all three and no report (scripts/emulate_corpus.py, roundtrip_tests). A kernel with
a numpy reference (corpus_refs.py) must match it under every schedule; its float outputs updated
by float atomics may then differ between schedules (the order of the additions), every other
output must still be bit-equal."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np

from launch.plan import kernel_specs

from .corpus_refs import reference_for
from .errors import EmulationError
from .frontend import reduced_launch, run

ROOT = Path(__file__).resolve().parent.parent
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
    `.lineinfo.ptx`, `.fastmath.ptx`): the same kernels, so the same launch sidecar."""
    stem = ptx.name[: -len(".ptx")]
    return sorted(p for p in ptx.parent.glob(f"{stem}.*.ptx") if p.name.count(".") == stem.count(".") + 2)


def small_launch(spec: dict, ctas: int) -> dict:
    """The reduced launch of the sweep: `ctas` CTAs, problem sizes cut to 4 elements a thread,
    loop extents to LOOP_EXTENTS."""
    block = int(np.prod(spec.get("block", [1])))
    return reduced_launch(spec, ctas, max_elements=4 * ctas * block, scalars=LOOP_EXTENTS)


def run_case(ptx: Path, spec: dict, ctas: int, max_steps: int) -> dict:
    text = ptx.read_text()
    small = small_launch(spec, ctas)
    outs, t0 = [], time.perf_counter()
    steps = 0
    for sched in SCHEDULES:
        try:
            r = run(text, small, schedule=sched, filename=str(ptx.relative_to(ROOT)), max_steps=max_steps)
        except EmulationError as e:
            return {"status": "refused", "why": str(e).splitlines()[0]}
        except Exception as e:  # noqa: BLE001 - report every kernel
            return {"status": "crash", "why": f"{type(e).__name__}: {e}"}
        if any(x.kind == "trap" and "step limit" in x.message for x in r.reports):
            return {"status": "too-long", "why": r.reports[-1].render(), "schedule": sched}
        if r.reports:
            return {"status": "report", "why": r.reports[0].render(), "schedule": sched,
                    "kinds": sorted({x.kind for x in r.reports})}
        outs.append(r.outputs)
        steps += r.stats["thread_instructions"]
    return {**_verdict(text, spec["kernel"], small, outs), "seconds": time.perf_counter() - t0,
            "thread_instructions": steps, "grid": small["grid"]}


def _verdict(text: str, kernel: str, small: dict, outs: list) -> dict:
    """pass / wrong-output / schedule-dependent from the outputs of the schedules."""
    differ = [k for k in outs[0] if any(not np.array_equal(outs[0][k].view(np.uint8), o[k].view(np.uint8))
                                        for o in outs[1:])]
    ref = reference_for(kernel)
    out = {}
    if ref is not None:
        checks = [ref(o, small) for o in outs]
        bad = next((c for c in checks if not c["ok"]), None)
        out["reference"] = bad or checks[0]
        if bad:
            return {**out, "status": "wrong-output", "why": f"{bad['what']}: max error {bad['max_err']:.3g}"}
    dtypes = {a["name"]: a.get("dtype") for a in small["args"]}
    atomic = ref is not None and FLOAT_ATOMIC.search(kernel_text(text, kernel)) is not None
    if differ and atomic and all(dtypes.get(k) in FLOAT_DTYPES for k in differ):
        out["float_atomic_outputs"] = differ       # within the reference's bound under each schedule
    elif differ:
        return {**out, "status": "schedule-dependent", "why": f"outputs differ between schedules: {', '.join(differ)}"}
    return {**out, "status": "pass"}
