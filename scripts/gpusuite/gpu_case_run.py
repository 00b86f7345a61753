"""One case of the GPU suite (scripts/gpusuite/gpu_cases.py), run in this process: the PTX made, launched
on the GPU from two cubins (`--fmad=false`, compared by the case's policy; the default build,
within the contraction bound), the reference computed (numpy, the CPU engine, or both), every
output buffer checked to have changed from its initial fill, and the result judged against what
the case expects. scripts/gpusuite/gpu_child.py runs it in a child process, so that a sticky CUDA error
or a hang ends only its own case.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ptx2py.launch.plan import canon_dtype, compare

from .gpu_cases import CHANGED_BY_REFERENCE, ROOT, WORKED_SUGAR

BUILDS = (("nofma", False), ("default", True))
# a kernel still running after this long is a hang (PTX2PY_GPU_SYNC_TIMEOUT_S overrides)
SYNC_TIMEOUT_S = float(os.environ.get("PTX2PY_GPU_SYNC_TIMEOUT_S", "30"))


# ------------------------------------------------------------------------------ what to run
def reference_text(case: dict) -> str:
    """The PTX the reference is computed from (the unedited kernel for a store edit)."""
    src = case["source"]
    if src["kind"] in ("file", "roundtrip", "mutant"):
        text = (ROOT / src["ptx"]).read_text()
        if src["kind"] == "file":
            return text
        from ptx2py.transpile import ptx_to_python, python_to_ptx

        return python_to_ptx(ptx_to_python(text, filename=src["ptx"]))
    if src["kind"] == "worked-edit":
        return worked_edit_ptx(src["edit"])
    raise ValueError(f"{case['id']}: no PTX for a {src['kind']} case")


def case_text(case: dict) -> str:
    """The PTX the GPU runs."""
    text = reference_text(case)
    if case["source"]["kind"] == "mutant":
        from .store_edit import change_stores

        text, _ = change_stores(text, case["kernel"])
    return text


def worked_edit_ptx(edit: str) -> str:
    from gallery import EDITS, apply_edit

    from ptx2py.transpile.traced import python_to_ptx_traced

    sugar = (ROOT / WORKED_SUGAR).read_text()
    source = sugar if edit == "unedited" else apply_edit(sugar, EDITS[edit])[0]
    return python_to_ptx_traced(source, str(ROOT / WORKED_SUGAR))[0]


def case_launch(case: dict) -> dict:
    launch = case["launch"]
    if launch["kind"] == "sidecar":
        return case["spec"]
    if launch["kind"] == "reduced":
        from corpus_check import small_launch

        return small_launch(case["spec"], launch["ctas"])
    if launch["kind"] == "matmul":
        from gallery import matmul_launch

        return matmul_launch(launch["m"], launch["n"], launch["k"])
    raise ValueError(f"{case['id']}: unknown launch {launch}")


# ------------------------------------------------------------------------------ the GPU side
def gpu_outputs(gpu, text: str, spec: dict, fmad: bool, repeat: int = 0, warmup: int = 0):
    """(initial fill, outputs after one launch, load note, times in ms) by buffer name."""
    from ptx2py.verify.gpu_run import Session

    sess = Session(gpu, text, spec)
    module = None
    try:
        initial = {p.arg: sess.host[p.index].copy() for p in sess.plans if p.index in sess.host}
        module, method, note = gpu.load(text, fmad=fmad)
        func = gpu.function(module, spec["kernel"])
        sess.prepare(func)
        sess.reset()
        sess.launch(func)
        gpu.sync(SYNC_TIMEOUT_S)
        outputs = {name: arr for name, (arr, _) in sess.outputs().items()}
        times = gpu.time_ms(lambda: sess.launch(func), repeat, warmup) if repeat else []
    except TimeoutError:
        raise       # the kernel still runs: a free or unload would wait for it; the child exits instead
    except BaseException:
        _release(gpu, sess, module, quiet=True)
        raise
    _release(gpu, sess, module, quiet=False)
    return initial, outputs, f"{method}: {note}", times


def _release(gpu, sess, module, quiet: bool):
    """Free the buffers and unload the module; checked (raised) unless a failure is already on
    its way out."""
    from ptx2py.verify.gpu_run import release_all

    try:
        sess.close()
        release_all(gpu.unload, [module] if module is not None else [])
    except Exception:
        if not quiet:
            raise


# ------------------------------------------------------------------------------ references
def engine_side(text: str, spec: dict, initial: dict) -> dict:
    """The CPU engine's run of the same launch: outputs, or a refusal, or its report kinds."""
    from ptx2py.emulate import EmulationError
    from ptx2py.emulate import run as engine_run

    t0 = time.perf_counter()
    try:
        r = engine_run(text, spec, {k: v.copy() for k, v in initial.items()}, filename=spec["kernel"])
    except EmulationError as e:
        return {"status": "refused", "why": str(e).splitlines()[0], "seconds": time.perf_counter() - t0}
    kinds = sorted({x.kind for x in r.reports})
    out = {"status": "report" if kinds else "ran", "kinds": kinds, "outputs": r.outputs,
           "seconds": time.perf_counter() - t0}
    if r.reports:
        out["why"] = r.reports[0].render()
    return out


