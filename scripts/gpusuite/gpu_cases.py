"""The GPU suite's cases as data (no GPU needed): what each case runs, what it is compared with,
how, within what bound, and what it expects (scripts/gpu_suite.py --plan-only lists them).

Parts:
  (a) round trips: a corpus kernel's PTX -> Python -> PTX on the GPU against an independent
      reference (its numpy reference, else the CPU engine's output at the same launch), and the
      same kernel with every global store's value changed (an edit whose output must differ);
  (b) the worked example (docs/worked_example.md) and its `wait_group 1 -> 0` edit at the
      sidecar's launch against numpy's A @ B^T, timed;
  (c) the kernel-IR problems against their numpy references (kernelir/problems/reference.py;
      their cases are ir_cases below);
  (d) the CPU engine beside the GPU: every sidecar kernel of the engine targets, every sidecar
      kernel that uses TMA, wgmma, mbarrier, clusters or stmatrix (tcgen05 too on an sm_100 GPU)
      for the GPU's own target, and the worked example with its legitimate and broken edits.

Each case expects something of the GPU (`match` its reference, `differ` from it, `any`: an
edit whose hardware result the PTX leaves open) and, where the engine runs, of the engine
(`match`, or a report kind it rightly raises, or a refusal the engine's docs list).
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ptx2py.launch.plan import canon_dtype, kernel_specs

from .gpu_policy import kernel_policy

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus" / "ptx"
LAUNCH = ROOT / "corpus" / "launch"
WORKED_BASE = "corpus/ptx/triton/matmul_tma_fp16_sm90.ptx"
WORKED_EDITED = "examples/worked_matmul/matmul_edited.ptx"
WORKED_SUGAR = "examples/worked_matmul/matmul_sugar.py"
REDUCED_CTAS = 2

# (a): (PTX under corpus/ptx, kernel or None for every sidecar kernel)
ROUND_TRIP = (
    ("nvcc/elementwise.sm_90a.ptx", "vector_add"),
    ("nvcc/reduce.sm_90a.ptx", "shared_tree_max"),
    ("nvcc/reduce.sm_90a.ptx", "histogram256"),
    ("nvcc/reduce.sm_90a.ptx", "dot_double"),
    ("nvcc/scan_softmax.sm_90a.ptx", "rmsnorm_half"),
    ("triton/add_fp16_sm90.ptx", None),
    ("triton/softmax_fp32_b1024_w4_sm90.ptx", None),
    ("triton/layernorm_fp16_b1024_w4_sm90.ptx", None),
    ("triton/row_reduce_fp32_sm90.ptx", None),
    ("triton/histogram_i32_sm90.ptx", None),
    ("triton/matmul_fp16_128x128x64_w8s3_sm90.ptx", None),
    ("triton/matmul_tma_fp16_sm90.ptx", None),
    ("triton/matmul_devdesc_fp16_sm90.ptx", None),
    ("triton/attn_fwd_fp16_d64_w4_sm90.ptx", None),
    ("pallas/softmax_f32_1024_sm90.ptx", None),
    ("pallas/matmul_f16_64x64x32_sm90.ptx", None),
)

# The instructions that make a kernel part of the Hopper/Blackwell pipeline check in (d)
FEATURES = {
    "tma": r"\bcp\.async\.bulk\.tensor\b",
    "wgmma": r"\bwgmma\.",
    "mbarrier": r"\bmbarrier\.",
    "cluster": r"\.reqnctapercluster\b|%cluster_|\bbarrier\.cluster\b|\bmapa\.|::cluster\b",
    "stmatrix": r"\bstmatrix\.",
    "tcgen05": r"\btcgen05\.",
}
# features a device must have: sm_100 for tcgen05, sm_90 for the rest
FEATURE_CC = {"tcgen05": 100}

# What the engine rightly does with some corpus kernels (docs/emulate.md, "Not passing, and why"):
# (path regex, kernel regex, expected engine outcome, why)
ENGINE_EXPECT = (
    (r"nvcc/cub_block\.sm_\d+a?\.G\.ptx", r".*block_histogram.*|.*block_radix_sort.*", "report:uninit",
     "the -G code copies a never-written 16-bit register (an empty functor's byte) to local memory"),
    (r"nvcc/wgmma_tma_sm90\.sm_90a\.G\.ptx", r".*gemm.*", "report:wgmma",
     "the -G code copies the accumulators right after wgmma.mma_async, before the wait_group that "
     "covers them (undefined in the ISA; ptxas serialises the wgmma on hardware)"),
    (r"numba/fp16_scale\.", r".*", "refused", "calls numba's __half multiply, an extern function with no body"),
    (r"nvcc/rdc_main\.", r".*rdc_apply.*|.*rdc_fib.*", "refused",
     "fn_table holds function addresses; the pair needs rdc_lib linked"),
    (r"nvcc/atomics\.sm_\d+a?\.G\.ptx", r".*libcu_atomic_ref.*", "refused", "a function address as an operand"),
    (r"nvcc/reduce\.sm_\d+a?\.G\.ptx", r".*cg_reduce.*", "refused", "%reserved_smem_offset_1"),
)

# Kernels that rightly leave every buffer at its fill at the suite's launch: (path regex, kernel
# regex, why). Their outputs are still compared; only the check that something was written is waived.
WRITES_NOTHING = (
    (r"nvcc/printf_kernels\.", r"hello|print_values", "prints only: it writes no buffer"),
    (r"nvcc/stencil\.", r"conv5x5|_Z9stencil2d.*",
     "its weights are a __constant__ the host program sets (cudaMemcpyToSymbol): zero here, so the output "
     "stays zero (the numpy reference says so too)"),
)

# The worked example's edits on the engine and the GPU (emulate/gallery.py EDITS; M=N=128, K=256):
# edit -> (GPU expectation against numpy, engine expectation)
WORKED_EDITS = {
    "unedited": ("match", "match"),
    "wait-group-0": ("match", "match"),
    "no-mbarrier-wait": ("any", "report:async-read"),
    "no-wgmma-wait": ("any", "report:race"),
    "release-before-wait": ("any", "report:race"),
    "tma-coord-off-by-one-tile": ("differ", "differ"),
    "no-epilogue-fence": ("any", "report:async-proxy"),
}
WORKED_MNK = (128, 128, 256)

# seconds a case takes on the GPU side (assembly of two cubins, load, launches, a child's start)
GPU_SECONDS = {"a": 2.0, "b": 6.0, "c": 1.5, "d": 2.0}


@dataclass
class Case:
    id: str
    part: str                   # a | b | c | d
    target: str                 # the PTX's target (sm_80, sm_90a, ...)
    kernel: str
    source: dict                # how to make the PTX text (gpu_case_run.case_text)
    launch: dict                # reduced | sidecar | matmul | ir
    reference: str              # what the GPU's output is compared with
    policy: str                 # exact-int | bitwise | bounded
    bound: str
    derivation: str
    expect_gpu: str             # match | differ | any
    expect_engine: str | None   # match | differ | report:KIND | refused | None (engine not run)
    rtol: float = 0.0
    atol: float = 0.0
    default_rtol: float = 0.0   # the default build's bound (FMA contraction on)
    default_atol: float = 0.0
    sidecar: str | None = None  # where the launch comes from
    spec: dict | None = None    # the sidecar's launch of this kernel (before `launch` reduces it)
    must_change: list = field(default_factory=list)   # output buffers that must differ from their fill
    writes_nothing: str = ""    # why the kernel rightly writes no buffer at this launch (WRITES_NOTHING)
    timed: bool = False
    quick: bool = False
    why: str = ""
    estimate_s: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def _rel(p: Path) -> str:
    return str(Path(p).resolve().relative_to(ROOT))


def _target(path: str) -> str:
    from corpus_check import _file_target

    return _file_target(Path(path))


_KERNEL_TEXT: dict = {}


def kernel_text(text: str, kernel: str) -> str:
    """The kernel's entry and the module's functions (emulate.corpus_check.kernel_text), cached:
    the plan asks for each of many kernels of a few large modules."""
    from corpus_check import kernel_text as own

    key = (hash(text), kernel)
    if key not in _KERNEL_TEXT:
        code = own(text, kernel)
        debug = re.search(r"^\s*\.section\s+\.debug", code, re.M)   # -G / -lineinfo DWARF: no instructions
        _KERNEL_TEXT[key] = code[: debug.start()] if debug else code
    return _KERNEL_TEXT[key]


# a substring each feature's pattern needs (a plain `in` test first: the regexes are slow on
# the -G builds' half-megabyte kernels)
FEATURE_HINT = {"tma": "cp.async.bulk", "wgmma": "wgmma.", "mbarrier": "mbarrier.", "cluster": "cluster",
                "stmatrix": "stmatrix.", "tcgen05": "tcgen05."}


def features(text: str) -> list[str]:
    return [f for f, rx in FEATURES.items() if FEATURE_HINT[f] in text and re.search(rx, text)]


CHANGED_BY_REFERENCE = "*"   # must_change entry: every buffer the reference changes from its fill


def _outputs(spec: dict) -> list[str]:
    """The buffers that must change from their initial fill: the zero-filled ones (outputs), and
    (CHANGED_BY_REFERENCE) every buffer the reference changes, such as an in-place update."""
    zeros = [a["name"] for a in spec["args"] if a["kind"] != "scalar" and a.get("init", "zeros") == "zeros"]
    return zeros + [CHANGED_BY_REFERENCE]


def _out_dtypes(spec: dict) -> list[str]:
    return [canon_dtype(a.get("dtype", "fp32")) for a in spec["args"] if a["kind"] != "scalar"
            and a.get("init", "zeros") == "zeros"] or [canon_dtype(a.get("dtype", "fp32")) for a in spec["args"]
                                                       if a["kind"] != "scalar"]


def _loop_extent(spec: dict) -> int:
    """The terms one output sums: an MMA loop's K (or attention's sequence length), else the
    launch's threads times 4 (the reduced launch's elements a thread: a float-atomic sum's terms)."""
    vals = {a["name"]: a.get("value") for a in spec["args"] if a["kind"] == "scalar"}
    k = vals.get("K") or vals.get("k") or vals.get("N_CTX")
    if isinstance(k, int):
        return k
    threads = 1
    for v in list(spec.get("grid", [1])) + list(spec.get("block", [1])):
        threads *= int(v)
    return 4 * threads


