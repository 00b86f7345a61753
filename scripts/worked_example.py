#!/usr/bin/env python3
"""The worked example of the headline workflow, regenerated so it stays true.

Triton sm_90a fp16 matmul (TMA + WGMMA) -> `ptx2py --sugar` -> two edits to its
WGMMA pipeline in the Python -> `py2ptx` -> `ptx2py verify` (ptxas + SASS diff, HTML page) ->
and, where a GPU is available, `ptx2py verify --run` (outputs and timings).

    python scripts/worked_example.py            # writes examples/worked_matmul/ and docs/worked_example.md
    python scripts/worked_example.py --cpu-only # rewrites only the CPU engine section of the doc

The edits: the K loop issues four wgmma per stage, commits them as a group and
then waits with `wgmma.wait_group 1`, keeping one group in flight while the
next TMA loads land. Edit 1 waits with 0 instead: every group retires before
the loop goes on. Edit 2 moves the `mbarrier.arrive.expect_tx` that announces
the next stage's bytes to after the first TMA load of that stage. Results must
not change; the schedule (and speed) may.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "corpus" / "scripts"))   # the corpus checks: corpus_check, its references, gallery

from ptx2py import (  # noqa: E402
    ptx_to_python,
    ptxgrammar,  # noqa: E402
    python_to_ptx,
)
from ptx2py.verify.html import page_sources, write_html  # noqa: E402
from ptx2py.verify.report import format_report, verify_files  # noqa: E402

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


ARRIVE = ("mbarrier_arrive.expect_tx", "asm.mbarrier_arrive.expect_tx")  # one spelling; older sugar bracketed it
TMA_LOAD = ("tma_load(", "cp_async_bulk_tensor", "ptx.cp.async_.bulk.tensor",  # alias, typed, or the plain chain
            "asm.cp_async_bulk_tensor", "asm.cp.async_.bulk.tensor")


def _statement_end(lines: list[str], start: int) -> int:
    """Index of the last line of the call that starts at `start` (black puts a lone `)` at its indent)."""
    if lines[start].rstrip().endswith(")"):
        return start
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while not (lines[end].strip() == ")" and len(lines[end]) - len(lines[end].lstrip()) == indent):
        end += 1
    return end


def _loop_lines(source: str) -> tuple[int, int]:
    """(first, end) line indexes of the K loop: the outermost `with loop(...)` block."""
    import ast

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.With) and ast.unparse(node.items[0].context_expr).startswith("loop("):
            return node.lineno - 1, node.end_lineno
    raise SystemExit("no raised K loop (`with loop(...)`) in the sugar Python")


def move_arrive(source: str) -> tuple[str, int]:
    """Move the K loop's `mbarrier.arrive.expect_tx` (announcing the next stage's TMA bytes) to
    after the first TMA load it covers (across a `bar.sync`); returns (source, new line number)."""
    lines = source.splitlines(keepends=True)
    first, last = _loop_lines(source)   # the prologue's arrives (before the loop) stay
    hits = [i for i, line in enumerate(lines) if line.strip().startswith(ARRIVE) and first <= i < last]
    if len(hits) != 1:
        raise SystemExit(f"expected exactly one {ARRIVE[0]} call in the loop, found {len(hits)}")
    start = hits[0]
    end = _statement_end(lines, start)
    block = lines[start:end + 1]
    del lines[start:end + 1]
    load = next(i for i in range(start, len(lines)) if lines[i].strip().startswith(TMA_LOAD))
    at = _statement_end(lines, load) + 1
    lines[at:at] = block
    return "".join(lines), at + 1


def gpu_section(base_path: Path, edited_ptx: str) -> str:
    try:
        from ptx2py.verify.gpu_run import run_pair
    except ImportError as e:
        return f"GPU run not possible here: {e}\n"
    result = run_pair(str(base_path), edited_ptx)
    return "```\n" + json.dumps(result, indent=1) + "\n```\n"


CPU_HEADING = "6. On the CPU engine (no GPU needed)"


def cpu_section(sugar: str) -> str:
    """Section 6: the kernel, its edit and the gallery of broken edits run on emulate/ at a
    reduced size (corpus/scripts/gallery.py; tests in roundtrip_tests/test_emulate_pipelines_worked.py)."""
    import numpy as np
    from gallery import EDITS, apply_edit, check_output, matmul_launch, run_case, run_python

    from ptx2py.verify.report import python_to_ptx_traced as trace

    m, n, k = 256, 256, 128
    spec = matmul_launch(m, n, k)
    base, base_reports = run_python(sugar, spec, trace)
    edited, edited_reports = run_python(apply_edit(sugar, EDITS["wait-group-0"])[0], spec, trace)
    same = all(np.array_equal(base.outputs[b].view(np.uint8), edited.outputs[b].view(np.uint8))
               for b in base.outputs)
    chk = check_output(base.outputs, m, n, k)
    rows = []
    for name, edit in EDITS.items():
        if name == "wait-group-0":
            continue
        r = run_case(sugar, edit, trace)
        first = r["reports"][0] if r["reports"] else "(no report)"
        verdict = "wrong output" if not r["check"]["ok"] else "output still matches"
        rows.append(f"- **{edit.what}** (Python line {r['line']}): {verdict} "
                    f"({r['check']['mismatches']} of {r['check']['elements']} elements off), "
                    f"{len(r['reports'])} report(s); first:\n\n  ```\n  {first}\n  ```")
    return f"""{CPU_HEADING}

