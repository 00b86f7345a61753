"""The import graph of every package (scripts/import_graph.py, read statically from the sources,
function-level imports included): no cycle, no import up or across the layers of its LAYERS table,
every package placed in that table, and docs/architecture.md generated from the same graph."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest
from conftest import ROOT


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


import_graph = _load("import_graph")
make_architecture = _load("make_architecture")


@pytest.fixture(scope="module")
def graph():
    return import_graph.build()


def test_every_package_has_a_layer(graph):
    missing = import_graph.unplaced(graph)
    assert not missing, "\n".join(
        f"package {pkg!r} has no layer: add it to LAYERS in scripts/import_graph.py" for pkg in missing)


def test_no_import_cycle(graph):
    found = import_graph.cycles(graph.edges)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_package_cycle(graph):
    found = import_graph.cycles(import_graph._package_graph(graph))
    assert not found, "package cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_import_up_or_across_the_layers(graph):
    found = import_graph.violations(graph)
    assert not found, "layering violations:\n" + "\n".join(found)


def test_the_graph_sees_every_project_package(graph):
    assert {"ptxgrammar", "transpile", "sugar", "lint", "launch", "verify", "roundtrip", "kernelir",
            "ptx2py", "cli"} <= set(graph.packages())
    # a function-level import counts: lint/cli.py reads ptxgrammar inside its command
    assert "ptxgrammar" in graph.edges["lint.cli"]


def _tree(tmp_path, files: dict):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return import_graph.build(tmp_path)


def test_a_lazy_import_that_closes_a_circle_is_a_cycle(tmp_path):
    g = _tree(tmp_path, {
        "transpile/__init__.py": "",
        "transpile/a.py": "from .b import x\n",
        "transpile/b.py": "x = 1\ndef f():\n    from . import a\n",
    })
    assert import_graph.cycles(g.edges) == [["transpile.a", "transpile.b"]]


def test_an_upward_import_and_an_unknown_package_are_reported(tmp_path):
    g = _tree(tmp_path, {
        "transpile/__init__.py": "def hook():\n    import sugar.pipeline\n",
        "sugar/__init__.py": "", "sugar/pipeline.py": "import transpile\n",
        "mystery/__init__.py": "import ptxgrammar\n", "ptxgrammar/__init__.py": "",
    })
    assert import_graph.unplaced(g) == ["mystery"]
    (line,) = import_graph.violations(g)
    assert "transpile imports sugar.pipeline" in line and "a higher layer" in line
    assert import_graph.cycles(import_graph._package_graph(g)) == [["sugar", "transpile"]]


def test_architecture_page_is_up_to_date():
    page = ROOT / "docs" / "architecture.md"
    assert page.is_file(), "docs/architecture.md is missing: run python scripts/make_architecture.py"
    assert page.read_text() == make_architecture.render(import_graph.build()), (
        "docs/architecture.md is stale: run python scripts/make_architecture.py")


def _layout_paths() -> list[str]:
    """The first path named in each row of README.md's layout table."""
    text = (ROOT / "README.md").read_text()
    table = text.split("## Layout", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return [row.split("`")[1] for row in rows]


def test_readme_layout_table_matches_the_folders():
    listed = _layout_paths()
    missing = [path for path in listed if not (ROOT / path).exists()]
    assert not missing, f"README.md's layout table names paths that do not exist: {missing}"
    tops = {path.split("/")[0].removesuffix(".py") for path in listed}
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
               and not p.name.endswith(".egg-info") and p.name not in ("build", "venv", "out")}
    unlisted = sorted(folders - tops) + sorted(set(import_graph.top_packages()) - tops - folders)
    assert not unlisted, f"folders or packages missing from README.md's layout table: {unlisted}"
