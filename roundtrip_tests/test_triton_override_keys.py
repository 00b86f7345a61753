"""to-triton writes the override under the keys Triton really looks up: a kernel built from its
types alone (`from-triton --signature`, no `--arg`: the README's example) is used by the
program's own `kernel[grid](...)` (Triton 3.9's override machinery, through `JITFunction.warmup`
with a CPU-only driver), whatever the call's divisibility; a call the PTX cannot answer (an
integer equal to 1, which Triton makes a constant) is refused or said."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

triton = pytest.importorskip("triton")

from conftest import ROOT  # noqa: E402

from ptx2py import cli  # noqa: E402
from ptx2py.transpile import python_to_ptx  # noqa: E402

KERNELS = ROOT / "corpus" / "src" / "triton" / "kernels.py"

PROGRAM = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from kernels import add_kernel
from ptx2py.tritonbridge.warmup import cpu_only_driver, tensor
n = int(sys.argv[2])
with cpu_only_driver(90):  # the program's own compile path: kernel[grid](...) minus the launch
    k = add_kernel.warmup(tensor("float32"), tensor("float32"), tensor("float32"), n, BLOCK=1024, grid=(1,))
print(json.dumps({"ptx": k.asm["ptx"]}))
"""


def _built_from_types(tmp_path):
    py = tmp_path / "add.py"
    assert cli.ptx2py_main(["from-triton", f"{KERNELS}::add_kernel", "--signature", "*fp32,*fp32,*fp32,i32",
                            "--constexprs", "BLOCK=1024", "--sugar", "-o", str(py)]) == 0
    py.write_text(py.read_text().replace("ptx.add.f32(", "ptx.sub.f32("))
    return py


def _program_ptx(override, tmp_path, n: int) -> tuple[str, str]:
    env = dict(os.environ, TRITON_KERNEL_OVERRIDE="1", TRITON_OVERRIDE_DIR=str(override),
               TRITON_CACHE_DIR=str(tmp_path / f"cache{n}"), TRITON_DEFAULT_FP_FUSION="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", PROGRAM, str(KERNELS.parent), str(n)], env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout, json.loads(run.stdout.strip().splitlines()[-1])["ptx"]


def test_an_override_built_from_types_is_used_by_the_programs_call(tmp_path, capsys):
    py = _built_from_types(tmp_path)
    capsys.readouterr()
    override = tmp_path / "override"
    assert cli.ptx2py_main(["to-triton", str(py), "--out", str(override)]) == 0
    err = capsys.readouterr().err
    assert "n_elements % 16 == 0" in err and "n_elements % 16 != 0" in err        # the calls each key answers
    assert "not for calls with n_elements == 1" in err
    edited = python_to_ptx(py.read_text())
    for n in (1 << 20, (1 << 20) + 3):             # divisible by 16 and not: two specialisations, two keys
        out, ptx = _program_ptx(override, tmp_path, n)
        assert "Overriding kernel with file" in out and ptx == edited


def test_the_real_calls_values_give_its_key_and_a_call_the_ptx_cannot_answer_is_refused(tmp_path, capsys):
    py = _built_from_types(tmp_path)
    capsys.readouterr()
    override = tmp_path / "override"
    assert cli.ptx2py_main(["to-triton", str(py), "--out", str(override), "--arg", "n_elements=4096"]) == 0
    wrote = [x for x in capsys.readouterr().err.splitlines() if x.startswith("wrote ")]
    assert len(wrote) == 2 and "with n_elements % 16 == 0; tensors 16-byte aligned" in wrote[1]
    out, ptx = _program_ptx(override, tmp_path, 4096)
    assert "Overriding kernel with file" in out and ptx == python_to_ptx(py.read_text())
    assert cli.ptx2py_main(["to-triton", str(py), "--out", str(tmp_path / "o1"), "--arg", "n_elements=1"]) == 2
    assert "Triton makes n_elements == 1 a constant" in capsys.readouterr().err
    assert not (tmp_path / "o1").exists()
