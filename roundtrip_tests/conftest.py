"""Shared fixtures: where the PTX test inputs live."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
import tempfile
from pathlib import Path

import pytest

# The suite keeps its statement-shape store (ptxgrammar/shapecache.py) in a folder of
# its own, never in the user's cache; subprocesses inherit it.
os.environ.setdefault("PTX2PY_SHAPE_CACHE", tempfile.mkdtemp(prefix="ptx2py-test-shapes-"))

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus" / "ptx"
SHARED = ROOT.parent / "shared"
EXTERNAL = SHARED / "corpus-external"
PROBES = SHARED / "ptx-syntax-probes"
CASES = Path(__file__).resolve().parent / "cases"
# Test material that is no part of the package: the corpus checks beside the corpus
# (corpus/scripts: corpus_check, its references, the worked example's gallery) and the
# engine's mutation test (scripts/sync_mutations.py).
sys.path[:0] = [str(ROOT / "corpus" / "scripts"), str(ROOT / "scripts")]


def ptx_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.ptx")) if folder.is_dir() else []


def corpus_files() -> list[Path]:
    return ptx_files(CORPUS)


def external_files() -> list[Path]:
    return ptx_files(EXTERNAL)


def probe_files() -> list[Path]:
    return ptx_files(PROBES / "accepted") + ptx_files(PROBES / "generated")


def file_id(path: Path) -> str:
    for base in (CORPUS, EXTERNAL, PROBES):
        try:
            return str(path.relative_to(base))
        except ValueError:
            pass
    return path.name


def sample(files: list[Path], n: int) -> list[Path]:
    """An even spread of n files by name across producers (deterministic)."""
    if len(files) <= n:
        return files
    step = len(files) / n
    return [files[int(i * step)] for i in range(n)]


def _ptxas():
    """The ptxas the project itself would use (ptx2py.verify.tools: PATH, $CUDA_HOME, the CUDA wheels,
    Triton's), so a machine where `.[test]` installed ptxas from pip runs the ptxas tests too."""
    from ptx2py.verify import tools

    tool = tools.find_ptxas(None)[0]
    return tool.path if tool is not None else None


PTXAS = _ptxas()
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="no ptxas found (ptx2py.verify.tools' search)")


def needs(folder: Path):
    return pytest.mark.skipif(not folder.is_dir(), reason=f"{folder} is not present on this machine")


# Large inputs are time-consuming for the full grammar: tests pick by size.
def small(files: list[Path], limit: int = 200_000) -> list[Path]:
    return [f for f in files if os.path.getsize(f) <= limit]


@pytest.fixture(autouse=True)
def _collector_left_on():
    """Every test leaves the cyclic GC on: a run that left it off made each later test of the
    worker keep its trees (the suite's memory grew by gigabytes)."""
    yield
    if not gc.isenabled():
        gc.enable()
        pytest.fail("the cyclic garbage collector was left disabled")


def _libc_trim():
    """glibc's malloc_trim, or None off glibc."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _libc_trim()


@pytest.fixture(autouse=True, scope="module")
def _heap_given_back():
    """After each test module, give the freed heap back to the system: a worker runs many
    modules, and glibc keeps what the engine's and the parser's large runs freed (each
    worker otherwise ends near its largest module's peak, the run's peak the sum of both)."""
    yield
    if _TRIM is not None:
        gc.collect()
        _TRIM(0)
