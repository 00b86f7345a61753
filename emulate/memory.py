"""State spaces as byte arrays, and generic addressing.

Address map (64-bit generic space, one per launch):
  global regions        from GLOBAL_BASE, each 256-byte aligned, with a 256-byte gap between
                        regions so that an access just past a buffer hits no other buffer;
  const regions         the same from CONST_BASE (a generic address there reads `.const`);
  shared window         SHARED_WINDOW + shared offset (the CTA's own shared memory);
  local window          LOCAL_WINDOW + local offset (the thread's own local memory);
  param window          PARAM_WINDOW + kernel-param offset (`cvta.param`).
State-space addresses (`ld.shared [%r]`, `ld.local`, `ld.param`) are offsets from 0 in their space.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GLOBAL_BASE = 0x0000_7F00_0000_0000
CONST_BASE = GLOBAL_BASE + (1 << 44)
SHARED_WINDOW = 0x0000_0100_0000_0000
LOCAL_WINDOW = 0x0000_0200_0000_0000
PARAM_WINDOW = 0x0000_0300_0000_0000
WINDOW_SIZE = 1 << 32
GAP = 256


@dataclass
class Region:
    """A contiguous byte range of one state space."""

    name: str
    base: int
    data: np.ndarray          # uint8
    space: str = "global"
    readonly: bool = False

    @property
    def size(self) -> int:
        return int(self.data.shape[-1])


class RegionSet:
    """Global or const memory: named regions at fixed addresses."""

    def __init__(self, space: str, base: int = GLOBAL_BASE):
        self.space = space
        self.regions: list[Region] = []
        self._next = base
        self._bases = np.zeros(0, np.uint64)
        self._sizes = np.zeros(0, np.uint64)

    def add(self, name: str, data: np.ndarray, align: int = 256, readonly: bool = False) -> Region:
        base = (self._next + align - 1) // align * align
        region = Region(name, base, np.ascontiguousarray(data).view(np.uint8).reshape(-1).copy(),
                        self.space, readonly)
        self.regions.append(region)
        self._next = base + max(region.size, 1) + GAP
        self._bases = np.array([r.base for r in self.regions], np.uint64)
        self._sizes = np.array([r.size for r in self.regions], np.uint64)
        return region

    def by_name(self, name: str) -> Region | None:
        return next((r for r in self.regions if r.name == name), None)

    def locate(self, addrs: np.ndarray, nbytes: int):
        """(region index per address, -1 where none holds [addr, addr+nbytes); offsets)."""
        idx = np.searchsorted(self._bases, addrs, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        bases = self._bases[safe] if len(self.regions) else np.zeros_like(addrs)
        sizes = self._sizes[safe] if self.regions else np.zeros_like(addrs)
        offs = addrs - bases
        ok &= (addrs >= bases) & (offs + np.uint64(nbytes) <= sizes)
        return np.where(ok, idx, -1), offs.astype(np.int64)

    @staticmethod
    def by_region(idx: np.ndarray):
        """(region index, lanes) for each region `locate` found: lanes a slice of all when every
        address lies in one region (the common case: no np.unique, no masks)."""
        if idx.size and idx[0] >= 0 and (idx == idx[0]).all():
            yield int(idx[0]), slice(None)
            return
        for r in np.unique(idx[idx >= 0]):
            yield int(r), idx == r

    def contains(self, addr: int) -> bool:
        return bool(self.regions) and self.regions[0].base <= addr < self._next + WINDOW_SIZE


WINDOWS = ("global", "shared", "local", "param")      # window_codes' numbering


def window_codes(addrs: np.ndarray) -> np.ndarray:
    """Which space each generic address falls in, as an index into WINDOWS (0: global)."""
    out = np.zeros(addrs.shape, np.int8)
    for code, base in ((1, SHARED_WINDOW), (2, LOCAL_WINDOW), (3, PARAM_WINDOW)):
        out[(addrs >= np.uint64(base)) & (addrs < np.uint64(base + WINDOW_SIZE))] = code
    return out


def single_window(addrs: np.ndarray) -> str | None:
    """The one space ('global', 'const', 'shared', 'local' or 'param') every generic address
    falls in, judged from the lowest and highest (windows are ranges); None when they may
    differ (or there are none)."""
    if not len(addrs):
        return None
    lo, hi = int(addrs.min()), int(addrs.max())
    for name, base in (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW), ("param", PARAM_WINDOW)):
        if base <= lo and hi < base + WINDOW_SIZE:
            return name
    if hi < SHARED_WINDOW or lo >= PARAM_WINDOW + WINDOW_SIZE:     # no window between them
        if hi < CONST_BASE:
            return "global"
        if lo >= CONST_BASE:
            return "const"
    return None


def window_of(addrs: np.ndarray) -> np.ndarray:
    """Which space each generic address falls in: 'shared', 'local', 'param' or 'global'."""
    return np.array(WINDOWS, dtype=object)[window_codes(addrs)]


WINDOW_BASE = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "param": PARAM_WINDOW, "global": 0, "const": 0}


def gather(data: np.ndarray, offsets: np.ndarray, nbytes: int) -> np.ndarray:
    """Bytes [offset, offset+nbytes) for each offset: shape (n, nbytes)."""
    return data[offsets[:, None] + np.arange(nbytes)]


def scatter(data: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
    """Store rows of bytes; for the same address the last row (the last lane) wins."""
    data[offsets[:, None] + np.arange(values.shape[1])] = values


def gather_lanes(data2d: np.ndarray, lanes: np.ndarray, offsets: np.ndarray, nbytes: int) -> np.ndarray:
    """Per-lane memory (local, call params): data2d[lane, offset + k]."""
    return data2d[lanes[:, None], offsets[:, None] + np.arange(nbytes)]


def scatter_lanes(data2d: np.ndarray, lanes: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
    data2d[lanes[:, None], offsets[:, None] + np.arange(values.shape[1])] = values


def bytes_of(values: np.ndarray, nbytes: int) -> np.ndarray:
    """Raw bits (uint array, one per lane) as little-endian bytes: shape (n, nbytes)."""
    return np.ascontiguousarray(values).view(np.uint8).reshape(len(values), -1)[:, :nbytes]


def from_bytes(rows: np.ndarray, container) -> np.ndarray:
    return np.ascontiguousarray(rows).view(container).reshape(-1)
