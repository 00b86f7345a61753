"""The project's import graph, read statically (ast) from the sources, and the layers it must keep.

Every `import`/`from ... import` counts, wherever it stands (module level, inside a function, under
`if TYPE_CHECKING:`), and so does `importlib.import_module("x.y")` with a constant name: a lazy import
still ties the two modules together. Used by roundtrip_tests/test_import_graph.py (no cycles, no
upward import, every package placed) and by scripts/make_architecture.py (docs/architecture.md).

    python scripts/import_graph.py     # cycles and layering violations, exit 1 if any
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The layers, lowest first: (layer name, ((package, its job), ...)). A package may import its own
# modules and packages of lower layers only; packages on one layer do not import each other.
# Top-level modules (cli.py) are named like packages. The jobs are shown in docs/architecture.md.
# lint sits below transpile because py2ptx's checked mode (transpile.dsl.recorder) applies its rules;
# launch beside it, below sugar, which names parameters from launch sidecars (and holds the CUDA
# driver loading that verify's and kernelir's GPU runs share). kernelir sits above verify: its GPU
# check is part (c) of the GPU suite, built on verify's case rows and buffer release.
LAYERS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("base", (("ptxgrammar", "PTX grammar, parser, typed lossless tree, emitter, ISA tables"),
              ("outfile", "output files written whole or not at all"))),
    ("analysis", (("analysis", "control-flow graph, dominators, loops over the tree"),)),
    ("rules and sidecars", (("lint", "instruction rules for a module's .version/.target (also py2ptx's check)"),
                            ("launch", "launch sidecars: parameter packing, tensor maps, seeded inputs, "
                                       "the CUDA driver"))),
    ("transpile", (("transpile", "PTX tree -> Python generator and the DSL runtime"),)),
    ("passes", (("sugar", "readability passes over the generated Python"),)),
    ("engine", (("emulate", "CPU execution engine"),)),
    ("tools", (("verify", "ptxas + SASS comparison, GPU runs of both kernels"),
               ("roundtrip", "round-trip checks of files and folders"))),
    ("kernel IR", (("kernelir", "kernel IR, its interpreter and its one-pass compiler to PTX"),)),
    ("bridges", (("tritonbridge", "Triton kernels -> PTX -> Python"),
                 ("highlight", "Pygments lexer for PTX"))),
    ("facade", (("ptx2py", "the composed entry points: ptx_to_python(text, sugar=...), python_to_ptx"),)),
    ("command line", (("cli", "parses arguments and composes the packages"),)),
)

# Folders at the top that are not packages of the product (tests, scripts, data, a venv).
NOT_PACKAGES = frozenset({"roundtrip_tests", "scripts", "benchmarks", "examples", "corpus", "docs",
                          "build", "venv", ".venv"})


def layer_of() -> dict[str, int]:
    return {pkg: i for i, (_, pkgs) in enumerate(LAYERS) for pkg, _job in pkgs}


@dataclass
class Graph:
    root: Path
    modules: dict[str, Path]                      # dotted name -> file
    edges: dict[str, set[str]] = field(default_factory=dict)   # importer -> imported (project only)
    lines: dict[tuple[str, str], int] = field(default_factory=dict)  # (importer, imported) -> line

    def packages(self) -> list[str]:
        return sorted({m.split(".")[0] for m in self.modules})

    def package_edges(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(package, package) -> one module edge that makes it (the first, by name)."""
        found: dict[tuple[str, str], tuple[str, str]] = {}
        for src in sorted(self.edges):
            for dst in sorted(self.edges[src]):
                a, b = src.split(".")[0], dst.split(".")[0]
                if a != b:
                    found.setdefault((a, b), (src, dst))
        return found


def top_packages(root: Path = ROOT) -> list[str]:
    """Top-level packages (folders with __init__.py, or namespace folders holding packages, as
    emulate/ holds emulate/numerics/) and top-level modules of the product."""
    names = [p.name for p in root.iterdir()
             if p.is_dir() and p.name not in NOT_PACKAGES and p.name.isidentifier()
             and ((p / "__init__.py").is_file() or any(p.glob("*/__init__.py")))]
    names += [p.stem for p in root.glob("*.py")]
    return sorted(names)


