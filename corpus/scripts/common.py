"""Shared helpers for the corpus generators: paths, feature tagging, manifest updates."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent
SRC = CORPUS / "src"
PTX = CORPUS / "ptx"
LAUNCH = CORPUS / "launch"
MANIFEST = CORPUS / "manifest.json"
# Fixed build directory so that paths embedded in debug info do not depend on the checkout location.
BUILD = Path(os.environ.get("PTX2PY_CORPUS_BUILD", "/tmp/ptx2py-corpus-build"))

# (tag, regex over the PTX text)
_PTX_FEATURES = [
    ("wgmma", r"\bwgmma\."),
    ("tma", r"\bcp\.async\.bulk\.tensor\b"),
    ("bulk-copy", r"\bcp\.async\.bulk\.(?!tensor)"),
    ("mbarrier", r"\bmbarrier\."),
    ("tcgen05", r"\btcgen05\."),
    ("cluster", r"%cluster|barrier\.cluster|mapa\."),
    ("mma", r"\bmma\.sync\b|\bwmma\."),
    ("ldmatrix", r"\bldmatrix\."),
    ("stmatrix", r"\bstmatrix\."),
    ("cp.async", r"\bcp\.async\.(ca|cg|commit_group|wait_group|wait_all)\b"),
    ("lineinfo", r"^\s*\.loc\s"),
    ("debug", r"\.section\s+\.debug_info"),
    ("texture", r"\btex\.|\btld4\.|\.texref\b"),
    ("surface", r"\bsuld\.|\bsust\.|\.surfref\b"),
    ("printf", r"\bvprintf\b"),
    ("assert", r"__assertfail"),
    ("atomics", r"\batom\.|\bred\."),
    ("shuffle", r"\bshfl\.sync\b"),
    ("device-calls", r"^\s*call(\.uni)?\s"),
    ("extern", r"^\s*\.extern\s+\.(func|global|const)\b"),
    ("fp8", r"\be4m3\b|\be5m2\b"),
    ("fp16", r"\.f16\b|\.f16x2\b"),
    ("bf16", r"\.bf16\b|\.bf16x2\b"),
    ("fp64", r"\.f64\b"),
    ("shared-dynamic", r"\.extern\s+\.shared"),
    ("const-bank", r"^\s*\.const\s"),
    ("setmaxnreg", r"\bsetmaxnreg\."),
    ("elect", r"\belect\.sync\b"),
    ("tensormap", r"\btensormap\.|prefetch\.tensormap|\.param\s+\.align\s+64\s+\.b8"),
]


def ptx_features(text: str) -> list[str]:
    tags = []
    for tag, pat in _PTX_FEATURES:
        if re.search(pat, text, re.M):
            tags.append(tag)
    return tags


def ptx_target(text: str) -> str:
    m = re.search(r"^\s*\.target\s+([\w]+)", text, re.M)
    return m.group(1) if m else "unknown"


def ptx_version(text: str) -> str:
    m = re.search(r"^\s*\.version\s+([\d.]+)", text, re.M)
    return m.group(1) if m else "unknown"


def ptx_entries(text: str) -> list[str]:
    return re.findall(r"^\s*\.(?:visible\s+|weak\s+)?\.entry\s+([\w$]+)", text, re.M)


def record(path: Path, producer: str, producer_version: str, features=(), **extra) -> dict:
    text = path.read_text()
    feats = sorted(set(ptx_features(text)) | set(features))
    rec = {
        "path": str(path.relative_to(CORPUS)),
        "producer": producer,
        "producer_version": producer_version,
        "target": ptx_target(text),
        "ptx_version": ptx_version(text),
        "features": feats,
        "size": path.stat().st_size,
        "entries": ptx_entries(text),
    }
    rec.update(extra)
    return rec


def update_manifest(producer: str, records: list[dict]) -> None:
    """Replace all records of `producer` in manifest.json with `records` (sorted, stable)."""
    import fcntl
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / "manifest.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _update_manifest_locked(producer, records)


def _update_manifest_locked(producer: str, records: list[dict]) -> None:
    data = {"files": []}
    if MANIFEST.exists():
        data = json.loads(MANIFEST.read_text())
    files = [r for r in data.get("files", []) if r["producer"] != producer]
    files.extend(records)
    files.sort(key=lambda r: r["path"])
    data = {
        "description": "PTX corpus for ptx2py; regenerate with corpus/regenerate",
        "count": len(files),
        "total_bytes": sum(r["size"] for r in files),
        "files": files,
    }
    MANIFEST.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def write_json(path: Path, obj) -> None:
    """Write JSON keeping insertion order (argument / signature order matters for launch sidecars)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1) + "\n")


def clean_dir(d: Path, pattern: str = "*") -> None:
    d.mkdir(parents=True, exist_ok=True)
    for p in d.glob(pattern):
        if p.is_file():
            p.unlink()
