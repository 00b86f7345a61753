"""Reading an input file's bytes, apart from the parser: py2ptx reads its Python input
with it and never loads the parser (nor Lark)."""

from __future__ import annotations

import errno
import os
import stat


def read_file_bytes(path) -> bytes:
    """A file's bytes; a device (`/dev/zero` never ends, `/dev/tty` waits) is refused as an
    OSError naming it. Pipes (`<(...)`) and standard input (`-`, read by the caller) are fine."""
    with open(path, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            raise OSError(errno.ENODEV, "a device, not a file (use - for standard input)", str(path))
        return f.read()