def numpy_reference(case: dict, spec: dict):
    """A function outputs -> list of differences, and the buffers it wants changed, or None."""
    from corpus_check import _context, source_stem
    from corpus_refs import check, reference_for
    from gemm_refs import reference_for as gemm_for

    src = case["source"]
    if src["kind"] == "worked-edit" or case["part"] == "b":
        return _worked_reference(spec)
    ptx = Path(src["ptx"])
    ref = reference_for(ptx.parent.name, source_stem(ptx), case["kernel"])
    if ref is not None:
        def corpus(initial, outputs):
            return check(ref, _context(spec, initial, outputs))

        def wants(initial):
            want = ref.fn(_context(spec, initial, initial))
            return [n for n, e in want.items()
                    if np.asarray(e.want).astype(initial[n].dtype).tobytes() != initial[n].tobytes()]

        corpus.order_dependent = ref.order_dependent
        corpus.wants = wants
        return corpus
    gemm = gemm_for(case["kernel"])
    if gemm is not None:
        def gemm_check(initial, outputs):
            v = gemm(outputs, spec)
            return [] if v["ok"] else [f"{v['what']}: max error {v['max_err']:.3g} beyond the bound"]

        gemm_check.order_dependent = frozenset()
        gemm_check.wants = lambda initial: None
        return gemm_check
    return None


def _worked_reference(spec: dict):
    from gallery import check_output

    vals = {a["name"]: a.get("value") for a in spec["args"]}

    def worked(initial, outputs):
        v = check_output(outputs, vals["M"], vals["N"], vals["K"])
        return [] if v["ok"] else [f"c_desc: {v['mismatches']} of {v['elements']} beyond the bound "
                                   f"(max abs error {v['max_abs_err']:.3g})"]

    worked.order_dependent = frozenset()
    worked.wants = lambda initial: None
    return worked


def differences(got: dict, want: dict, dtypes: dict, rtol: float, atol: float, skip=frozenset()) -> list[str]:
    """Buffers of `got` that differ from `want` (bit for bit when rtol = atol = 0)."""
    bad = []
    for name, w in want.items():
        if name in skip or name not in got:
            continue
        bounded = (rtol or atol) and dtypes.get(name) in ("fp32", "fp16", "bf16", "fp64")
        c = compare(got[name], w, dtypes.get(name, "u8"), *((rtol, atol) if bounded else (None, None)))
        if not c["ok"]:
            how = f"within rtol {rtol:.3g} atol {atol:.3g}" if bounded else "bitwise"
            bad.append(f"{name}: {c['n_diff']} of {w.size} differ (max abs {c['max_abs']:.3g}, "
                       f"rel {c['max_rel']:.3g}; {how})")
    return bad


# ------------------------------------------------------------------------------ judging
def written_buffers(case: dict, written_by_reference: list | None) -> list[str]:
    """The buffers the kernel writes: those its reference changes from their fill (an output,
    an in-place update), else (a reference that cannot say: a GEMM bound, the worked example's
    check) the case's declared outputs (the zero-filled buffers)."""
    if written_by_reference is not None and CHANGED_BY_REFERENCE in case["must_change"]:
        return list(written_by_reference)
    return [n for n in case["must_change"] if n != CHANGED_BY_REFERENCE]


def unchanged(written: list[str], initial: dict, outputs: dict) -> list[str]:
    return [n for n in written if n in outputs and outputs[n].tobytes() == initial[n].tobytes()]


def _changed(initial: dict, after: dict) -> list[str]:
    return [n for n, a in after.items() if n in initial and a.tobytes() != initial[n].tobytes()]


