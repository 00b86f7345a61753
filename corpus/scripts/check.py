#!/usr/bin/env python3
"""Sanity checks over the generated corpus: manifest matches files on disk, size limits, counts."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CORPUS, MANIFEST, PTX  # noqa: E402

MAX_TOTAL = 40 * 1000 * 1000
MAX_FILE = 3 * 1000 * 1000


def main():
    data = json.loads(MANIFEST.read_text())
    recs = {r["path"]: r for r in data["files"]}
    on_disk = {str(p.relative_to(CORPUS)) for p in PTX.rglob("*.ptx")}
    errors = []
    if set(recs) != on_disk:
        errors.append(f"manifest/disk mismatch: missing={sorted(on_disk - set(recs))[:5]} "
                      f"stale={sorted(set(recs) - on_disk)[:5]}")
    for path, r in recs.items():
        p = CORPUS / path
        if p.exists() and p.stat().st_size != r["size"]:
            errors.append(f"size mismatch {path}")
        if r["size"] > MAX_FILE:
            errors.append(f"too large: {path} {r['size']}")
        if r.get("launch") and not (CORPUS / r["launch"]).exists():
            errors.append(f"missing sidecar {r['launch']}")
    total = sum(r["size"] for r in recs.values())
    if total > MAX_TOTAL:
        errors.append(f"total size {total} > {MAX_TOTAL}")
    print(f"{len(recs)} PTX files, {total / 1e6:.1f} MB;",
          ", ".join(f"{k}={v}" for k, v in sorted(Counter(r['producer'] for r in recs.values()).items())))
    for e in errors:
        print("ERROR", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
