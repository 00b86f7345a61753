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

The user's store is two files. ``shapes-KEY.bin`` is a log: records are appended, one
write per parse that met new shapes, each framed with its length and CRC32 and
zlib-compressed; reading stops at a torn or corrupt record. It is read whole, but only
when a parse meets a shape that neither the shipped store nor the index holds, and it
stays small: once it passes LOG_MAX the process that wrote it folds it into
``shapes-KEY.idx``, an index in the shipped store's format (read one shape at a time,
so its size costs a start-up nothing). The fold keeps the most recently used shapes up to
INDEX_MAX bytes of builders and drops the rest: a shape is used when it is learned, or
met in the index by a process (which appends it to the log again if the index has not
seen it used since an earlier fold). So the user's store never exceeds
2 LOG_MAX + INDEX_MAX + INDEX_OVERHEAD (4.6 MiB), however many inputs it has seen. Set PTX2PY_SHAPE_CACHE to
another folder, or to ``off`` to keep nothing on disk (and use no stored builder at all,
the shipped ones included).

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
LOG_MAX = 256 << 10            # the log is folded into the index past this (read whole: kept small)
INDEX_MAX = 4 << 20            # the index keeps the most recently used builders up to this
INDEX_OVERHEAD = 64 << 10      # and its file adds at most this (compression dictionary, tables)
_FRAME = struct.Struct("<II")  # payload length, CRC32 of the payload


# Modules of the package that take no part in making or running a builder (the
# emitter, error messages, the default spacing, this file): the shipped store's name
# leaves them out, so editing them does not make it stale.
NOT_IN_BUILDERS = frozenset({"__init__.py", "emitter.py", "errors.py", "files.py", "style.py", "shapecache.py"})


@functools.lru_cache(maxsize=1)
def _keys() -> tuple[str, str]:
    """(code_key, shipped_key), from one read of the sources."""
    every, builders = hashlib.sha256(), hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        name = path.relative_to(PACKAGE).as_posix()
        if path.suffix in (".py", ".lark") and "__pycache__" not in path.parts:
            part = name.encode() + b"\0" + path.read_bytes() + b"\0"
            every.update(part)
            if name not in NOT_IN_BUILDERS:
                builders.update(part)
    tail = _lark_identity() + f"\0{sys.implementation.cache_tag}".encode()
    every.update(tail)
    builders.update(tail)
    return every.hexdigest()[:24], builders.hexdigest()[:24]


def _lark_identity() -> bytes:
    """Lark's `__init__.py`, which names its version, read without importing Lark (the stored
    builders let a parse run without it)."""
    import importlib.util

    spec = importlib.util.find_spec("lark")
    try:
        return Path(spec.origin).read_bytes()
    except (AttributeError, TypeError, OSError):      # not a plain install: ask Lark itself
        import lark

        return lark.__version__.encode()


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
    """The user's log of learned shapes."""
    folder = cache_dir()
    return None if folder is None else folder / f"shapes-{code_key()}.bin"


def index_path() -> Path | None:
    """The user's index of shapes, folded from the log (a shipped-format store)."""
    folder = cache_dir()
    return None if folder is None else folder / f"shapes-{code_key()}.idx"


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
        if path.exists() and path.stat().st_size > 2 * LOG_MAX:      # a fold failed: a cache, not an archive
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
    return _write_store(path, _MAGIC, shipped_key(), patterns,
                        [(key, blob, (context, chunk)) for key, context, chunk, blob in entries])