def _reference(producer: str, ptx: Path, kernel: str) -> str | None:
    from corpus_check import source_stem
    from corpus_refs import reference_for
    from gemm_refs import reference_for as gemm_for

    if reference_for(producer, source_stem(ptx), kernel) is not None:
        return "numpy (emulate/corpus_refs.py)"
    if gemm_for(kernel) is not None:
        return "numpy (emulate/gemm_refs.py)"
    return None


def _writes_nothing(path: str, kernel: str) -> str:
    return next((why for path_rx, rx, why in WRITES_NOTHING if re.search(path_rx, path) and re.fullmatch(rx, kernel)),
                "")


def _engine_reference(engine: str, ref: str | None) -> str:
    """What a (d) case's GPU output is held to: the engine's run and the numpy reference; where
    the engine rightly reports or refuses, the numpy reference alone, else the expected report
    (the GPU's output is then only checked for being written)."""
    if engine == "match":
        return "the CPU engine at the same launch" + (f" and {ref}" if ref else "")
    return ref or f"the engine's expected outcome ({engine}); GPU output checked for being written only"


def _engine_expect(path: str, kernel: str) -> tuple[str, str]:
    for path_rx, rx, what, why in ENGINE_EXPECT:
        if re.search(path_rx, path) and re.fullmatch(rx, kernel):
            return what, why
    return "match", ""


