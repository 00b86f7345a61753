"""The distribution as a user installs it: one import package, ptx2py, whose subpackages are the
repository's folders; it imports and works from a folder whose own modules would shadow generic
names (cli.py, lint.py, analysis.py); modules written by 0.1 still run, with a warning."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from conftest import CORPUS, ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SMALL_PTX = CORPUS / "triton" / "add_bf16_sm80.ptx"


def _source_tree(dest: Path) -> Path:
    """What the wheel is built from, copied: each worker builds in its own folder (setuptools
    writes build/ beside pyproject.toml), and the checkout is left as it was."""
    for name in ("pyproject.toml", "README.md", "cli.py"):
        shutil.copy2(ROOT / name, dest / name)
    for folder in PYPROJECT["tool"]["setuptools"]["package-dir"].values():
        shutil.copytree(ROOT / folder, dest / folder, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    src = _source_tree(tmp_path_factory.mktemp("source"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (found,) = out.glob("ptx2py-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel unpacked as pip installs it (its files only; the dependencies are this venv's)."""
    site = tmp_path_factory.mktemp("site")
    zipfile.ZipFile(wheel).extractall(site)
    return site


def test_wheel_installs_one_import_name(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"ptx2py"}
    for data in ("ptx2py/ptxgrammar/ptx.lark", "ptx2py/ptxgrammar/shipped_shapes.bin", "ptx2py/cli.py",
                 "ptx2py/kernelir/problems/vector_add.json", "ptx2py/transpile/style_presets.json"):
        assert data in names


def test_console_scripts_and_lexer_point_into_the_package(wheel):
    zf = zipfile.ZipFile(wheel)
    (entry,) = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = zf.read(entry).decode()
    assert "ptx2py = ptx2py.cli:ptx2py_command" in text and "py2ptx = ptx2py.cli:py2ptx_command" in text
    assert "ptx2py = ptx2py.highlight.lexer:PtxLexer" in text


def test_every_package_folder_is_in_the_wheel():
    """A new subpackage folder missing from pyproject's list would silently be left out."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    mapping = PYPROJECT["tool"]["setuptools"]["package-dir"]
    found = set()
    for package, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    assert found == listed


SHADOWS = {   # a user's own modules, named like the layout's folders: none may be imported
    "cli.py": "raise ImportError('the working folder cli.py was imported')\n",
    "lint.py": "raise ImportError('the working folder lint.py was imported')\n",
    "analysis.py": "raise ImportError('the working folder analysis.py was imported')\n",
    "transpile.py": "raise ImportError('the working folder transpile.py was imported')\n",
}

PROGRAM = """
import sys
import ptx2py
from ptx2py.lint import lint_text
text = open(sys.argv[1]).read()
source = ptx2py.ptx_to_python(text, sugar=True)
assert ptx2py.python_to_ptx(source) == text
assert source.startswith("from ptx2py.dsl import *")
import ptx2py.analysis, ptx2py.cli
print("ok", ptx2py.__file__, ptx2py.lint.__file__)
"""


def _run_in(folder: Path, site: Path | None, *args: str):
    env = {"PATH": "/usr/bin:/bin", "PTX2PY_SHAPE_CACHE": "off"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True)


def test_installed_wheel_imports_beside_shadowing_modules(installed, tmp_path):
    for name, text in SHADOWS.items():
        (tmp_path / name).write_text(text)
    proc = _run_in(tmp_path, installed, "-c", PROGRAM, str(SMALL_PTX))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok")
    assert str(installed) in proc.stdout.split()[1] and str(installed) in proc.stdout.split()[2]


def test_checkout_imports_beside_shadowing_modules(tmp_path):
    """A checkout on the path imports its own folders (ptx2py/__init__.py looks beside itself)."""
    for name, text in SHADOWS.items():
        (tmp_path / name).write_text(text)
    proc = _run_in(tmp_path, ROOT, "-c", PROGRAM, str(SMALL_PTX))
    assert proc.returncode == 0, proc.stderr
    assert str(ROOT / "lint") in proc.stdout


def test_python_cli_py_runs_from_a_checkout(tmp_path):
    out = tmp_path / "k.py"
    proc = _run_in(tmp_path, None, str(ROOT / "cli.py"), str(SMALL_PTX), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().startswith("from ptx2py.dsl import *")


def test_a_module_written_by_0_1_still_runs_with_a_warning(tmp_path):
    text = SMALL_PTX.read_text()
    new = _run_in(tmp_path, ROOT, str(ROOT / "cli.py"), str(SMALL_PTX), "-o", str(tmp_path / "new.py"))
    assert new.returncode == 0, new.stderr
    source = (tmp_path / "new.py").read_text()
    old = tmp_path / "old.py"
    old.write_text(source.replace("from ptx2py.dsl import *", "from transpile.dsl import *", 1))
    for module, warned in ((old, True), (tmp_path / "new.py", False)):
        proc = _run_in(tmp_path, ROOT, "-c", "import sys; from ptx2py import cli; sys.exit(cli.py2ptx_main())",
                       str(module), "-o", str(module.with_suffix(".ptx")))
        assert proc.returncode == 0, proc.stderr
        assert module.with_suffix(".ptx").read_text() == text
        assert ("`from transpile.dsl import *` is ptx2py 0.1's import line" in proc.stderr) is warned


def test_pygments_finds_the_project_lexer_by_its_alias():
    from pygments.lexers import get_lexer_by_name

    from ptx2py.highlight.lexer import PtxLexer

    assert isinstance(get_lexer_by_name("ptx2py"), PtxLexer)
    assert not isinstance(get_lexer_by_name("ptx"), PtxLexer)   # Pygments' own keeps its name
