"""Share of kernels whose parameters all get source names from `--sugar` (`sugar.sources`),
per producer, over the PTX files that have a launch sidecar (corpus/launch) or a source
(corpus/src/<producer>/<stem>.cu|.py). Runs only the names pass. Library kernels whose
definition is not in the source (CUB's, instantiated by thrust calls) are counted apart.

    python scripts/measure_param_names.py [folders...]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def kernels(path: Path):
    """(kernel, parameter count, named from a source) for every function with parameters."""
    from ptx2py import ptxgrammar
    from ptx2py.sugar import names
    from ptx2py.sugar.ctx import Context
    from ptx2py.transpile.generator import Generator

    text = ptxgrammar.read_ptx(path)
    module = ptxgrammar.parse(text)
    gen = Generator(module)
    stmts = gen.run()
    ctx = Context(module, gen, stmts, {"filename": str(path)})
    out = names.run(stmts, ctx)
    named = {}
    for s in out:
        e = s.expr
        if getattr(e, "head", None) == "kernel_name":
            kw = {i.name: i.value for i in e.items if i.__class__.__name__ == "Kw"}
            named[e.items[0][1:-1]] = "params" in kw and kw["params"].startswith('"')
    for f in module.functions:
        n = len(f.head.params.params) if f.head.params is not None else 0
        if n and f.head.kind == ".entry":
            yield f.name, n, named.get(f.name, False)


def defined(kernel: str, source: str) -> bool:
    """The source holds the kernel's definition (a `__global__` function or a Triton `def`)."""
    from ptx2py.sugar.sources import _GLOBAL, _base_name

    base = _base_name(kernel)
    return any(m.group(1) == base for m in _GLOBAL.finditer(source)) or f"def {kernel}(" in source


def main(argv=None) -> int:
    from ptx2py.launch.plan import sidecar_for

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-v", action="store_true", help="list the kernels left without source names")
    ap.add_argument("folders", nargs="*", default=[str(ROOT / "corpus" / "ptx" / p) for p in ("triton", "nvcc",
                                                                                              "pallas")])
    a = ap.parse_args(argv)
    have, named, library = Counter(), Counter(), Counter()
    for folder in a.folders:
        for path in sorted(Path(folder).rglob("*.ptx")):
            src = ROOT / "corpus" / "src" / path.parent.name / path.name.split(".")[0]
            if sidecar_for(str(path)) is None and not any(src.with_suffix(x).is_file() for x in (".cu", ".py")):
                continue
            producer = path.parent.name
            text = "".join(src.with_suffix(x).read_text() for x in (".cu", ".py") if src.with_suffix(x).is_file())
            for k, n, ok in kernels(path):
                if not ok and sidecar_for(str(path)) is None and not defined(k, text):
                    library[producer] += 1  # a library kernel (CUB, thrust): its definition is not in the source
                    continue
                have[producer] += 1
                named[producer] += ok
                if a.v and not ok:
                    print(f"{path}: {k} ({n} parameters) has no source names")
    for p in sorted(have):
        print(f"{p}: {named[p]}/{have[p]} kernels with source parameter names ({100.0 * named[p] / have[p]:.1f}%)"
              + (f"; {library[p]} library kernels defined outside the source" if library[p] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
