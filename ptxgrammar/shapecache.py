"""The on-disk store of statement-shape builders, shared by every process.

The first time a process meets a statement shape, ``parser.ShapeCache`` parses
one chunk of it with the grammar and compiles a builder (shapes.py); that is
most of the time of a first parse. This module keeps the builders' code objects
(marshal) in the user's cache folder, so later processes get them without the
grammar. The grammar stays the source of truth: every stored builder was made
from a grammar parse, and the file is named by a hash of everything that
decides what a builder does (ptx.lark, every module of ptxgrammar, the Lark
version, the Python bytecode tag), so a store is never stale: any change to
them names a new file.

Records are appended, one write per parse that met new shapes, each framed with
its length and CRC32 and zlib-compressed; reading stops at a torn or corrupt record. Set
PTX2PY_SHAPE_CACHE to another folder, or to ``off`` to keep nothing on disk.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import struct
import sys
import zlib
from pathlib import Path

PACKAGE = Path(__file__).parent
ENV = "PTX2PY_SHAPE_CACHE"
OFF = ("", "0", "off", "none", "no")
MAX_BYTES = 256 << 20          # a cache, not an archive: stop appending past this
_FRAME = struct.Struct("<II")  # payload length, CRC32 of the payload


@functools.lru_cache(maxsize=1)
def code_key() -> str:
    """Hash of the grammar, the package's code, Lark's version and the bytecode tag."""
    import lark

    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in (".py", ".lark") and "__pycache__" not in path.parts:
            h.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(f"{lark.__version__}\0{sys.implementation.cache_tag}".encode())
    return h.hexdigest()[:24]


def encode(code):
    """A builder's code as stored: marshal bytes, decoded only when the shape is met
    (reading a store of every corpus shape then costs a copy, not a parse of each)."""
    return None if code is None else marshal.dumps(code)


def decode(blob):
    return None if blob is None else marshal.loads(blob)


def cache_dir() -> Path | None:
    """Where stores live: $PTX2PY_SHAPE_CACHE, else the user cache folder; None when off."""
    value = os.environ.get(ENV)
    if value is not None:
        return None if value.strip().lower() in OFF else Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ptx2py"


def store_path() -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / f"shapes-{code_key()}.bin"


def read_records(path: Path | None) -> tuple[list, bool]:
    """(the intact records of a store in order, whether the whole file was intact).
    A missing or unreadable store has no records and counts as intact."""
    if path is None:
        return [], True
    try:
        data = path.read_bytes()
    except OSError:
        return [], True
    records, pos = [], 0
    while pos + _FRAME.size <= len(data):
        length, crc = _FRAME.unpack_from(data, pos)
        start = pos + _FRAME.size
        payload = data[start:start + length]
        if len(payload) != length or zlib.crc32(payload) != crc:
            break
        try:
            records.append(marshal.loads(zlib.decompress(payload)))
        except (ValueError, EOFError, TypeError, zlib.error):
            break
        pos = start + length
    return records, pos == len(data)


def _frame(record) -> bytes:
    payload = zlib.compress(marshal.dumps(record), 1)     # code objects shrink ~5x
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def rewrite(path: Path | None, record) -> bool:
    """Replace a damaged store by one record (atomically: readers see old or new)."""
    if path is None:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(_frame(record))
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def append_record(path: Path | None, record) -> bool:
    """Append one record in a single write; False if the store cannot be written
    (an unwritable cache folder only costs speed)."""
    if path is None:
        return False
    frame = _frame(record)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_BYTES:
            return False
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, frame)
        finally:
            os.close(fd)
    except OSError:
        return False
    return written == len(frame)
