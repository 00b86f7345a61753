"""Synchronisation coverage, measured on every run: what the launch exercised of the kernel's
pipeline, so a clean run at a small launch is not read as proof for the pipeline it never ran.

* each mbarrier: the phases it completed (a ring's parity only wraps from the second phase on);
* shared-memory stages: bytes an asynchronous copy (TMA, bulk copy, cp.async) wrote more than once
  in one CTA (a stage refilled after its first use);
* each async-group wait (`cp.async.wait_group N`, `wgmma.wait_group N`, `cp.async.bulk.wait_group N`):
  the most groups outstanding when it ran; a wait that never saw more than N waited for nothing;
* each CTA barrier without a thread count: how many of the CTA's warps reached it.

`gaps()` lists what was left unexercised, in words; `run` and `verify --run cpu` print it.
"""

from __future__ import annotations

import numpy as np


class SyncCoverage:
    def __init__(self):
        self.phases: dict[tuple, int] = {}        # (ctaid, barrier name) -> phases completed
        self.waits: dict[str, list] = {}          # where -> [instruction, N, most groups outstanding]
        self.refills: dict[tuple, int] = {}       # ctaid -> most times one shared byte was written async
        self.async_bytes: dict[tuple, np.ndarray] = {}
        self.barriers: dict[str, list] = {}       # where -> [instruction, warps reached (per CTA, max), warps]
        self._reached: dict[tuple, set] = {}

    # --- recording (called by the handlers) ---------------------------------------------------------
    def mbarrier_initialised(self, cta, name: str) -> None:
        self.phases.setdefault((tuple(cta.ctaid), name), 0)

    def phase_completed(self, cta, name: str) -> None:
        key = (tuple(cta.ctaid), name)
        self.phases[key] = self.phases.get(key, 0) + 1

    def wait(self, where: str, name: str, keep: int, outstanding: int) -> None:
        entry = self.waits.setdefault(where, [name, keep, 0])
        entry[2] = max(entry[2], outstanding)

    def async_write(self, cta, idx: np.ndarray) -> None:
        key = tuple(cta.ctaid)
        counts = self.async_bytes.get(key)
        if counts is None:
            counts = self.async_bytes[key] = np.zeros(cta.shared.size, np.int32)
        idx = np.asarray(idx, np.int64)
        hit = np.zeros(counts.size, bool)      # each byte counted once (a mask: cheaper than np.unique)
        hit[idx[(idx >= 0) & (idx < counts.size)]] = True
        counts[hit] += 1
        if hit.any():
            self.refills[key] = max(self.refills.get(key, 0), int(counts[hit].max()))

    def barrier_reached(self, where: str, name: str, cta, warp) -> None:
        reached = self._reached.setdefault((where, tuple(cta.ctaid)), set())
        reached.add(warp.index)
        entry = self.barriers.setdefault(where, [name, 0, len(cta.warps)])
        entry[1] = max(entry[1], len(reached))

    # --- results --------------------------------------------------------------------------------------
    def summary_phases(self) -> dict[str, int]:
        """Per mbarrier, the most phases it completed in one CTA."""
        per_barrier: dict[str, int] = {}
        for (_, name), n in self.phases.items():
            per_barrier[name] = max(per_barrier.get(name, 0), n)
        return per_barrier

    def summary(self) -> dict:
        return {"mbarrier_phases": self.summary_phases(),
                "stage_refills": max(self.refills.values(), default=0) - 1 if self.refills else None,
                "waits": {w: {"instruction": n, "keep": k, "max_outstanding": o}
                          for w, (n, k, o) in self.waits.items()},
                "barriers": {w: {"instruction": n, "warps_reached": r, "warps": t}
                             for w, (n, r, t) in self.barriers.items()},
                "gaps": self.gaps()}

    def gaps(self) -> list[str]:
        """What this launch did not exercise (empty: every ring wrapped, every wait waited)."""
        out = []
        if self.refills and max(self.refills.values()) < 2:
            out.append("no shared-memory stage was refilled: every byte an asynchronous copy wrote was "
                       "written once (a ring of stages never wrapped)")
        most = self.summary_phases()
        for n, what in ((0, "no phase"), (1, "only one phase (the phase parity never wrapped)")):
            names = sorted(name for name, k in most.items() if k == n)
            if names:
                out.append(f"mbarrier{'s' if len(names) > 1 else ''} {', '.join(names)} completed {what}")
        for where, (name, keep, most) in self.waits.items():
            if keep > 0 and most <= keep:
                out.append(f"{where}: {name} {keep} never had more than {most} group{'s' if most != 1 else ''} "
                           "outstanding: it waited for nothing")
        for where, (name, reached, total) in self.barriers.items():
            if reached < total:
                out.append(f"{where}: {name} reached by {reached} of the CTA's {total} warps")
        return out


def coverage_of(machine) -> SyncCoverage:
    cov = getattr(machine, "sync_coverage", None)
    if cov is None:
        cov = machine.sync_coverage = SyncCoverage()
    return cov


def coverage_line(stats: dict) -> str | None:
    """One line of what the launch exercised (None: the kernel has no pipeline synchronisation)."""
    cov = stats.get("coverage") or {}
    parts = []
    phases = cov.get("mbarrier_phases") or {}
    if phases:
        lo, hi = min(phases.values()), max(phases.values())
        parts.append(f"{len(phases)} mbarrier{'s' if len(phases) > 1 else ''} completed "
                     f"{lo if lo == hi else f'{lo}-{hi}'} phase{'' if lo == hi == 1 else 's'}")
    refills = cov.get("stage_refills")
    if refills is not None:
        parts.append(f"shared stages refilled up to {refills} time{'s' if refills != 1 else ''}")
    waits = cov.get("waits") or {}
    if waits:
        idle = sum(1 for w in waits.values() if 0 < w["keep"] and w["max_outstanding"] <= w["keep"])
        parts.append(f"{len(waits)} group wait{'s' if len(waits) > 1 else ''}"
                     + (f" ({idle} never waited)" if idle else ""))
    bars = cov.get("barriers") or {}
    if bars:
        short = sum(1 for b in bars.values() if b["warps_reached"] < b["warps"])
        parts.append(f"{len(bars)} CTA barrier{'s' if len(bars) > 1 else ''}"
                     + (f" ({short} not reached by every warp)" if short else ", every warp at each"))
    return "coverage: " + "; ".join(parts) if parts else None


def notes(stats: dict) -> list[str]:
    """The lines `run` prints for a launch that left the pipeline unexercised."""
    gaps = (stats.get("coverage") or {}).get("gaps") or []
    return [f"note: pipeline not exercised at this launch: {g}" for g in gaps]
