"""The ISA conformance suite: every instruction form of docs/emulate_coverage.md run THROUGH PTX
on the engine (operands loaded into registers of their width, 8-bit operands in 16-bit registers
with garbage high bits, and immediates written as literals: negative, out-of-range for the type,
hex float), against references computed without emulate (isa_conformance.py: Python integers,
exact rationals, float64 libm within the ISA's bound, the ISA's tables). One engine run per form
covers its cases (a thread each)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import isa_conformance as C
import numpy as np
import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "emulate_coverage.md"
FORMS = C.coverage_forms(DOC.read_text())


def _show(form, bad):
    lines = []
    for slot, case, got, want in bad[:5]:
        what = "register sources" if slot == 0 else (form.imms[slot - 1 - (form.extra is not None)][0]
                                                      if slot > (form.extra is not None) else "carry out")
        lines.append(f"  {what}: sources {[hex(v) for v in case]} -> {got:#x}, expected {want!r}")
    return "\n".join(lines)


def test_the_table_lists_every_form_of_the_coverage_page():
    assert len(FORMS) >= 200 and len(set(FORMS)) == len(FORMS)


@pytest.mark.parametrize("name", FORMS)
def test_form_matches_its_independent_reference_through_ptx(name):
    form = C.build(name, np.random.default_rng(C.RNG_SEED))
    assert form.cases, name
    bad, compared = C.run_form(form)
    assert not bad, f"{name}: {len(bad)} of {compared} results differ\n{_show(form, bad)}"


@pytest.mark.parametrize("seed", range(1, 9))
@pytest.mark.slow
def test_every_form_on_fresh_random_cases(seed):
    failures = []
    for name in FORMS:
        form = C.build(name, np.random.default_rng(1000 + seed))
        bad, _ = C.run_form(form)
        if bad:
            failures.append(f"{name}:\n{_show(form, bad)}")
    assert not failures, "\n".join(failures)


@pytest.mark.slow
def test_every_conformance_kernel_assembles_with_ptxas(tmp_path):
    """The kernels are PTX the ISA accepts (ptxas, not the engine, is the judge)."""
    from ptx2py.verify.tools import require_ptxas

    tool, _ = require_ptxas((8, 6))
    rejected = []
    for name in FORMS:
        src = tmp_path / "k.ptx"
        src.write_text(C.kernel(C.build(name, np.random.default_rng(C.RNG_SEED))))
        r = subprocess.run([tool.path, "-arch=sm_100a", str(src), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        if r.returncode:
            rejected.append(f"{name}: {r.stderr.strip()[:300]}")
    assert not rejected, "\n".join(rejected)