def _policy_fields(text: str, spec: dict, numpy_ref: str | None = None, launch: dict | None = None) -> dict:
    """Policy and bound at the launch the case runs (`launch`: reduced to REDUCED_CTAS CTAs)."""
    if launch and launch.get("kind") == "reduced":
        from corpus_check import small_launch

        spec = small_launch(spec, launch["ctas"])
    p = kernel_policy(text, _out_dtypes(spec), _loop_extent(spec))
    bound = p.bound() + (f"; against {numpy_ref}: its own stated bound" if numpy_ref else "")
    return dict(policy=p.policy, bound=bound, derivation=p.derivation, rtol=p.rtol, atol=p.atol,
                default_rtol=p.default_rtol, default_atol=p.default_atol)


def _sidecar_specs(ptx: Path, kernel: str | None) -> tuple[Path, list[dict]]:
    from ptx2py.launch.plan import sidecar_for

    side = sidecar_for(str(ptx))
    if side is None:
        raise ValueError(f"no launch sidecar for {ptx}")
    specs = [s for s in kernel_specs(json.loads(side.read_text())) if kernel in (None, s["kernel"])]
    return side, specs


# ------------------------------------------------------------------------------------- (a)
def round_trip_cases() -> list[Case]:
    out = []
    for rel, kernel in ROUND_TRIP:
        ptx = CORPUS / rel
        side, specs = _sidecar_specs(ptx, kernel)
        text = ptx.read_text()
        for spec in specs:
            name = spec["kernel"]
            stem = rel.split("/")[-1].removesuffix(".ptx") + (f":{name}" if kernel else "")
            ref = _reference(ptx.parent.name, ptx, name)
            launch = {"kind": "reduced", "ctas": REDUCED_CTAS}
            common = dict(part="a", target=_target(str(ptx)), kernel=name, sidecar=_rel(side), spec=spec,
                          launch=launch, reference=ref or "the CPU engine at the same launch",
                          must_change=_outputs(spec), quick=True,
                          **_policy_fields(kernel_text(text, name), spec, ref, launch))
            out.append(Case(id=f"a rt {stem}", source={"kind": "roundtrip", "ptx": _rel(ptx)},
                            expect_gpu="match", expect_engine=None if ref else "match",
                            why="PTX -> Python -> PTX of the corpus file", **common))
            out.append(Case(id=f"a rt {stem} [stores changed]", source={"kind": "mutant", "ptx": _rel(ptx)},
                            expect_gpu="differ", expect_engine=None if ref else "match",
                            why="the round trip with each global store's value changed: must not match",
                            **common))
    return out


