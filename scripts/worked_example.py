#!/usr/bin/env python3
"""The worked example of the headline workflow, regenerated so it stays true.

Triton sm_90a fp16 matmul (TMA + WGMMA) -> `ptx2py --sugar` -> one edit to its
WGMMA pipeline in the Python -> `py2ptx` -> `ptx2py verify` (ptxas + SASS) ->
and, where a GPU is available, `ptx2py verify --run` (outputs and timings).

    python scripts/worked_example.py            # writes examples/worked_matmul/ and docs/worked_example.md
    python scripts/worked_example.py --cpu-only # rewrites only the CPU engine section of the doc

The edit: the K loop issues four wgmma per stage, commits them as a group and
then waits with `wgmma.wait_group 1`, keeping one group in flight while the
next TMA loads land. The edit waits with 0 instead: every group retires before
the loop goes on. Results must not change; the schedule (and speed) may.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ptxgrammar  # noqa: E402
from transpile import ptx_to_python, python_to_ptx  # noqa: E402
from verify.sass import format_report, verify_texts  # noqa: E402

BASE = ROOT / "corpus" / "ptx" / "triton" / "matmul_tma_fp16_sm90.ptx"
OUT = ROOT / "examples" / "worked_matmul"
DOC = ROOT / "docs" / "worked_example.md"
WAIT_ONE = re.compile(r"wait_group\b.*?(?:\(\s*|pending=)(1)(?=\s*[,)])")


def edit_wait_group(source: str) -> tuple[str, int]:
    """Turn the one `wait_group ... 1` call into `... 0`; returns (source, line number)."""
    lines = source.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if WAIT_ONE.search(line)]
    if len(hits) != 1:
        raise SystemExit(f"expected exactly one wgmma wait_group(1) call, found {len(hits)}")
    i = hits[0]
    m = WAIT_ONE.search(lines[i])
    lines[i] = lines[i][: m.start(1)] + "0" + lines[i][m.end(1):]
    return "".join(lines), i + 1


def gpu_section(base_path: Path, edited_ptx: str) -> str:
    try:
        from verify.gpu_run import run_pair
    except ImportError as e:
        return f"GPU run not possible here: {e}\n"
    result = run_pair(str(base_path), edited_ptx)
    return "```\n" + json.dumps(result, indent=1) + "\n```\n"


CPU_HEADING = "6. On the CPU engine (no GPU needed)"


def cpu_section(sugar: str) -> str:
    """Section 6: the kernel, its edit and the gallery of broken edits run on emulate/ at a
    reduced size (emulate/gallery.py; tests in roundtrip_tests/test_emulate_pipelines_worked.py)."""
    import numpy as np

    from emulate.gallery import EDITS, apply_edit, check_output, matmul_launch, run_case, run_python

    m, n, k = 256, 256, 128
    spec = matmul_launch(m, n, k)
    base, base_reports = run_python(sugar, spec)
    edited, edited_reports = run_python(apply_edit(sugar, EDITS["wait-group-0"])[0], spec)
    same = all(np.array_equal(base.outputs[b].view(np.uint8), edited.outputs[b].view(np.uint8))
               for b in base.outputs)
    chk = check_output(base.outputs, m, n, k)
    rows = []
    for name, edit in EDITS.items():
        if name == "wait-group-0":
            continue
        r = run_case(sugar, edit)
        first = r["reports"][0] if r["reports"] else "(no report)"
        verdict = "wrong output" if not r["check"]["ok"] else "output still matches"
        rows.append(f"- **{edit.what}** (Python line {r['line']}): {verdict} "
                    f"({r['check']['mismatches']} of {r['check']['elements']} elements off), "
                    f"{len(r['reports'])} report(s); first:\n\n  ```\n  {first}\n  ```")
    return f"""{CPU_HEADING}

`emulate.gallery.run_python` compiles the sugar Python, runs it on the CPU engine (`emulate/`:
TMA loads land when a wait observes their mbarrier phase, wgmma accumulators are written at the
`wait_group` that covers them) and maps every report back to the Python line. At M=N={m}, K={k}
({spec['grid'][0] * spec['grid'][1]} CTAs of 256 threads):

