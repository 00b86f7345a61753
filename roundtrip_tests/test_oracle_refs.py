"""The stored independent references of corpus/refs/ (corpus/scripts/make_oracle_refs.py: Triton's
interpreter, Pallas interpret mode, float64 numpy) and the sweep's verdicts (corpus_check.py):
the engine's runs of a few kernels against them, a manifest entry for every sidecar kernel, and
no verdict that counts agreement of the schedules as a pass."""
from pathlib import Path

import numpy as np
import oracle_refs
import pytest
from corpus_check import ROOT, VERDICTS, _verdict, cases, run_case, small_launch
from oracle_refs import ALL_TARGETS

from ptx2py.emulate.frontend import run, seeded_inputs

STORED = [
    ("corpus/ptx/triton/softmax_fp32_b1024_w4_sm80.ptx", "softmax_kernel", "triton-interpreter"),
    ("corpus/ptx/pallas/gelu_f16_sm80.ptx", "_gelu_kernel", "pallas-interpret"),
    ("corpus/ptx/triton/add_bf16_sm80.ptx", "add_kernel", "float64 numpy (float64_refs.py)"),
]


def _case(ptx: str, kernel: str):
    for _, path, spec in cases(ALL_TARGETS, Path(ptx).stem):
        if str(path.relative_to(ROOT)) == ptx and spec["kernel"] == kernel:
            return path, spec
    raise AssertionError(f"no sidecar for {ptx}::{kernel}")


def _engine_run(ptx: str, kernel: str, edit=lambda text: text):
    path, spec = _case(ptx, kernel)
    small = small_launch(spec, 2)
    text = edit(path.read_text())
    inputs = seeded_inputs(text, small)
    r = run(text, small, {k: v.copy() for k, v in inputs.items()}, schedule="inorder", filename=ptx)
    assert not r.reports, r.reports[0].render()
    return small, inputs, r.outputs


def _flip(data: np.ndarray, i: int, bit: int) -> None:
    bits = data.view(f"u{data.itemsize}")
    bits[i] ^= bits.dtype.type(1 << bit)


@pytest.mark.parametrize("ptx,kernel,oracle", STORED)
def test_engine_matches_the_stored_reference_and_a_changed_element_is_caught(ptx, kernel, oracle):
    ent = oracle_refs.entry(ptx, kernel)
    assert ent is not None and ent["oracle"] == oracle
    small, inputs, outputs = _engine_run(ptx, kernel)
    dtypes = {a["name"]: a.get("dtype") for a in small["args"]}
    assert oracle_refs.check(ent, inputs, outputs, dtypes) == []
    written = {n: idx for n, (idx, _) in oracle_refs.load(ent).items() if idx.size}
    assert written, "the reference writes nothing"
    name, idx = next(iter(written.items()))
    wrong = {k: v.copy() for k, v in outputs.items()}
    _flip(wrong[name], idx[0], 8 * wrong[name].itemsize - 2)          # a high exponent bit
    assert any(b.startswith(f"{name}[written]: 1 of ") for b in oracle_refs.check(ent, inputs, wrong, dtypes))
    untouched = {k: v.copy() for k, v in outputs.items()}
    spare = np.setdiff1d(np.arange(untouched[name].size), idx)[0]          # an element no program writes
    _flip(untouched[name], spare, 0)                                   # one ulp
    assert any(b.startswith(f"{name}[kept]: 1 of ") for b in oracle_refs.check(ent, inputs, untouched, dtypes))


def test_a_wrong_ptx_instruction_is_a_mismatch_against_the_stored_reference():
    """The engine's run of add_fp32 with the first of its 8 adds a thread turned into a subtract
    differs from the interpreter's reference at one element in 8 of the reduced n_elements = 1024
    (4 elements a thread of 2 CTAs x 128: all in CTA 0's BLOCK of 1024)."""
    ptx = "corpus/ptx/triton/add_fp32_sm80.ptx"
    small, inputs, outputs = _engine_run(ptx, "add_kernel", lambda t: t.replace("add.f32", "sub.f32", 1))
    dtypes = {a["name"]: a.get("dtype") for a in small["args"]}
    bad = oracle_refs.check(oracle_refs.entry(ptx, "add_kernel"), inputs, outputs, dtypes)
    assert len(bad) == 1 and bad[0].startswith("out_ptr[written]: 128 of 1024 differ"), bad


