"""Write the shape store shipped with the package (ptxgrammar/shipped_shapes.bin).

    python scripts/make_shape_store.py            # every corpus/ptx file
    python scripts/make_shape_store.py --check    # exit 1 if the shipped store is stale

Parses every corpus file with nothing stored, so the grammar builds the builder of
every statement shape met (ptxgrammar/shapecache.py), and writes them with one chunk of
each shape and the store's name, shapecache.shipped_key(). Run it after changing the
grammar or any module a builder depends on (roundtrip_tests/test_shipped_shapes.py
fails while the shipped store is stale: the package would ignore it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["PTX2PY_SHAPE_CACHE"] = "off"       # nothing stored: the grammar builds every shape

from ptx2py import ptxgrammar  # noqa: E402
from ptx2py.ptxgrammar import parser, shapecache, shapes  # noqa: E402


def learn(files: list[Path]) -> list[tuple[str, str, str, object]]:
    """(shape key, context, chunk, stored builder) of every shape of `files`, from the grammar."""
    first_chunk: dict[str, tuple[str, str]] = {}
    grammar_builder = parser.ShapeCache._builder

    def noting(cache, context, chunk, key):
        first_chunk.setdefault(key, (context, chunk))
        return grammar_builder(cache, context, chunk, key)

    parser.ShapeCache._builder = noting
    try:
        parser.SHAPES.forget(store=False)
        for path in files:
            try:
                ptxgrammar.parse(ptxgrammar.read_ptx(path))
            except ptxgrammar.ParseError:
                pass                            # corpus files that are bad on purpose
    finally:
        parser.ShapeCache._builder = grammar_builder
    stored = parser.SHAPES.stored
    return [(key, *first_chunk[key], stored[key]) for key in first_chunk if key in stored]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=shapecache.SHIPPED)
    ap.add_argument("--check", action="store_true", help="only say whether the shipped store is current")
    args = ap.parse_args(argv)
    if args.check:
        ok = shapecache.open_shipped(args.out) is not None
        print(f"{args.out}: {'current' if ok else 'stale or missing: run python scripts/make_shape_store.py'}")
        return 0 if ok else 1
    start = time.process_time()
    files = sorted((ROOT / "corpus" / "ptx").rglob("*.ptx"))
    entries = learn(files)
    size = shapecache.write_shipped(args.out, shapes.pattern_sources(), entries)
    print(f"{args.out}: {len(entries)} shapes from {len(files)} files, {size / 1e6:.2f} MB, "
          f"key {shapecache.shipped_key()} ({time.process_time() - start:.1f} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
