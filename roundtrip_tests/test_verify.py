"""verify: assemble base and edited PTX with ptxas, compare ptxas -v figures and SASS."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import CORPUS, ROOT, needs
from verify import sass as verify

PTXAS = verify.find_ptxas((8, 0))[0]
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="no ptxas found")

KERNELS = ["triton/add_bf16_sm80.ptx", "nvcc/atomics.sm_90a.ptx", "nvcc/stencil.sm_100a.ptx",
           "nvcc/tcgen05_sm100.sm_100a.ptx"]


def _cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), "verify", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_release_to_ptx_isa():
    assert verify.ptx_isa_for_release((13, 0)) == (9, 0)
    assert verify.ptx_isa_for_release((12, 9)) == (8, 8)
    assert verify.ptx_isa_for_release((12, 4)) == (8, 4)


def test_parse_ptxas_info():
    text = ("ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
            "ptxas info    : Function properties for k\n"
            "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
            "ptxas info    : Used 29 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n")
    k = verify.parse_ptxas_info(text)["k"]
    assert (k["registers"], k["stack"], k["spill_stores"], k["spill_loads"], k["smem"], k["barriers"]) == \
        (29, 8, 4, 4, 1024, 1)


def test_parse_sass():
    text = ("\t\tFunction : k\n        /*0000*/                   MOV R1, c[0x0][0x28] ;\n"
            "        /*0010*/              @!P0 BRA 0x40 ;\n        /*0020*/                   LDG.E.128 R4, [R2.64] ;\n")
    assert verify.parse_sass(text) == {"k": ["MOV R1, c[0x0][0x28]", "@!P0 BRA 0x40", "LDG.E.128 R4, [R2.64]"]}
    assert verify._mix(verify.parse_sass(text)["k"]) == {"MOV": 1, "BRA": 1, "LDG": 1}


def test_an_operand_change_is_a_sass_difference():
    base = ["MOV R1, R2", "WARPGROUP.DEPBAR.LE gsb0, 0x1", "EXIT"]
    edited = ["MOV R1, R2", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"]
    assert verify._changed_instructions(base, edited) == [
        "- WARPGROUP.DEPBAR.LE gsb0, 0x1", "+ WARPGROUP.DEPBAR.LE gsb0, 0x0"]


@needs_ptxas
@needs(CORPUS)
@pytest.mark.parametrize("rel", KERNELS)
def test_kernel_against_itself(rel):
    path = CORPUS / rel
    if not path.exists():
        pytest.skip(f"{rel} not in the corpus")
    report = verify.verify_files(str(path), str(path))
    assert report["ok"] and report["exit"] == 0
    assert report["identical_figures"] and report["identical_cubin"]
    assert report["identical_sass"] in (True, None)
    assert report["kernels"]


@needs_ptxas
@needs(CORPUS)
def test_hand_edit_is_reported(tmp_path):
    base = CORPUS / "nvcc/atomics.sm_90a.ptx"
    text = base.read_text()
    edited, n = re.subn(r"\badd\.s32(\s+)(%r\d+), (%r\d+), (%r\d+);", r"mul.lo.s32\1\2, \3, \4;", text, count=1)
    assert n == 1
    path = tmp_path / "edited.ptx"
    path.write_text(edited)
    report = verify.verify_files(str(base), str(path))
    assert report["ok"]
    assert not report["identical_cubin"]
    assert report["identical_sass"] in (False, None)
    out = verify.format_report(report)
    assert "SASS differs" in out or "cubin differs" in out


@needs_ptxas
@needs(CORPUS)
def test_edit_that_does_not_assemble(tmp_path):
    base = CORPUS / "triton/add_bf16_sm80.ptx"
    lines = base.read_text().splitlines(keepends=True)
    i = next(n for n, l in enumerate(lines) if l.strip().startswith("ret;"))
    lines.insert(i, "\twgmma.fence.sync.aligned;\n")      # not on sm_80
    path = tmp_path / "bad.ptx"
    path.write_text("".join(lines))
    r = _cli(str(base), str(path))
    assert r.returncode == 1
    assert f"{path}:{i + 1}: error:" in r.stderr


@needs_ptxas
@needs(CORPUS)
def test_cli_json_and_python_input(tmp_path):
    from transpile import ptx_to_python

    base = CORPUS / "triton/add_bf16_sm80.ptx"
    py = tmp_path / "k.py"
    py.write_text(ptx_to_python(base.read_text(), filename=str(base)))
    out = tmp_path / "r.json"
    r = _cli(str(base), str(py), "--json", str(out))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["identical_figures"] and data["ptxas"]
    assert "identical" in r.stdout


@needs_ptxas
@needs(CORPUS)
def test_run_skips_cleanly_without_gpu(tmp_path):
    from verify import gpu_run

    base = CORPUS / "triton/add_bf16_sm80.ptx"
    res = gpu_run.run_pair(str(base), base.read_text())
    if res["status"] == "skipped":
        assert res["message"].startswith("--run skipped:")
    else:
        assert res["status"] == "match"


@needs_ptxas
@needs(CORPUS)
def test_python_edit_error_maps_to_python_line(tmp_path):
    from transpile import ptx_to_python

    base = CORPUS / "triton/add_bf16_sm80.ptx"
    lines = ptx_to_python(base.read_text(), filename=str(base)).splitlines()
    i = next(n for n, l in enumerate(lines) if l.strip() == "ptx.ret()")
    lines.insert(i, lines[i].replace("ptx.ret()", "ptx.wgmma.fence.sync.aligned()"))
    py = tmp_path / "bad.py"
    py.write_text("\n".join(lines) + "\n")
    r = _cli(str(base), str(py))
    assert r.returncode == 1
    assert f"{py}:{i + 1}: error:" in r.stderr, r.stderr


@needs_ptxas
@needs(CORPUS)
def test_module_calling_external_functions_is_assembled_relocatable():
    path = CORPUS / "nvcc" / "rdc_main.sm_80.rdc.ptx"
    if not path.exists():
        pytest.skip("rdc_main.sm_80.rdc.ptx not in the corpus")
    report = verify.verify_files(str(path), str(path))
    assert report["ok"] and report["identical_figures"] and "relocatable" in report["mode"]
