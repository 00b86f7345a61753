"""Which asynchronous-pipeline synchronisations do work in a run: the observable/unobservable
split of the pipeline mutation test (scripts/emulate_pipeline_mutations.py).

A mutant that deletes or weakens one synchronisation can only change a run where that
synchronisation, in the *unmutated* run, orders something the engine models. The handlers note
an instruction here when it does (never judged from the mutant's outcome):

* an mbarrier wait (try_wait/test_wait): it blocked its warp, or the phase it observed landed
  asynchronous writes (TMA loads) that become visible only through it;
* an mbarrier arrive (with or without expect_tx): the phase it arrived on was observed by a
  wait (so without it, or with half its tx bytes, that phase completes late or early);
* tcgen05.commit: it tracked at least one tcgen05.mma and a wait observed the phase it signals;
* wgmma.wait_group N (raised to N+1) and the commit_group that closed the group it completes
  last (deleted, that group joins the next): something other than a following wgmma reads that
  group's accumulators, or a TMA load overwrites its shared operands, before the warp's next
  wait_group (when the mutant's group completes at the latest);
* cp.async.bulk.wait_group(.read): it completed a pending bulk copy or store;
* fence.proxy.async: it is the only fence between a generic-proxy write and an async-proxy read
  (wgmma, tcgen05.mma, TMA store) or write (a TMA load) of the same bytes;
* fence.proxy.tensormap::generic.acquire: it acquired a device-written tensor map a TMA then used.

A fence the engine's model needs nowhere (the one after mbarrier.init: the engine's barriers
are never seen through a proxy) is therefore unobservable by construction.
"""

from __future__ import annotations

from contextlib import contextmanager

_RECORDING: list = []        # stack of sets of id(instruction)


def note(instr) -> None:
    if _RECORDING:
        _RECORDING[-1].add(id(instr))


def note_ids(ids) -> None:
    if _RECORDING:
        _RECORDING[-1].update(int(i) for i in ids)


def active() -> bool:
    return bool(_RECORDING)


@contextmanager
def recording():
    """Collect the ids of the synchronisation instructions that do work in the runs inside."""
    acted: set = set()
    _RECORDING.append(acted)
    try:
        yield acted
    finally:
        _RECORDING.pop()
