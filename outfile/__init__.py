"""Output files written whole or not at all: `ptx2py -o`, `py2ptx -o`, `check --json` and
`compile-ir -o` go through `write_atomic`, so a failure never leaves a partial or clobbered file."""

from __future__ import annotations

import os
import tempfile

__all__ = ["write_atomic"]


def write_atomic(path: str, text: str) -> None:
    """Write all of `text` or nothing: a temp file in the same folder, then rename."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".ptx2py-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
