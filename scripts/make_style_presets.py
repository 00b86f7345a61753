"""Write transpile/style_presets.json: each producer's usual formatting, from the corpus.

A preset holds the style entries (see transpile/style.py) whose value is the same in at
least half of the producer's corpus files *that have the entry's context* (a key a file's
statements consult: an address `[%rd1+4]`, an `ldmatrix`, an inline-asm block), so
`ptx.style("nvcc", {...})` lists only what a module does differently (nvcc builds with
line info have their own, "nvcc-lineinfo"; each module takes the preset that leaves it
fewest entries). A context seen in fewer than MIN_FILES files says too little. A statement's
lead after a given previous statement counts over all the producer's files: that context is
not the statement's own (moving a statement makes it), unlike its tokens or a `}`'s container. Entries
the preset's own fallback rule already predicts are left out. Run after the corpus changes:

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
MIN_FILES = 5
JOBS = 2


def observed(path: str) -> dict:
    """Every key the file's statements consult (its finer and coarse keys), with its usual value."""
    from ptx2py.ptxgrammar import parse
    from ptx2py.transpile.style import infer_style

    return infer_style(parse(Path(path).read_bytes().decode("latin-1"))).own


def preset_entries(seen: dict, files: int) -> dict:
    """{key: value} for each key whose most common value holds in at least SHARE of the
    files that consult it (of all `files` for a lead after a previous statement) and in at
    least MIN_FILES, less the entries the table's
    fallback rule predicts anyway (dropping those changes no prediction: each one's value
    is what the keys after it in the fallback chain give)."""
    from ptx2py.transpile.style import Style

    table = {}
    for k, cnt in seen.items():
        v, n = cnt.most_common(1)[0]
        if n >= SHARE * (files if after_previous(k) else sum(cnt.values())) and n >= MIN_FILES:
            table[k] = v
    style = Style(table)
    return {k: v for k, v in table.items() if v != style.fallback(k)}


def after_previous(key) -> bool:
    """A statement's lead key by the previous statement (not a `}`'s, by its container)."""
    k = key[1:] if key[0] == "asm" else key
    return k[0] == "L" and len(k) == 4 and k[1] != "}"


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
    with ProcessPoolExecutor(JOBS) as ex:
        for (preset, _), table in zip(jobs, ex.map(observed, [p for _, p in jobs], chunksize=4)):
            files[preset] += 1
            for k, v in table.items():
                seen[preset][k][v] += 1
    out = {}
    for preset in sorted(seen):
        entries = [[list(k), v] for k, v in preset_entries(seen[preset], files[preset]).items()]
        out[preset] = sorted(entries, key=repr)
        print(f"{preset}: {len(entries)} entries from {files[preset]} files")
    (ROOT / "transpile" / "style_presets.json").write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
