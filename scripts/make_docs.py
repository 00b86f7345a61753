#!/usr/bin/env python3
"""Regenerate every page that shows `--sugar` output, in one command, after a change to a pass
or a spelling: docs/sugar/ (make_sugar_docs.py), docs/editing_guide.md (make_editing_guide.py)
and examples/worked_matmul/ with docs/worked_example.md (worked_example.py: ptxas for the
verify section; the CPU engine for section 6).

    python scripts/make_docs.py            # all three
    python scripts/make_docs.py --quick    # docs/sugar and the editing guide only
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
STEPS = ["make_sugar_docs.py", "make_editing_guide.py", "worked_example.py"]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    steps = STEPS[:2] if "--quick" in argv else STEPS
    for step in steps:
        print(f"== {step}", flush=True)
        rc = subprocess.call([sys.executable, str(SCRIPTS / step)])
        if rc:
            print(f"{step} failed (exit {rc})", file=sys.stderr)
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