def _write_store(path: Path, magic: bytes, key: str, patterns: dict, entries: list) -> int:
    """A store in the shipped layout from [(shape key, stored builder, note)]: the notes are
    the shipped store's samples, the user index's use stamps."""
    entries = sorted(entries, key=lambda e: (_key_hash(e[0]), e[0]))
    raw = [marshal.dumps((k, blob)) for k, blob, _ in entries]
    zdict = b"".join(raw[::max(1, len(raw) // 256)])[-32768:]   # common code, spread over the store
    data, offsets = bytearray(), array.array("I", [0])
    for item in raw:
        c = zlib.compressobj(9, zdict=zdict)
        data += c.compress(item) + c.flush()
        offsets.append(len(data))
    pats = zlib.compress(marshal.dumps(patterns), 9)
    samples = zlib.compress(marshal.dumps([note for _, _, note in entries]), 9)
    hashes = array.array("Q", [_key_hash(e[0]) for e in entries])
    body = zdict + pats + samples + hashes.tobytes() + offsets.tobytes() + bytes(data)
    head = _HEAD.pack(key.encode(), len(entries), len(zdict), len(pats), len(samples), zlib.crc32(body))
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(magic + head + body)
    os.replace(tmp, path)           # a process reading the old store keeps reading the old file
    return len(magic) + len(head) + len(body)


class Shipped:
    """An open shipped store: its index in memory, each builder read from the file and
    decompressed when its shape is met (the store itself never sits in memory)."""

    def __init__(self, path: Path, magic: bytes = _MAGIC, verify: bool = True):
        self.file = open(path, "rb")                  # noqa: SIM115 - kept open while in use
        self.magic, self.verify = magic, verify
        try:
            self._read_index()
        except BaseException:
            self.file.close()
            raise

    def _read_index(self) -> None:
        f = self.file
        if f.read(len(self.magic)) != self.magic:
            raise ValueError("not a shipped shape store")
        key, n, zlen, plen, slen, crc = _HEAD.unpack(f.read(_HEAD.size))
        self.key = key.decode("ascii", "replace")
        body = f.tell()
        if self.verify:     # the user's index is not read whole: each entry is checked when read
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
        return self.find(key)[1]

    def find(self, key: str) -> tuple:
        """(entry number, stored builder) of `key`, else (-1, MISSING)."""
        h, hashes = _key_hash(key), self.hashes
        i = bisect.bisect_left(hashes, h)
        while i < len(hashes) and hashes[i] == h:
            try:
                stored_key, blob = self.entry(i)
            except (OSError, ValueError, EOFError, TypeError, zlib.error):
                return -1, MISSING
            if stored_key == key:
                return i, blob
            i += 1
        return -1, MISSING

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


def open_index(path: Path | None) -> Shipped | None:
    """The user's index if it is there and readable, else None (then it is rebuilt by the next
    fold). Its entries are checked one by one when read, like the shipped store's."""
    if path is None:
        return None
    try:
        store = Shipped(path, _INDEX_MAGIC, verify=False)
        store.stamps = store.samples()
    except (OSError, ValueError, EOFError, TypeError, struct.error, zlib.error):
        return None
    if store.key != code_key() or len(store.stamps) != len(store):
        store.close()
        return None
    store.generation = max(store.stamps, default=0)
    return store


# The user index's file format (the shipped layout; its notes are the entries' use stamps).
_INDEX_MAGIC = b"ptx2py shape index 1\n"


class StoredShapes(dict):
    """Stored builders by shape key: what this process has met (the dict) over the shipped
    store, the user's index (both opened on the first key the dict lacks, then read one shape
    at a time) and the user's log (read whole, only when neither of them has a key). A shape
    found in a store is kept in the dict."""

    __slots__ = ("shipped", "index", "log_read", "damaged", "touched", "log", "index_file")

    def __init__(self, log: Path | None = None, index: Path | None = None):
        super().__init__()
        self.log, self.index_file = log, index
        self.shipped: Shipped | None | bool = False        # False: not opened yet
        self.index: Shipped | None | bool = False
        self.log_read = False
        self.damaged = False            # the log ends in a torn record: rewrite it whole
        self.touched: list = []         # index entries used here, not used since the last fold

    def __contains__(self, key) -> bool:
        if dict.__contains__(self, key):
            return True
        if self._from_shipped(key) or self._from_index(key):
            return True
        if not self.log_read:
            self._read_log()
            return dict.__contains__(self, key)
        return False

    def _from_shipped(self, key) -> bool:
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

    def _from_index(self, key) -> bool:
        index = self.index
        if index is False:
            index = self.index = open_index(self.index_file)
            if index is not None:
                from .shapes import add_pattern_sources

                add_pattern_sources(index.patterns)
        if index is None:
            return False
        i, blob = index.find(key)
        if blob is MISSING:
            return False
        self[key] = blob
        if index.stamps[i] < index.generation:      # not used since an earlier fold: say it is used
            self.touched.append((key, blob))
        return True

    def _read_log(self) -> None:
        from .shapes import add_pattern_sources

        self.log_read = True
        records, intact = read_records(self.log)
        self.damaged = not intact
        for patterns, shapes in records:
            add_pattern_sources(patterns)
            for key, blob in shapes:
                self.setdefault(key, blob)

    def save(self, learned: list, patterns: dict) -> None:
        """Write what this process learned and used to the log (rewritten whole if it was
        damaged), then fold the log into the index once it has grown past LOG_MAX."""
        new, self.touched = learned + self.touched, []
        if not new:
            return
        if self.damaged:
            rewrite(self.log, (patterns, list(self.items())))
            self.damaged = False
        else:
            append_record(self.log, (patterns, new))
        try:
            big = self.log is not None and self.log.stat().st_size > LOG_MAX
        except OSError:
            big = False
        if big:
            fold(self.log, self.index_file, patterns)
            if isinstance(self.index, Shipped):
                self.index.close()
            self.index = False                      # the new index, when next needed


def fold(log: Path, index: Path | None, patterns: dict, keep: int | None = None) -> bool:
    """Fold the log into the index: the most recently used shapes, up to `keep` (INDEX_MAX)
    bytes of stored builders, the log's own at a new stamp; then empty the log. A record
    appended by another process meanwhile may be lost (a cache: it is learned again)."""
    if index is None:
        return False
    keep = INDEX_MAX if keep is None else keep
    old = open_index(index)
    order: dict = {}                                 # key -> (stamp, blob), least recent first
    generation = 0
    all_patterns: dict = {}
    if old is not None:
        generation = old.generation
        all_patterns.update(old.patterns)
        ranked = sorted(range(len(old)), key=lambda i: old.stamps[i])
        for i in ranked:
            try:
                key, blob = old.entry(i)
            except (OSError, ValueError, EOFError, TypeError, zlib.error):
                continue
            order[key] = (old.stamps[i], blob)
        old.close()
    records, _ = read_records(log)
    for record_patterns, shapes in records:
        all_patterns.update(record_patterns)
        for key, blob in shapes:
            order.pop(key, None)                     # moved to the most recent end
            order[key] = (generation + 1, blob)
    all_patterns.update(patterns)
    kept, size = [], 0
    for key, (stamp, blob) in reversed(order.items()):
        size += len(key) + (len(blob) if blob else 0)
        if size > keep:
            break
        kept.append((key, blob, stamp))
    try:
        _write_store(index, _INDEX_MAGIC, code_key(), all_patterns, kept)
        tmp = log.with_name(f"{log.name}.{os.getpid()}.tmp")
        tmp.write_bytes(b"")
        os.replace(tmp, log)
    except OSError:
        return False
    return True
