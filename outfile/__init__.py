"""Output files written whole or not at all: `ptx2py -o`, `py2ptx -o`, `check --json` and
`compile-ir -o`, `run -o/--json`, `verify --json/--html` and `from-triton -o` go through `write_atomic`, so a
failure never leaves a partial or clobbered file; each command calls `check_output` on its outputs before
its work, so a bad output path is refused before a long run or compile."""

from __future__ import annotations

import os
import stat
import tempfile

__all__ = ["OutputError", "check_output", "write_atomic"]


class OutputError(Exception):
    """An output that cannot or must not be written; the message names the file."""


def check_output(path: str, inputs=()) -> None:
    """Refuse, before any work, an output that could not be written: an empty name, a folder, a
    folder that does not exist or is not writable, or one of `inputs` (never overwritten)."""
    if not path:
        raise OutputError("error: the output file name is empty")
    for src in inputs:
        if src not in (None, "-") and os.path.exists(path) and os.path.exists(src) and os.path.samefile(src, path):
            raise OutputError(f"{path}: error: the output would overwrite the input {src}; choose another name")
    if _is_stream(path):
        return
    real = os.path.realpath(path)
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise OutputError(f"{path}: error: no such folder {folder}")
    if os.path.isdir(real):
        raise OutputError(f"{path}: error: is a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: error: the folder {folder} is not writable")


def _is_stream(path: str) -> bool:
    return os.path.exists(path) and not os.path.isdir(path) and not stat.S_ISREG(os.stat(path).st_mode)


def write_atomic(path: str, text: str | bytes, inputs=()) -> None:
    """Write all of `text` (or bytes) or nothing: a temp file in the same folder, then rename.
    Refuses to replace one of `inputs`; the file gets ordinary permissions (the mode
    of the file it replaces, else 0666 less the umask), not mkstemp's 0600."""
    check_output(path, inputs)
    if _is_stream(path):
        return _write_stream(path, text)
    shown, path = path, os.path.realpath(path)  # through a symlink: the link stays, its target is written
    folder = os.path.dirname(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else 0o666 & ~_umask()
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".ptx2py-", suffix=".tmp")
    except OSError as e:
        raise OutputError(f"{shown}: error: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w", **({} if isinstance(text, bytes) else
                                                                      {"newline": ""})) as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        raise OutputError(f"{shown}: error: {e.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise


def _write_stream(path: str, text: str | bytes) -> None:
    """A device or a pipe (`-o /dev/null`, `-o >(gzip)`) is written in place: renaming a
    temp file over it would replace the device node itself."""
    try:
        with open(path, "wb") if isinstance(text, bytes) else open(path, "w", newline="") as f:
            f.write(text)
    except OSError as e:
        raise OutputError(f"{path}: error: {e.strerror}") from None


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old
