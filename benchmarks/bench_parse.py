"""ptx2py parse+emit against pyptx 0.1.1's parse, on the 12 largest corpus files, in one run.

    python benchmarks/bench_parse.py [--repeat 3] [--files 12]

Reports per file: size, ptx2py parse+emit (first pass, with the statement-shape
cache as a folder check leaves it, and the median of repeats), pyptx parse
(median), MB/s, and the time ratio; then the geometric means and the peak RSS of
each tool parsing the largest file in a fresh process.
"""

from __future__ import annotations

import argparse

from common import geomean, largest_files, median_time, peak_rss_mb, table, timed

import ptxgrammar


def ptx2py_roundtrip(text: str) -> str:
    out = ptxgrammar.emit(ptxgrammar.parse(text))
    assert out == text
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--files", type=int, default=12)
    args = ap.parse_args()
    from pyptx.parser import parse as pyptx_parse

    rows, first_ratios, warm_ratios, ours_bytes, ours_time, peer_bytes, peer_time = [], [], [], 0, 0.0, 0, 0.0
    for path in largest_files(args.files):
        text = ptxgrammar.read_ptx(path)
        size = len(text)
        first, _ = timed(ptx2py_roundtrip, text)
        warm, _ = median_time(ptx2py_roundtrip, text, args.repeat)
        peer, result = median_time(pyptx_parse, text, args.repeat)
        ok = not isinstance(result, Exception)
        ours_bytes += size
        ours_time += warm
        if ok:
            peer_bytes += size
            peer_time += peer
            first_ratios.append(peer / first)
            warm_ratios.append(peer / warm)
        rows.append((str(path.relative_to(path.parents[1])), f"{size / 1e6:.2f}", f"{first * 1e3:.0f}", f"{warm * 1e3:.0f}",
                     f"{size / warm / 1e6:.2f}", f"{peer * 1e3:.0f}" if ok else "fails",
                     f"{size / peer / 1e6:.2f}" if ok else "-", f"{peer / warm:.2f}x" if ok else "-"))
    print(table(rows, ["file", "MB", "ptx2py 1st ms", "ptx2py ms", "ptx2py MB/s", "pyptx ms", "pyptx MB/s", "speedup"]))
    print(f"\nptx2py parse+emit: {ours_bytes / ours_time / 1e6:.2f} MB/s; pyptx parse: {peer_bytes / peer_time / 1e6:.2f} MB/s")
    print(f"geometric mean speedup (files pyptx parses: {len(warm_ratios)}): "
          f"{geomean(warm_ratios):.2f}x (median of {args.repeat}), {geomean(first_ratios):.2f}x (first pass)")
    biggest = largest_files(1)[0]
    ours = peak_rss_mb(f"import ptxgrammar as g; t=g.read_ptx({str(biggest)!r}); assert g.emit(g.parse(t)) == t")
    theirs = peak_rss_mb(f"from pyptx.parser import parse; parse(open({str(biggest)!r}).read())")
    print(f"peak RSS parsing {biggest.name} ({biggest.stat().st_size / 1e6:.2f} MB): "
          f"ptx2py {ours:.0f} MB, pyptx {theirs:.0f} MB")


if __name__ == "__main__":
    main()
