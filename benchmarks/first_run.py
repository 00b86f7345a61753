"""A user's first run: the PTX -> Python -> PTX loop in a fresh process, per stored state.

    python benchmarks/first_run.py [--files 12]

run_all.py times its cold rows inside one process (imports done, grammar built);
this times what a fresh `python -c` pays on top: for each file, one child process
per state, each reporting its CPU seconds for the imports (ptxgrammar, transpile)
and for the first loop (`python_to_ptx(ptx_to_python(text))`, which builds the
grammar when a shape is not stored):

- nothing stored: PTX2PY_SHAPE_CACHE=off (no user store, no shipped store, no
  cached grammar tables): every shape and the grammar are built;
- as installed: an empty user store, the shipped store on (ptxgrammar/shipped_shapes.bin);
- second run: the user store and Lark's grammar tables left by one earlier process on
  the same file, the shipped store off.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from common import ROOT, largest_files, table

CHILD = """
import time
start = time.process_time()
from ptx2py import ptxgrammar
from ptx2py.transpile import ptx_to_python, python_to_ptx
imported = time.process_time()
text = ptxgrammar.read_ptx({path!r})
begin = time.process_time()
assert python_to_ptx(ptx_to_python(text)) == text
print(imported - start, time.process_time() - begin)
"""


def child(path, env: dict) -> tuple[float, float]:
    """(import CPU s, first-loop CPU s) of a fresh process."""
    out = subprocess.run([sys.executable, "-c", CHILD.format(path=str(path))], check=True, cwd=ROOT,
                         capture_output=True, text=True, env={**os.environ, **env})
    imports, loop = out.stdout.split()[-2:]
    return float(imports), float(loop)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=12)
    args = ap.parse_args()
    rows, loops = [], {"nothing stored": [], "as installed": [], "second run": []}
    for path in largest_files(args.files):
        scratch = tempfile.mkdtemp(prefix="ptx2py-first-run-")
        try:
            states = {
                "nothing stored": {"PTX2PY_SHAPE_CACHE": "off"},
                "as installed": {"PTX2PY_SHAPE_CACHE": os.path.join(scratch, "installed")},
                "second run": {"PTX2PY_SHAPE_CACHE": os.path.join(scratch, "user"), "PTX2PY_SHIPPED_SHAPES": "off"},
            }
            child(path, states["second run"])          # the earlier process that fills the user's store
            row = [path.name]
            for state, env in states.items():
                imports, loop = child(path, env)
                loops[state].append(loop)
                row += [f"{imports:.3f}", f"{loop:.3f}"]
            rows.append(row)
            print("  " + "  ".join(row), flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    headers = ["file"] + [f"{s}: {what}" for s in loops for what in ("import s", "loop s")]
    print(table(rows, headers))
    print("median first-loop CPU s: " + ", ".join(f"{s} {statistics.median(v):.3f}" for s, v in loops.items()))


if __name__ == "__main__":
    main()
