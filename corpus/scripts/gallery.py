"""The worked example on the CPU engine: the Triton sm_90a fp16 TMA+WGMMA matmul at a reduced
size, its `wgmma.wait_group 1 -> 0` edit, and a gallery of broken pipeline edits, each made in
the sugar Python and expected to give a wrong result or a report that points at the Python line.

    from gallery import run_case, EDITS          # corpus/scripts on sys.path
    from ptx2py.verify.report import python_to_ptx_traced
    run_case(sugar_python, EDITS["no-mbarrier-wait"], python_to_ptx_traced)
"""

from __future__ import annotations

import copy
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BASE_PTX = ROOT / "corpus" / "ptx" / "triton" / "matmul_tma_fp16_sm90.ptx"
SIDECAR = ROOT / "corpus" / "launch" / "triton" / "matmul_tma_fp16_sm90.json"
F16_ULP_AT_1 = 2.0 ** -10


def matmul_launch(m: int, n: int, k: int, sidecar: Path = SIDECAR) -> dict:
    """The sidecar's launch for an (m, n, k) problem: C[m, n] = A[m, k] @ B[n, k]^T, one CTA per
    128x128 tile (BM = BN = 128, BK = 64 are the kernel's constexprs; the Triton TMA matmul
    sidecars of other targets have the same arguments)."""
    if m % 128 or n % 128 or k % 64:
        raise ValueError("m, n must be multiples of 128 and k of 64 (the kernel's tile)")
    spec = copy.deepcopy(json.loads(Path(sidecar).read_text()))
    shapes = {"a_desc": [m, k], "b_desc": [n, k], "c_desc": [m, n]}
    for a in spec["args"]:
        if a["name"] in shapes:
            a["shape"], a["strides"] = shapes[a["name"]], [shapes[a["name"]][1], 1]
            a["count"] = int(np.prod(a["shape"]))
        elif a["name"] in ("M", "N", "K"):
            a["value"] = {"M": m, "N": n, "K": k}[a["name"]]
    spec["grid"] = [m // 128, n // 128, 1]
    return spec


def tolerance(a: np.ndarray, b: np.ndarray, k_step: int = 16, out_ulp: float = F16_ULP_AT_1) -> np.ndarray:
    """Per-element bound on |engine - exact| for the output: the engine rounds to f32 once per
    MMA instruction (K/k_step roundings of partial sums, each <= 2**-24 * sum|a*b|), then to the
    output type (half its ulp, `out_ulp` at 1.0); a GPU's order may differ by as much again, so
    twice that."""
    mag = np.abs(a) @ np.abs(b).T
    steps = max(a.shape[1] // k_step, 1)
    exact = a @ b.T
    half_ulp = np.maximum(np.abs(exact), 2.0 ** -14) * out_ulp / 2
    return 2 * (steps * 2.0 ** -24 * mag + half_ulp) + 2.0 ** -24


STORAGE = {"fp16": ".f16", "bf16": ".bf16", "fp8e4nv": ".e4m3", "fp8e5": ".e5m2", "fp32": None}


def host_values(data: np.ndarray, dtype: str) -> np.ndarray:
    """A buffer in its storage dtype (bf16 and fp8 as raw bits) -> float64."""
    from ptx2py.emulate.semantics.wgmma import element_values
    from ptx2py.launch.plan import canon_dtype

    ty = STORAGE.get(canon_dtype(dtype))
    if ty is None or ty == ".f16":
        return data.astype(np.float64)
    return element_values(np.ascontiguousarray(data).view(np.uint8).reshape(data.size, -1), ty)


def check_output(outputs: dict, m: int, n: int, k: int, dtypes: dict | None = None) -> dict:
    """The engine's C against numpy's A @ B^T within `tolerance` (inputs and output decoded from
    their storage dtypes: fp16 unless `dtypes` names others)."""
    dt = {"a_desc": "fp16", "b_desc": "fp16", "c_desc": "fp16", **(dtypes or {})}
    a = host_values(outputs["a_desc"], dt["a_desc"]).reshape(m, k)
    b = host_values(outputs["b_desc"], dt["b_desc"]).reshape(n, k)
    c = host_values(outputs["c_desc"], dt["c_desc"]).reshape(m, n)
    err = np.abs(c - a @ b.T)
    out_ulp = {"fp16": 2.0 ** -10, "bf16": 2.0 ** -7}.get(dt["c_desc"], 2.0 ** -23)
    bad = err > tolerance(a, b, out_ulp=out_ulp)
    return {"max_abs_err": float(err.max()), "mismatches": int(bad.sum()), "elements": int(bad.size),
            "ok": not bad.any()}


@dataclass
class Edit:
    name: str
    what: str
    find: str            # a line of the sugar Python (stripped) ...
    action: str          # "delete" | "replace" | "move-before"
    arg: str = ""        # the replacement line, or the (stripped) line to move it before


EDITS = {e.name: e for e in (
    Edit("wait-group-0", "wgmma.wait_group 1 -> 0 (the documented edit: must not change the result)",
         "at(265, 15).wgmma.wait_group.sync.aligned(1)", "replace",
         "at(265, 15).wgmma.wait_group.sync.aligned(0)"),
    Edit("no-mbarrier-wait", "the main loop's mbarrier wait removed",
         "mbarrier_wait([bar_3], phase, loc=(1, 264, 5), at=(1, 265, 5))", "delete"),
    Edit("no-wgmma-wait", "the main loop's wgmma.wait_group removed",
         "at(265, 15).wgmma.wait_group.sync.aligned(1)", "delete"),
    Edit("release-before-wait", "the stage release (the refill's expect_tx arrive and TMA loads) "
         "moved before the wgmma wait",
         "at(265, 15).wgmma.wait_group.sync.aligned(1)", "move-before",
         "at(261, 5).add.s32(iv, iv, 64)"),
    Edit("tma-coord-off-by-one-tile", "the second stage's TMA K coordinate off by one tile (64 -> 128)",
         "at(261, 5).mov.b32(k_19 := r[13], 64)", "replace",
         "at(261, 5).mov.b32(k_19 := r[13], 128)"),
    Edit("no-epilogue-fence", "the epilogue's fence.proxy.async removed",
         "ptx.fence.proxy.async_.shared__cta()", "delete"),
)}


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _unit(lines: list, i: int) -> tuple[int, int]:
    """The lines a statement stands in: its own, or with its `with ...:` header when it is that
    block's only statement (`with asm():` around one instruction), so a move takes the bracket."""
    if i > 0 and lines[i - 1].strip().startswith("with ") and lines[i - 1].rstrip().endswith(":") \
            and len(_indent(lines[i - 1])) < len(_indent(lines[i])) \
            and (i + 1 >= len(lines) or len(_indent(lines[i + 1])) <= len(_indent(lines[i - 1]))):
        return i - 1, i + 1
    return i, i + 1


def apply_edit(source: str, edit: Edit) -> tuple[str, int]:
    """The edited Python and the (1-based) line of the edit in it."""
    lines = source.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.strip() == edit.find]
    if len(hits) != 1:
        raise ValueError(f"{edit.name}: expected one line {edit.find!r}, found {len(hits)}")
    i = hits[0]
    if edit.action == "replace":
        lines[i] = _indent(lines[i]) + edit.arg + "\n"
        return "".join(lines), i + 1
    start, end = _unit(lines, i)
    moved = lines[start:end]
    del lines[start:end]
    if edit.action == "delete":
        return "".join(lines), start + 1
    j = next(n for n, line in enumerate(lines) if line.strip() == edit.arg)
    base, target = len(_indent(moved[0])), _indent(lines[j])
    lines[j:j] = [target + " " * (len(_indent(m)) - base) + m.strip() + "\n" for m in moved]
    return "".join(lines), j + 1


def run_python(source: str, spec: dict, trace, py_name: str = "matmul_edited.py", **kw):
    """Run a sugar-Python kernel on the engine: (Result, [report lines at Python lines]).
    ``trace(source, filename) -> (ptx, {ptx line: python line})`` compiles it (the tools layer's
    verify.report.python_to_ptx_traced; the engine does not import the tools above it)."""
    from ptx2py.emulate.frontend import run

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / py_name
        path.write_text(source)
        ptx, line_map = trace(source, str(path))
    ptx_name = py_name.replace(".py", ".ptx")
    res = run(ptx, spec, filename=ptx_name, **kw)
    lines = [r.at_python(line_map, ptx_name, py_name).render() for r in res.reports]
    return res, lines


def run_case(sugar: str, edit: Edit | None, trace, m: int = 128, n: int = 128, k: int = 256, **kw) -> dict:
    """One gallery row: the edit, the engine's reports (at Python lines) and the output check."""
    source, line = (sugar, None) if edit is None else apply_edit(sugar, edit)
    res, reports = run_python(source, matmul_launch(m, n, k), trace, **kw)
    return {"edit": edit.name if edit else "unedited", "what": edit.what if edit else "the kernel as compiled",
            "line": line, "reports": reports, "check": check_output(res.outputs, m, n, k),
            "seconds": res.stats["seconds"]}
