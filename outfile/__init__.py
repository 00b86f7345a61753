"""Output files written whole or not at all: `ptx2py -o`, `py2ptx -o`, `check --json` and
`compile-ir -o` go through `write_atomic`, so a failure never leaves a partial or clobbered file."""

from __future__ import annotations

import os
import stat
import tempfile

__all__ = ["OutputError", "write_atomic"]


class OutputError(Exception):
    """An output that cannot or must not be written; the message names the file."""


def write_atomic(path: str, text: str, inputs=()) -> None:
    """Write all of `text` or nothing: a temp file in the same folder, then rename.
    Refuses to replace one of `inputs`; the file gets ordinary permissions (the mode
    of the file it replaces, else 0666 less the umask), not mkstemp's 0600."""
    if not path:
        raise OutputError("error: the output file name is empty")
    for src in inputs:
        if src not in (None, "-") and os.path.exists(path) and os.path.exists(src) and os.path.samefile(src, path):
            raise OutputError(f"{path}: error: the output would overwrite the input {src}; choose another -o")
    if os.path.exists(path) and not os.path.isdir(path) and not stat.S_ISREG(os.stat(path).st_mode):
        return _write_stream(path, text)
    shown, path = path, os.path.realpath(path)  # through a symlink: the link stays, its target is written
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise OutputError(f"{shown}: error: no such folder {folder}")
    if os.path.isdir(path):
        raise OutputError(f"{shown}: error: is a folder")
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else 0o666 & ~_umask()
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".ptx2py-", suffix=".tmp")
    except OSError as e:
        raise OutputError(f"{shown}: error: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        raise OutputError(f"{shown}: error: {e.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise


def _write_stream(path: str, text: str) -> None:
    """A device or a pipe (`-o /dev/null`, `-o >(gzip)`) is written in place: renaming a
    temp file over it would replace the device node itself."""
    try:
        with open(path, "w", newline="") as f:
            f.write(text)
    except OSError as e:
        raise OutputError(f"{path}: error: {e.strerror}") from None


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old