# ------------------------------------------------------------------------------------- (b)
def worked_cases() -> list[Case]:
    side, (spec,) = _sidecar_specs(ROOT / WORKED_BASE, None)
    text = (ROOT / WORKED_BASE).read_text()
    pol = _policy_fields(kernel_text(text, spec["kernel"]), spec, "numpy A @ B^T (emulate.gallery.tolerance)")
    out = []
    for label, src in (("base", {"kind": "file", "ptx": WORKED_BASE}),
                       ("edited: wait_group 1 -> 0, arrive moved", {"kind": "file", "ptx": WORKED_EDITED})):
        out.append(Case(id=f"b worked {label}", part="b", target="sm_90a", kernel=spec["kernel"], source=src,
                        launch={"kind": "sidecar"}, sidecar=_rel(side), spec=spec,
                        reference="numpy A @ B^T (emulate/gallery.py check_output, its derived tolerance)",
                        expect_gpu="match", expect_engine=None, must_change=_outputs(spec), timed=True, quick=True,
                        why="docs/worked_example.md", **pol))
    return out


# ------------------------------------------------------------------------------------- (d)
def _pipeline_kernel(text: str, cc: int) -> list[str]:
    feats = features(text)
    return [f for f in feats if FEATURE_CC.get(f, 90) <= cc]


def engine_corpus_cases(targets: set, cc: int, device_target: str, only=None) -> list[Case]:
    """Every sidecar kernel of the engine targets (with their build variants), and every pipeline
    kernel for the device's own target."""
    from corpus_check import cases

    out, seen = [], set()
    sweeps = [(targets, False), ({device_target}, True)]
    for tset, pipeline_only in sweeps:
        for producer, ptx, spec in cases(tset, only):
            text = kernel_text(ptx.read_text(), spec["kernel"])
            feats = _pipeline_kernel(text, cc)
            if pipeline_only and not feats:
                continue
            if not pipeline_only and features(text) and any(FEATURE_CC.get(f, 90) > cc for f in features(text)):
                continue
            key = (_rel(ptx), spec["kernel"])
            if key in seen:
                continue
            seen.add(key)
            ref = _reference(producer, ptx, spec["kernel"])
            engine, why = _engine_expect(key[0], spec["kernel"])
            variant = ptx.name.count(".") > 2
            out.append(Case(
                id=f"d {key[0].removeprefix('corpus/ptx/')}::{spec['kernel'][:60]}", part="d", target=_target(key[0]),
                kernel=spec["kernel"], source={"kind": "file", "ptx": key[0]},
                launch={"kind": "reduced", "ctas": REDUCED_CTAS}, sidecar=producer, spec=spec,
                reference=_engine_reference(engine, ref),
                expect_gpu="match" if engine == "match" or ref else "any", expect_engine=engine,
                must_change=_outputs(spec), writes_nothing=_writes_nothing(key[0], spec["kernel"]),
                quick=bool(feats) or not variant,
                why=("pipeline: " + ", ".join(feats)) if feats else why,
                **_policy_fields(text, spec, ref, {"kind": "reduced", "ctas": REDUCED_CTAS})))
    return out


