"""ptx2py parse+emit against pyptx 0.1.1's parse, on the 12 largest corpus files, in one run.

    python benchmarks/bench_parse.py [--repeat 3] [--files 12]

Reports per file: size, ptx2py parse+emit (first pass cold with nothing stored,
first pass cold as installed, and the median of repeats), pyptx parse (median),
MB/s, and the time ratio; then the geometric means and the peak RSS of each tool
parsing the largest file in a fresh process.

Both first passes start from an empty in-memory shape cache (ptxgrammar/shapecache.py):
*nothing stored* has no on-disk store and the shipped store off (the grammar builds
every shape); *as installed* has an empty user store and the store shipped with the
package on (learned from every corpus file, the measured ones included). The grammar
is built before the first file, so neither pass times its construction.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile

from common import geomean, largest_files, median_time, peak_rss_mb, table, timed

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import parser, shapecache


def ptx2py_roundtrip(text: str) -> str:
    out = ptxgrammar.emit(ptxgrammar.parse(text))
    assert out == text
    return out


def first_pass(text: str, user_store: str, shipped: bool) -> float:
    """Seconds of a parse+emit from an empty in-memory shape cache."""
    os.environ[shapecache.ENV] = user_store
    if shipped:
        os.environ.pop(shapecache.SHIPPED_ENV, None)
    else:
        os.environ[shapecache.SHIPPED_ENV] = "off"
    parser.SHAPES.forget(store=True)
    return timed(ptx2py_roundtrip, text)[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--files", type=int, default=12)
    args = ap.parse_args()
    from pyptx.parser import parse as pyptx_parse

    rows, warm_ratios, ours_bytes, ours_time, peer_bytes, peer_time = [], [], 0, 0.0, 0, 0.0
    first_ratios, installed_ratios = [], []
    parser._parser("spans"), parser._parser("plain")          # grammar construction is not timed
    scratch = tempfile.mkdtemp(prefix="ptx2py-bench-parse-")
    saved = {k: os.environ.get(k) for k in (shapecache.ENV, shapecache.SHIPPED_ENV)}
    for i, path in enumerate(largest_files(args.files)):
        text = ptxgrammar.read_ptx(path)
        size = len(text)
        first = first_pass(text, "off", shipped=False)
        installed = first_pass(text, os.path.join(scratch, str(i)), shipped=True)
        warm, _ = median_time(ptx2py_roundtrip, text, args.repeat)
        peer, result = median_time(pyptx_parse, text, args.repeat)
        ok = not isinstance(result, Exception)
        ours_bytes += size
        ours_time += warm
        if ok:
            peer_bytes += size
            peer_time += peer
            first_ratios.append(peer / first)
            installed_ratios.append(peer / installed)
            warm_ratios.append(peer / warm)
        rows.append((str(path.relative_to(path.parents[1])), f"{size / 1e6:.2f}", f"{first * 1e3:.0f}",
                     f"{installed * 1e3:.0f}", f"{warm * 1e3:.0f}",
                     f"{size / warm / 1e6:.2f}", f"{peer * 1e3:.0f}" if ok else "fails",
                     f"{size / peer / 1e6:.2f}" if ok else "-", f"{peer / warm:.2f}x" if ok else "-"))
    shutil.rmtree(scratch, ignore_errors=True)
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    print(table(rows, ["file", "MB", "1st, nothing stored ms", "1st, as installed ms", "ptx2py ms", "ptx2py MB/s",
                       "pyptx ms", "pyptx MB/s", "speedup"]))
    print(f"\nptx2py parse+emit: {ours_bytes / ours_time / 1e6:.2f} MB/s; "
          f"pyptx parse: {peer_bytes / peer_time / 1e6:.2f} MB/s")
    print(f"geometric mean speedup (files pyptx parses: {len(warm_ratios)}): "
          f"{geomean(warm_ratios):.2f}x (median of {args.repeat}), {geomean(first_ratios):.2f}x (first pass, nothing "
          f"stored), {geomean(installed_ratios):.2f}x (first pass, as installed)")
    biggest = largest_files(1)[0]
    ours = peak_rss_mb(f"from ptx2py import ptxgrammar as g; t=g.read_ptx({str(biggest)!r}); "
                       "assert g.emit(g.parse(t)) == t")
    theirs = peak_rss_mb(f"from pyptx.parser import parse; parse(open({str(biggest)!r}).read())")
    print(f"peak RSS parsing {biggest.name} ({biggest.stat().st_size / 1e6:.2f} MB): "
          f"ptx2py {ours:.0f} MB, pyptx {theirs:.0f} MB")


if __name__ == "__main__":
    main()