def engine_verdict(expect: str | None, engine: dict | None, numpy_diffs) -> str | None:
    """None when the engine did what the case expects, else what it did instead."""
    if expect is None:
        return None
    got = engine["status"]
    if expect == "refused":
        return None if got == "refused" else f"engine: expected a refusal, it {got}"
    if expect.startswith("report:"):
        kind = expect.split(":", 1)[1]
        return None if kind in engine.get("kinds", []) else \
            f"engine: expected a {kind} report, got {got} {engine.get('kinds') or engine.get('why', '')}"
    if got != "ran":
        return f"engine: expected a clean run, got {got}: {engine.get('why', '')}"
    if expect == "differ" and numpy_diffs == []:
        return "engine: expected a wrong output, it matches the numpy reference"
    if expect == "match" and numpy_diffs:
        return "engine: differs from the numpy reference: " + numpy_diffs[0]
    return None


def judge(case: dict, builds: dict, engine: dict | None, numpy_diffs: dict, engine_diffs: dict,
          untouched: dict, written: list[str]) -> tuple[str, list[str]]:
    """pass | FAIL and why: `builds` per build name, the differences against numpy and the engine."""
    why = []
    if not written and case["expect_gpu"] != "any" and not case.get("writes_nothing"):
        why.append("the reference writes no buffer: a launch that does no work proves nothing")
    for build, names in untouched.items():
        if names:
            why.append(f"{build}: output buffer(s) {', '.join(names)} unchanged from their initial fill")
    bad_engine = engine_verdict(case["expect_engine"], engine, numpy_diffs.get("engine"))
    if bad_engine:
        why.append(bad_engine)
    expect = case["expect_gpu"]
    for build in builds:
        diffs = numpy_diffs.get(build, []) + engine_diffs.get(build, [])
        if expect == "match" and diffs:
            why.append(f"{build}: " + "; ".join(diffs[:3]))
        if expect == "differ" and build == "nofma" and not numpy_diffs.get(build, engine_diffs.get(build)):
            why.append(f"{build}: expected to differ from the reference, it matches")
        if expect == "differ" and case["source"]["kind"] != "mutant" and engine_diffs.get(build):
            why.append(f"{build}: the engine beside the GPU differs: " + "; ".join(engine_diffs[build][:2]))
    return ("FAIL" if why else "pass"), why


def run_case(case: dict, gpu=None, repeat: int = 0, warmup: int = 0) -> dict:
    """The case's row (what gpu_suite reports); raises only where the GPU side raised."""
    t0 = time.monotonic()
    row = {k: case[k] for k in ("id", "part", "target", "kernel", "policy", "bound", "reference", "expect_gpu",
                                "expect_engine")}
    from ptx2py.verify.gpu_run import get_gpu

    gpu = gpu or get_gpu()
    spec = case_launch(case)
    text = case_text(case)
    dtypes = {a["name"]: canon_dtype(a.get("dtype", "u8")) for a in spec["args"] if a["kind"] != "scalar"}
    builds, outs, initial = {}, {}, None
    for build, fmad in BUILDS:
        timed = repeat if (case.get("timed") and build == "default") else 0
        initial, outs[build], note, times = gpu_outputs(gpu, text, spec, fmad, timed, warmup)
        builds[build] = {"load": note, **({"median_ms": float(np.median(times))} if times else {})}
    ref = numpy_reference(case, spec)
    engine = None
    if case["expect_engine"] is not None:
        engine = engine_side(text if case["source"]["kind"] != "mutant" else reference_text(case), spec, initial)
    numpy_diffs, engine_diffs = {}, {}
    skip = ref.order_dependent if ref else frozenset()
    for build in builds:
        if ref is not None:
            numpy_diffs[build] = ref(initial, outs[build])
        if engine and engine["status"] == "ran":
            rtol, atol = (case["rtol"], case["atol"]) if build == "nofma" or not case.get("default_rtol") else \
                (case["default_rtol"], case.get("default_atol", case["atol"]))
            engine_diffs[build] = differences(outs[build], engine["outputs"], dtypes, rtol, atol, skip)
    if ref is not None and engine and engine["status"] == "ran":
        numpy_diffs["engine"] = ref(initial, engine["outputs"])
    by_reference = None
    if engine and engine["status"] == "ran":
        by_reference = _changed(initial, engine["outputs"])
    elif ref is not None:
        by_reference = ref.wants(initial)
    written = written_buffers(case, by_reference)
    untouched = {b: unchanged(written, initial, outs[b]) for b in builds}
    result, why = judge(case, builds, engine, numpy_diffs, engine_diffs, untouched, written)
    row["written"] = written
    if engine is not None:
        row["engine"] = {k: v for k, v in engine.items() if k != "outputs"}
    return {**row, "result": result, "why": why, "builds": builds, "seconds": round(time.monotonic() - t0, 2)}