def test_numpy_reference_kernel_matches_through_the_sweep():
    ptx = "corpus/ptx/nvcc/elementwise.sm_80.ptx"
    path, spec = _case(ptx, "vector_add")
    assert oracle_refs.entry(ptx, "vector_add")["oracle"] == "numpy (corpus_refs.py)"
    res = run_case(path, spec, ctas=2, max_steps=400_000)
    assert res["status"] == "match" and res["references"] == ["numpy"], res


def test_manifest_covers_every_sidecar_kernel():
    """Every sidecar kernel of every target has an entry: a stored reference file, a numpy
    reference named, or oracle "none" with why."""
    kernels = oracle_refs.manifest()["kernels"]
    for producer, path, spec in cases(ALL_TARGETS, None):
        ent = kernels.get(oracle_refs.key(str(path.relative_to(ROOT)), spec["kernel"]))
        assert ent is not None, f"{path}::{spec['kernel']}"
        if ent["oracle"] == "none":
            assert ent["why"], ent
        elif producer in ("triton", "pallas"):
            assert (oracle_refs.REFS / ent["file"]).is_file() and ent["oracle_version"] and "seed" in ent
            assert set(ent["tolerance"]) == set(ent["buffers"])
        else:
            assert ent["oracle"].startswith("numpy"), ent


def test_every_triton_and_pallas_kernel_has_a_stored_reference():
    kernels = oracle_refs.manifest()["kernels"]
    missing = [k for k, e in kernels.items() if k.split("/")[2] in ("triton", "pallas") and "file" not in e]
    assert missing == []


def test_a_wrong_oracle_is_recorded_with_who_decided():
    """Triton 3.9's interpreter truncates fp32 -> bf16: add_bf16's stored reference is the float64
    one, and the manifest says the interpreter was wrong."""
    ent = oracle_refs.entry("corpus/ptx/triton/add_bf16_sm80.ptx", "add_kernel")
    assert ent["oracle_wrong"]["oracle"] == "triton-interpreter" and ent["oracle_wrong"]["buffers"] == ["out_ptr"]
    assert "bf16" in ent["oracle_wrong"]["why"]


def test_no_verdict_passes_on_schedule_agreement_alone():
    assert set(VERDICTS) == {"match", "refused", "unverified", "mismatch", "fail"}
    outs = [{"y": np.arange(4, dtype=np.float32)} for _ in range(3)]
    spec = {"grid": [1, 1, 1], "args": [{"name": "y", "dtype": "fp32"}]}
    text = ".visible .entry k()\n{\n\tret;\n}\n"
    assert _verdict(text, "k", spec, outs)["status"] == "unverified"
    assert _verdict(text, "k", spec, outs, references=["numpy"])["status"] == "match"
    outs[2] = {"y": np.arange(1, 5, dtype=np.float32)}
    assert _verdict(text, "k", spec, outs, references=["numpy"])["failure"] == "schedule-dependent"


def test_unverified_kernel_says_why():
    path, spec = _case("corpus/ptx/nvcc/printf_kernels.sm_80.ptx", "hello")
    res = run_case(path, spec, ctas=1, max_steps=400_000)
    assert res["status"] == "unverified" and "print" in res["why"], res


def test_fp8_and_bf16_decoding_follow_the_formats():
    """oracle_refs decodes storage bits itself (not through the engine): e4m3fn's largest finite
    value is 448 and S.1111.111 is NaN; e5m2 has infinities; bf16 is the top half of an f32."""
    e4, e5 = oracle_refs.FP8["fp8e4nv"], oracle_refs.FP8["fp8e5"]
    assert e4[0x7E] == 448.0 and np.isnan(e4[0x7F]) and e4[0x01] == 2.0 ** -9 and e4[0xB8] == -1.0
    assert e5[0x7B] == 57344.0 and e5[0x7C] == np.inf and np.isnan(e5[0x7D]) and e5[0x3C] == 1.0
    assert oracle_refs.values(np.array([0x3F80, 0xC040], np.uint16), "bf16").tolist() == [1.0, -3.0]
