""".typecheck/ptx2py shows the type checker and the API reference the package as it installs: a
link for every folder pyproject's package-dir maps into ptx2py and for every module of ptx2py/.
A package added without its link would drop out of mypy's and mkdocstrings' view silently."""

from __future__ import annotations

import os

import pytest
from conftest import ROOT

tomllib = pytest.importorskip("tomllib")   # Python 3.11+

LINKS = ROOT / ".typecheck" / "ptx2py"


def test_every_mapped_folder_and_facade_module_has_its_link():
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    folders = {name.split(".", 1)[1]: folder for name, folder in package_dir.items() if name != "ptx2py"}
    modules = {p.name for p in (ROOT / "ptx2py").glob("*.py")}
    expected = set(folders) | modules
    assert {p.name for p in LINKS.iterdir()} == expected
    for name, folder in folders.items():
        assert (LINKS / name).is_symlink() and (LINKS / name).resolve() == (ROOT / folder).resolve()
    for name in modules:
        assert os.path.samefile(LINKS / name, ROOT / "ptx2py" / name)
