"""CLI start-up: a command loads only what it needs. Timing is measured in
benchmarks/bench_startup.py; here the modules a plain `ptx2py k.ptx -o k.py` and a
`py2ptx k.py -o k.ptx` load are checked in a child process (the structure that keeps
start-up short, which a test can check without a clock)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

GOOD = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\tret;\n}\n"
# Heavy or unrelated to turning PTX into Python and back.
NEVER = ("numpy", "triton", "torch", "ptx2py.emulate", "ptx2py.verify", "ptx2py.sugar", "ptx2py.kernelir",
         "ptx2py.tritonbridge", "importlib.metadata")
CHILD = """
import json, sys
from ptx2py import cli
code = getattr(cli, sys.argv[1])(sys.argv[2:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _loaded(main: str, *argv) -> tuple[int, list[str]]:
    proc = subprocess.run([sys.executable, "-c", CHILD, main, *argv], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    return out["code"], out["modules"]


def _heavy(modules) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in NEVER)]


def test_ptx2py_to_python_loads_nothing_heavy(tmp_path):
    (tmp_path / "k.ptx").write_text(GOOD)
    for run in ("first", "again"):        # again: every statement shape stored, so no grammar either
        code, modules = _loaded("ptx2py_main", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.py"))
        assert code == 0 and (tmp_path / "k.py").is_file()
        assert _heavy(modules) == []
    assert [m for m in modules if m == "lark" or m.startswith("lark.")] == []


def test_py2ptx_loads_nothing_heavy(tmp_path):
    (tmp_path / "k.ptx").write_text(GOOD)
    assert _loaded("ptx2py_main", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.py"))[0] == 0
    code, modules = _loaded("py2ptx_main", str(tmp_path / "k.py"), "-o", str(tmp_path / "back.ptx"))
    assert code == 0 and (tmp_path / "back.ptx").read_text() == GOOD
    assert _heavy(modules) == []
    # Python in, PTX out: the PTX parser and Lark are never needed
    assert [m for m in modules if m in ("lark", "ptx2py.ptxgrammar.parser")] == []


def test_sugar_loads_the_sugar_passes_and_version_still_answers(tmp_path):
    (tmp_path / "k.ptx").write_text(GOOD)
    code, modules = _loaded("ptx2py_main", str(tmp_path / "k.ptx"), "--sugar", "-o", str(tmp_path / "k.py"))
    assert code == 0 and "ptx2py.sugar.pipeline" in modules
    proc = subprocess.run([sys.executable, "-c", "import sys; from ptx2py import cli; cli.py2ptx_main()",
                           "--version"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.startswith("py2ptx ") and proc.stdout.strip() != "py2ptx"