def worked_edit_cases() -> list[Case]:
    side, (spec,) = _sidecar_specs(ROOT / WORKED_BASE, None)
    text = (ROOT / WORKED_BASE).read_text()
    m, n, k = WORKED_MNK
    from gallery import matmul_launch

    pol = _policy_fields(kernel_text(text, spec["kernel"]), matmul_launch(m, n, k),
                         "numpy A @ B^T (emulate.gallery.tolerance)")
    out = []
    for edit, (gpu, engine) in WORKED_EDITS.items():
        out.append(Case(
            id=f"d worked {edit}", part="d", target="sm_90a", kernel=spec["kernel"],
            source={"kind": "worked-edit", "edit": edit}, launch={"kind": "matmul", "m": m, "n": n, "k": k},
            sidecar=_rel(side), spec=spec, reference="numpy A @ B^T (emulate/gallery.py), and the CPU engine beside it",
            expect_gpu=gpu, expect_engine=engine, must_change=_outputs(spec), quick=True,
            why="the worked example's " + ("kernel" if edit == "unedited" else "edit " + edit), **pol))
    return out


# ------------------------------------------------------------------------------------- the plan
def device_target(cc: int) -> str:
    return f"sm_{cc}a" if cc in (90, 100) else f"sm_{cc}"


def build_plan(cc: int = 90, engine_targets=("sm_80",), quick: bool = False, parts: str = "abcd",
               only=None, ir_cases=None) -> list[Case]:
    """Every case for a device of compute capability `cc` (90: an H100/H200); `ir_cases(target)`
    gives part (c) (ir_cases below)."""
    target = device_target(cc)
    todo: list[Case] = []
    if "a" in parts and cc == 90:      # the round-trip kernels are sm_90a builds
        todo += round_trip_cases()
    if "b" in parts and cc == 90:
        todo += worked_cases()
    if "c" in parts and ir_cases is not None:
        todo += ir_cases(target)
    if "d" in parts:
        todo += engine_corpus_cases(set(engine_targets), cc, target, only)
        if cc == 90:
            todo += worked_edit_cases()
    if quick:
        todo = [c for c in todo if c.quick]
    if only:
        todo = [c for c in todo if any(o in c.id for o in only.split(","))]
    for c in todo:
        c.estimate_s = GPU_SECONDS[c.part]
    return todo


def plan_problems(cases: list[Case]) -> list[str]:
    """What makes a plan unable to give a true answer: a case compared only with itself, one
    without a reference, a float case without a policy, duplicate ids."""
    bad = []
    ids = [c.id for c in cases]
    bad += [f"duplicate case id {i}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for c in cases:
        if not c.reference:
            bad.append(f"{c.id}: no reference")
        if c.reference.startswith(("the GPU", "itself")) or "same PTX on the GPU" in c.reference:
            bad.append(f"{c.id}: compared only with itself")
        if c.policy not in ("exact-int", "bitwise", "bounded"):
            bad.append(f"{c.id}: no comparison policy")
        if c.policy == "bounded" and not (c.rtol or c.atol):
            bad.append(f"{c.id}: bounded without a bound")
        if not c.must_change and c.expect_gpu != "any" and not c.writes_nothing:
            bad.append(f"{c.id}: no output buffer to check")
    return bad


# ---------------------------------------------------------------- the GPU suite's part (c)
def ir_cases(target: str) -> list:
    """Part (c) of scripts/gpu_suite.py: every problem at its test and full sizes, against its
    numpy reference within its stated tolerance; run by ptx2py.kernelir.gpu_check."""
    from ptx2py.kernelir import PROBLEM_NAMES, load_problem

    out = []
    for name in PROBLEM_NAMES:
        kernel, meta = load_problem(name)
        floats = [b.dtype for b in kernel.buffers if b.role != "input" and b.dtype in ("f32", "f16", "bf16")]
        for sizes in ("test", "full"):
            out.append(Case(
                id=f"c ir {name} [{sizes}]", part="c", target=target, kernel=kernel.name,
                source={"kind": "ir", "problem": name, "runner": "ptx2py.kernelir.gpu_check"},
                launch={"kind": "ir", "sizes": sizes}, reference="numpy (kernelir/problems/reference.py)",
                policy="bounded" if floats else "exact-int",
                bound=f"rtol {meta['rtol']:g} atol {meta['atol']:g}" if floats else "exact",
                derivation="the problem's stated tolerance (kernelir/problems/*.json)",
                rtol=float(meta["rtol"]), atol=float(meta["atol"]), default_rtol=float(meta["rtol"]),
                default_atol=float(meta["atol"]),
                expect_gpu="match", expect_engine=None,
                must_change=[b.name for b in kernel.buffers if b.role == "output"], quick=sizes == "test"))
    return out
