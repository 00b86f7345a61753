"""The whole edit workflow on a Triton sm_90a kernel, as a user runs it: from-triton (named Python,
its PTX and launch sidecar) -> edit the Python -> py2ptx -> verify --run cpu --launch (the edit
matches the base on the CPU engine; a wrong edit does not) -> to-triton -> the program's own
`kernel[grid](...)` (Triton 3.9's override machinery, CPU-only driver) uses the edited PTX."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

triton = pytest.importorskip("triton")

from conftest import ROOT, needs_ptxas  # noqa: E402

from ptx2py.cli import ptx2py_main, py2ptx_main  # noqa: E402

KERNELS = ROOT / "corpus" / "src" / "triton" / "kernels.py"
N, BLOCK = 512, 256

PROGRAM = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from kernels import add_kernel
from ptx2py.tritonbridge.warmup import cpu_only_driver, tensor
with cpu_only_driver(90):  # the program's own compile path for an sm_90a device, minus the launch
    k = add_kernel.warmup(tensor("float32"), tensor("float32"), tensor("float32"), int(sys.argv[2]),
                          BLOCK=int(sys.argv[3]), grid=(1,))
print(json.dumps({"ptx": k.asm["ptx"]}))
"""


def _programs_ptx(override, cache) -> tuple[str, str]:
    env = dict(os.environ, TRITON_KERNEL_OVERRIDE="1", TRITON_OVERRIDE_DIR=str(override),
               TRITON_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", PROGRAM, str(KERNELS.parent), str(N), str(BLOCK)], env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout, json.loads(run.stdout.strip().splitlines()[-1])["ptx"]


@needs_ptxas
def test_from_triton_edit_py2ptx_verify_launch_to_triton_used_by_triton(tmp_path, capsys):
    py = tmp_path / "add.py"
    assert ptx2py_main(["from-triton", f"{KERNELS}::add_kernel", "--signature", "*fp32,*fp32,*fp32,i32",
                        "--constexprs", f"BLOCK={BLOCK}", "--arg", f"x_ptr={N}", "--arg", f"y_ptr={N}",
                        "--arg", f"out_ptr={N}:zeros", "--arg", f"n_elements={N}", "--grid", f"{N // BLOCK},1,1",
                        "--sugar", "-o", str(py)]) == 0
    base, side = py.with_suffix(".ptx"), py.with_suffix(".json")
    assert ".target sm_90a" in base.read_text()

    # the edit: the sum's operands swapped (the same value), and a wrong one (a difference)
    text = py.read_text()
    assert "ptx.add.f32(" in text
    first = text[text.index("ptx.add.f32("):text.index(")", text.index("ptx.add.f32(")) + 1]
    dst, a, b = first[len("ptx.add.f32("):-1].split(", ")
    edit, wrong = tmp_path / "add_edit.py", tmp_path / "add_wrong.py"
    edit.write_text(text.replace(first, f"ptx.add.f32({dst}, {b}, {a})", 1))
    wrong.write_text(text.replace(first, f"ptx.sub.f32({dst}, {a}, {b})", 1))
    edited_ptx = tmp_path / "add_edit.ptx"
    assert py2ptx_main([str(edit), "-o", str(edited_ptx)]) == 0
    assert edited_ptx.read_text() != base.read_text()

    capsys.readouterr()
    assert ptx2py_main(["verify", str(base), str(edit), "--run", "cpu", "--launch", str(side)]) == 0
    assert "CPU engine (match)" in capsys.readouterr().out
    assert ptx2py_main(["verify", str(base), str(wrong), "--run", "cpu", "--launch", str(side)]) == 1
    assert "CPU engine (mismatch)" in capsys.readouterr().out

    # the engine's own run of the edited kernel against numpy, on the sidecar's launch
    out = tmp_path / "out.npz"
    assert ptx2py_main(["run", str(edited_ptx), "--launch", str(side), "-o", str(out)]) == 0
    with np.load(out) as got:
        assert np.array_equal(got["out_ptr"], got["x_ptr"] + got["y_ptr"])

    py.write_text(edit.read_text())        # the user keeps the edit in from-triton's file (beside its sidecar)
    override = tmp_path / "override"
    assert ptx2py_main(["to-triton", str(py), "--out", str(override)]) == 0
    assert "wrote " in capsys.readouterr().err
    said, used = _programs_ptx(override, tmp_path / "cache")
    assert "Overriding kernel with file" in said
    assert used == edited_ptx.read_text()