def find_modules(root: Path = ROOT) -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for top in top_packages(root):
        single = root / f"{top}.py"
        if single.is_file():
            modules[top] = single
            continue
        for path in sorted((root / top).rglob("*.py")):
            if path.is_symlink():   # ptx2py/cli.py is cli.py, placed in the package for the wheel
                continue
            parts = path.relative_to(root).with_suffix("").parts
            if not all(part.isidentifier() for part in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if all((root / Path(*parts[:i]) / "__init__.py").is_file() for i in range(2, len(parts) + 1)
                   if (root / Path(*parts[:i])).is_dir()):
                modules[".".join(parts)] = path
    return modules


def _base(module: str, path: Path, level: int, target: str | None) -> str:
    """The absolute name of a relative import's target."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    parts = package.split(".")
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


FACADE = "ptx2py"   # the one installed package: `ptx2py.lint.x` is the module lint.x of the layout


def _in_layout(name: str, modules: dict[str, Path]) -> str:
    """`ptx2py.<package>...` named as the layout's folders are (`<package>...`); other names as given."""
    head, _, rest = name.partition(".")
    if head == FACADE and rest and rest.split(".")[0] in {m.split(".")[0] for m in modules} - {FACADE}:
        return rest
    return name


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of `name` that is a project module."""
    name = _in_layout(name, modules)
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported project module, line) for every import in the file, at any depth."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[str, int]] = []

    def add(name: str, line: int) -> None:
        target = _known(name, modules)
        if target and target != module:
            found.append((target, line))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node.level, node.module) if node.level else node.module or ""
            for alias in node.names:
                sub = _in_layout(f"{base}.{alias.name}", modules)
                add(sub if sub in modules else base, node.lineno)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and _call_name(node.func) in DYNAMIC_IMPORTS):
            add(node.args[0].value, node.lineno)
    return found


DYNAMIC_IMPORTS = frozenset({"import_module", "__import__"})


def _call_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def build(root: Path = ROOT) -> Graph:
    modules = find_modules(root)
    graph = Graph(root, modules, {m: set() for m in modules})
    for module, path in modules.items():
        for target, line in imports_of(module, path, modules):
            graph.edges[module].add(target)
            graph.lines.setdefault((module, target), line)
    return graph


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:
        nonlocal counter
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def unplaced(graph: Graph) -> list[str]:
    """Packages that have no layer in LAYERS."""
    layers = layer_of()
    return [pkg for pkg in graph.packages() if pkg not in layers]


def violations(graph: Graph) -> list[str]:
    """One line per package edge that goes up a layer or sideways within one."""
    layers = layer_of()
    found = []
    for (a, b), (src, dst) in sorted(graph.package_edges().items()):
        if a not in layers or b not in layers or layers[a] > layers[b]:
            continue
        where = "a higher layer" if layers[b] > layers[a] else "a package on its own layer"
        line = graph.lines[(src, dst)]
        found.append(f"{graph.modules[src].relative_to(graph.root)}:{line}: {src} imports {dst}: "
                     f"{a} ({LAYERS[layers[a]][0]}) imports {where}, {b} ({LAYERS[layers[b]][0]})")
    return found


def report(graph: Graph) -> list[str]:
    problems = [f"package {pkg!r} has no layer: add it to LAYERS in scripts/import_graph.py"
                for pkg in unplaced(graph)]
    problems += ["import cycle: " + " <-> ".join(c) for c in cycles(graph.edges)]
    problems += ["package cycle: " + " <-> ".join(c) for c in cycles(_package_graph(graph))]
    problems += violations(graph)
    return problems


def _package_graph(graph: Graph) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {pkg: set() for pkg in graph.packages()}
    for a, b in graph.package_edges():
        packages[a].add(b)
    return packages


def main() -> int:
    graph = build()
    problems = report(graph)
    print(f"{len(graph.modules)} modules, {sum(map(len, graph.edges.values()))} imports, "
          f"{len(cycles(graph.edges))} cycles, {len(violations(graph))} layering violations, "
          f"{len(unplaced(graph))} packages without a layer")
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