`run_python` (corpus/scripts/gallery.py) compiles the sugar Python, runs it on the CPU engine (`emulate/`:
TMA loads land when a wait observes their mbarrier phase, wgmma accumulators are written at the
`wait_group` that covers them) and maps every report back to the Python line. At M=N={m}, K={k}
({spec['grid'][0] * spec['grid'][1]} CTAs of 256 threads):

- unedited: {len(base_reports)} reports, matches `numpy` (A @ B^T in float64) within the derived
  tolerance (`tolerance` in corpus/scripts/gallery.py: one f32 rounding per wgmma k16 step, then f16): max abs
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
    waited, line = edit_wait_group(sugar)
    edited_py, arrive_line = move_arrive(waited)
    edited_ptx = python_to_ptx(edited_py, filename="matmul_edited.py")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "matmul_sugar.py").write_text(sugar)
    (OUT / "matmul_edited.py").write_text(edited_py)
    (OUT / "matmul_edited.ptx").write_text(edited_ptx)
    os.chdir(ROOT)      # the report names files as a user in the repository root would
    edited_rel = "examples/worked_matmul/matmul_edited.py"
    report = verify_files(str(BASE.relative_to(ROOT)), edited_rel)
    sources = page_sources(report["base"], edited_rel, report.pop("edited_ptx"), report.pop("line_map"))
    # the tool paths are this machine's: name the virtual environment, not its location
    report = json.loads(json.dumps(report, default=str).replace(sys.prefix, "<venv>"))
    (OUT / "verify.json").write_text(json.dumps(report, indent=1, default=str))
    write_html(report, OUT / "verify.html", sources)
    first_lines = format_report(report).splitlines()[:3]
    if not any("WARPGROUP.DEPBAR.LE gsb0, 0x1 -> 0x0" in x for x in first_lines):
        raise SystemExit("verify's first lines do not show the DEPBAR change:\n" + "\n".join(first_lines))
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
2. Two edits at once: at line {line} of the Python, wait for every WGMMA group (`wait_group 0`)
   instead of keeping one group in flight (`wait_group 1`); and move the loop's
   `mbarrier_arrive.expect_tx` to after the stage's first TMA load (now at line {arrive_line}):

```diff
{py_diff}```

3. `py2ptx examples/worked_matmul/matmul_edited.py -o examples/worked_matmul/matmul_edited.ptx`
   changes one PTX token and moves one PTX instruction:

```diff
{ptx_diff}```

4. `ptx2py verify {BASE.relative_to(ROOT)} {edited_rel} --html examples/worked_matmul/verify.html`
   (the changed instruction first, then moved ones, then a count of register renames; `--context 3`
   or `--full` print the aligned diff, `--json` carries all of it; the page links SASS, PTX and Python side by side):

```
{format_report(report)}
```

5. On a GPU: `ptx2py verify {BASE.relative_to(ROOT)} examples/worked_matmul/matmul_edited.py --run gpu`
   launches both kernels with the same seeded inputs (launch description:
   `corpus/launch/triton/{BASE.stem}.json`), compares the output buffer bit for bit and times both.
   Result of the last regeneration:

{gpu_section(BASE, edited_ptx)}
{cpu_section(sugar)}""")
    print(f"wrote {DOC.relative_to(ROOT)} and {OUT.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
