"""Write transpile/style_presets.json: each producer's usual formatting, from the corpus.

A preset holds the style entries (see transpile/style.py) that at least half of a
producer's corpus files record with the same value, so `ptx.style("nvcc", {...})`
lists only what a module does differently (nvcc builds with line info have their
own, "nvcc-lineinfo"; each module takes the preset that leaves it fewest entries). Run after the corpus changes:

    python scripts/make_style_presets.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# producer folders of corpus/ptx -> preset name (LLVM's NVPTX back end writes the others)
PRESETS = {"nvcc": "nvcc", "triton": "llvm", "pallas": "llvm", "numba": "llvm", "clang": "llvm", "llvm": "llvm"}
SHARE = 0.5


def recorded(path: str) -> dict:
    from ptxgrammar import parse
    from transpile.style import Style, infer_style

    style = infer_style(parse(Path(path).read_bytes().decode("latin-1")))
    return Style(style.own, style.newline).overrides()  # relative to no preset


def preset_of(path: Path) -> str:
    """The preset a corpus file counts toward: its producer's, or nvcc's with line info
    (`-lineinfo`, `-G`: `.loc` lines, `.file` table and debug sections) apart."""
    name = PRESETS[path.parent.name]
    if name == "nvcc" and "\n\t.loc\t" in path.read_bytes().decode("latin-1"):
        return "nvcc-lineinfo"
    return name


def main() -> int:
    jobs = [(preset_of(f), str(f)) for f in sorted((ROOT / "corpus" / "ptx").rglob("*.ptx"))
            if f.parent.name in PRESETS]
    seen: dict = defaultdict(lambda: defaultdict(Counter))
    files = Counter()
    with ProcessPoolExecutor() as ex:
        for (preset, _), table in zip(jobs, ex.map(recorded, [p for _, p in jobs], chunksize=4)):
            files[preset] += 1
            for k, v in table.items():
                seen[preset][k][v] += 1
    out = {}
    for preset in sorted(seen):
        entries = []
        for k, cnt in seen[preset].items():
            v, n = cnt.most_common(1)[0]
            if n >= SHARE * files[preset]:
                entries.append([list(k), v])
        out[preset] = sorted(entries, key=repr)
        print(f"{preset}: {len(entries)} entries from {files[preset]} files")
    (ROOT / "transpile" / "style_presets.json").write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