- unedited: {len(base_reports)} reports, matches `numpy` (A @ B^T in float64) within the derived
  tolerance (`emulate.gallery.tolerance`: one f32 rounding per wgmma k16 step, then f16): max abs
  error {chk['max_abs_err']:.4g}, {chk['mismatches']} of {chk['elements']} elements outside it
  ({base.stats['seconds']:.1f} s, {base.stats['thread_instructions_per_second']:.3g} thread-instructions/s);
- the `wait_group 1 -> 0` edit: {len(edited_reports)} reports, outputs {'bit-identical' if same else 'DIFFERENT'}.

Broken edits (M=N=128, K=256: four K tiles through three stages, so stage reuse happens):

""" + "\n".join(rows) + "\n"


def main() -> None:
    if "--cpu-only" in sys.argv:        # regenerate section 6 only (no ptxas/GPU needed)
        sugar = (OUT / "matmul_sugar.py").read_text()
        text = DOC.read_text()
        head = text.split(CPU_HEADING)[0].rstrip("\n") + "\n\n"
        DOC.write_text(head + cpu_section(sugar))
        print(f"wrote section 6 of {DOC.relative_to(ROOT)}")
        return
    base_ptx = ptxgrammar.read_ptx(BASE)
    sugar = ptx_to_python(base_ptx, sugar=True, filename=str(BASE))
    assert python_to_ptx(sugar) == base_ptx, "the unedited sugar Python must give back the same bytes"
    edited_py, line = edit_wait_group(sugar)
    edited_ptx = python_to_ptx(edited_py, filename="matmul_edited.py")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "matmul_sugar.py").write_text(sugar)
    (OUT / "matmul_edited.py").write_text(edited_py)
    (OUT / "matmul_edited.ptx").write_text(edited_ptx)
    report = verify_texts(base_ptx, edited_ptx, base_name=str(BASE.relative_to(ROOT)),
                          edited_name="examples/worked_matmul/matmul_edited.ptx")
    (OUT / "verify.json").write_text(json.dumps(report, indent=1, default=str))
    py_diff = "".join(difflib.unified_diff(sugar.splitlines(True), edited_py.splitlines(True),
                                           "matmul_sugar.py", "matmul_edited.py", n=3))
    ptx_diff = "".join(difflib.unified_diff(base_ptx.splitlines(True), edited_ptx.splitlines(True),
                                            BASE.name, "matmul_edited.ptx", n=2))
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(f"""# Worked example: edit a Triton WGMMA pipeline in Python

Generated by `python scripts/worked_example.py`; do not edit by hand.

Input: `{BASE.relative_to(ROOT)}` (Triton 3.9, sm_90a, fp16 GEMM, 128x128x64 tiles, TMA loads,
mbarrier pipeline, `wgmma.mma_async.m64n128k16`).

1. `ptx2py {BASE.relative_to(ROOT)} --sugar -o examples/worked_matmul/matmul_sugar.py`
   ({len(sugar.splitlines())} lines of Python; `py2ptx` on it gives back the input bytes).
2. The edit, at line {line} of the Python: wait for every WGMMA group (`wait_group 0`) instead of
   keeping one group in flight (`wait_group 1`):

```diff
{py_diff}```

3. `py2ptx examples/worked_matmul/matmul_edited.py -o examples/worked_matmul/matmul_edited.ptx`
   changes exactly one PTX token:

```diff
{ptx_diff}```

4. `ptx2py verify {BASE.relative_to(ROOT)} examples/worked_matmul/matmul_edited.py`:

```
{format_report(report)}
```

5. On a GPU: `ptx2py verify --run {BASE.relative_to(ROOT)} examples/worked_matmul/matmul_edited.py`
   launches both kernels with the same seeded inputs (launch description:
   `corpus/launch/triton/{BASE.stem}.json`), compares the output buffer bit for bit and times both.
   Result of the last regeneration:

{gpu_section(BASE, edited_ptx)}
{cpu_section(sugar)}""")
    print(f"wrote {DOC.relative_to(ROOT)} and {OUT.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
