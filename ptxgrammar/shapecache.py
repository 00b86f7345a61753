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
PTX2PY_SHAPE_CACHE to another folder, or to ``off`` to keep nothing on disk (and use
no stored builder at all, the shipped ones included).

The package also ships a read-only store, ``shipped_shapes.bin``, with the builder of
every statement shape of corpus/ptx (written by scripts/make_shape_store.py), so a
first run on a machine need not build the grammar for common shapes. It is named by
``shipped_key()`` (the grammar and every module a builder depends on) and is used
only while that matches: a stale or damaged shipped store is ignored, silently and
whole. It is read one shape at a time (an index of key hashes, each builder
compressed on its own), so it costs memory only for the shapes a parse meets. Set
PTX2PY_SHIPPED_SHAPES to ``off`` to ignore it, or to the path of another one.
"""

from __future__ import annotations

import array
import bisect
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
SHIPPED_ENV = "PTX2PY_SHIPPED_SHAPES"
SHIPPED = PACKAGE / "shipped_shapes.bin"
OFF = ("", "0", "off", "none", "no")
MAX_BYTES = 256 << 20          # a cache, not an archive: stop appending past this
_FRAME = struct.Struct("<II")  # payload length, CRC32 of the payload


# Modules of the package that take no part in making or running a builder (the
# emitter, error messages, the default spacing, this file): the shipped store's name
# leaves them out, so editing them does not make it stale.
NOT_IN_BUILDERS = frozenset({"__init__.py", "emitter.py", "errors.py", "files.py", "style.py", "shapecache.py"})


@functools.lru_cache(maxsize=1)
def _keys() -> tuple[str, str]:
    """(code_key, shipped_key), from one read of the sources."""
    import lark

    every, builders = hashlib.sha256(), hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        name = path.relative_to(PACKAGE).as_posix()
        if path.suffix in (".py", ".lark") and "__pycache__" not in path.parts:
            part = name.encode() + b"\0" + path.read_bytes() + b"\0"
            every.update(part)
            if name not in NOT_IN_BUILDERS:
                builders.update(part)
    tail = f"{lark.__version__}\0{sys.implementation.cache_tag}".encode()
    every.update(tail)
    builders.update(tail)
    return every.hexdigest()[:24], builders.hexdigest()[:24]


def code_key() -> str:
    """Hash of the grammar, the package's code, Lark's version and the bytecode tag."""
    return _keys()[0]


def shipped_key() -> str:
    """code_key() without the modules that cannot change a builder (NOT_IN_BUILDERS)."""
    return _keys()[1]


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


def grammar_cache(options: str) -> str | bool:
    """Where Lark keeps its analysis of the grammar for a parser with these options (its
    `cache` argument: a second process loads the tables in ~15 ms instead of building
    them in ~120 ms), or False when nothing is kept on disk. Lark checks the file's own
    hash of the grammar, the options and its version, and rebuilds it when it does not fit."""
    folder = cache_dir()
    if folder is None:
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    tag = hashlib.sha256(options.encode()).hexdigest()[:12]
    return str(folder / f"grammar-{code_key()}-{tag}.lark")


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


# --- the shipped store --------------------------------------------------------------
#
# Layout: magic, header (_HEAD), zlib preset dictionary, patterns (the `_TERMINAL`
# regexes the builders use), samples (one chunk of each shape, for the test that
# rebuilds every shipped shape from the grammar), the sorted 64-bit key hashes, the
# entries' offsets, then the entries: each marshal((key, builder code)) compressed on its
# own against the preset dictionary (one shape costs one read and one small decompress).

# The shipped file's format version: this module is left out of the store's key, so a change
# to the layout below or to encode/decode must bump it (an old store is then ignored).
_MAGIC = b"ptx2py shipped shapes 1\n"
_HEAD = struct.Struct("<24sIIIII")   # shipped_key, shapes, dictionary, patterns, samples, CRC32 of the rest
MISSING = object()


def _key_hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def write_shipped(path: Path, patterns: dict, entries: list) -> int:
    """Write a shipped store of `entries` [(shape key, context, chunk, stored builder)];
    returns its size in bytes."""
    entries = sorted(entries, key=lambda e: (_key_hash(e[0]), e[0]))
    raw = [marshal.dumps((key, blob)) for key, _, _, blob in entries]
    zdict = b"".join(raw[::max(1, len(raw) // 256)])[-32768:]   # common code, spread over the store
    data, offsets = bytearray(), array.array("I", [0])
    for item in raw:
        c = zlib.compressobj(9, zdict=zdict)
        data += c.compress(item) + c.flush()
        offsets.append(len(data))
    pats = zlib.compress(marshal.dumps(patterns), 9)
    samples = zlib.compress(marshal.dumps([(context, chunk) for _, context, chunk, _ in entries]), 9)
    hashes = array.array("Q", [_key_hash(e[0]) for e in entries])
    body = zdict + pats + samples + hashes.tobytes() + offsets.tobytes() + bytes(data)
    head = _HEAD.pack(shipped_key().encode(), len(entries), len(zdict), len(pats), len(samples), zlib.crc32(body))
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(_MAGIC + head + body)
    os.replace(tmp, path)           # a process reading the old store keeps reading the old file
    return len(_MAGIC) + len(head) + len(body)


class Shipped:
    """An open shipped store: its index in memory, each builder read from the file and
    decompressed when its shape is met (the store itself never sits in memory)."""

    def __init__(self, path: Path):
        self.file = open(path, "rb")                  # noqa: SIM115 - kept open while in use
        try:
            self._read_index()
        except BaseException:
            self.file.close()
            raise

    def _read_index(self) -> None:
        f = self.file
        if f.read(len(_MAGIC)) != _MAGIC:
            raise ValueError("not a shipped shape store")
        key, n, zlen, plen, slen, crc = _HEAD.unpack(f.read(_HEAD.size))
        self.key = key.decode("ascii", "replace")
        body = f.tell()
        check = 0
        for block in iter(lambda: f.read(1 << 18), b""):
            check = zlib.crc32(block, check)
        if check != crc:
            raise ValueError("damaged shipped shape store")
        f.seek(body)
        self.zdict = f.read(zlen)
        self.patterns = marshal.loads(zlib.decompress(f.read(plen)))
        self._samples = (f.tell(), slen)
        f.seek(slen, os.SEEK_CUR)
        self.hashes = array.array("Q")
        self.hashes.frombytes(f.read(8 * n))
        self.offsets = array.array("I")
        self.offsets.frombytes(f.read(4 * (n + 1)))
        self.data = f.tell()
        if len(self.hashes) != n or len(self.offsets) != n + 1 or \
                self.data + self.offsets[-1] != os.fstat(f.fileno()).st_size:
            raise ValueError("damaged shipped shape store")

    def __len__(self) -> int:
        return len(self.hashes)

    def entry(self, i: int) -> tuple:
        """(shape key, stored builder) of the i-th shape."""
        start, end = self.offsets[i], self.offsets[i + 1]
        self.file.seek(self.data + start)
        d = zlib.decompressobj(zdict=self.zdict)
        raw = d.decompress(self.file.read(end - start))
        if not d.eof:
            raise ValueError("damaged shipped shape")
        return marshal.loads(raw)

    def get(self, key: str):
        """The stored builder of `key` (marshal bytes, or None: no builder), else MISSING.
        The entry's own key is compared: a hash collision is a miss, never a wrong builder;
        so is an entry that cannot be read (the file changed under us)."""
        h, hashes = _key_hash(key), self.hashes
        i = bisect.bisect_left(hashes, h)
        while i < len(hashes) and hashes[i] == h:
            try:
                stored_key, blob = self.entry(i)
            except (OSError, ValueError, EOFError, TypeError, zlib.error):
                return MISSING
            if stored_key == key:
                return blob
            i += 1
        return MISSING

    def samples(self) -> list:
        """One (context, chunk) of each shape, in entry order."""
        at, size = self._samples
        self.file.seek(at)
        return marshal.loads(zlib.decompress(self.file.read(size)))

    def close(self) -> None:
        file = getattr(self, "file", None)
        if file is not None:
            file.close()

    __del__ = close             # a cache dropped by forget() closes its file


def shipped_path() -> Path | None:
    """The shipped store to use: $PTX2PY_SHIPPED_SHAPES, else the package's; None when
    off (PTX2PY_SHAPE_CACHE=off turns it off too: no stored builder at all)."""
    if cache_dir() is None:
        return None
    value = os.environ.get(SHIPPED_ENV)
    if value is not None:
        return None if value.strip().lower() in OFF else Path(value)
    return SHIPPED


def open_shipped(path: Path | None, key: str | None = None) -> Shipped | None:
    """The shipped store at `path` if it is intact and made for `key` (default: this
    code's shipped_key()), else None: a stale or damaged one is ignored, never an error."""
    if path is None:
        return None
    try:
        store = Shipped(path)
    except (OSError, ValueError, EOFError, TypeError, struct.error, zlib.error):
        return None
    if store.key != (key or shipped_key()):
        store.close()
        return None
    return store


class StoredShapes(dict):
    """Stored builders by shape key: the user's store (read whole, into the dict) over
    the shipped store (opened on the first key the user's store lacks, then read one
    shape at a time; a shape found there is kept in the dict)."""

    __slots__ = ("shipped",)

    def __init__(self):
        super().__init__()
        self.shipped: Shipped | None | bool = False        # False: not opened yet

    def __contains__(self, key) -> bool:
        if dict.__contains__(self, key):
            return True
        shipped = self.shipped
        if shipped is False:
            shipped = self.shipped = open_shipped(shipped_path())
            if shipped is not None:
                from .shapes import add_pattern_sources

                add_pattern_sources(shipped.patterns)
        if shipped is None:
            return False
        blob = shipped.get(key)
        if blob is MISSING:
            return False
        self[key] = blob
        return True
