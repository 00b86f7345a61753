"""mbarrier (sm_80/sm_90): init, arrive (.expect_tx, arrive_drop), expect_tx, complete_tx,
test_wait/try_wait (phase state or .parity), pending_count, inval.

Phase model (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"):
a barrier holds an expected arrival count, the pending arrivals of the current phase, a
transaction count (tx-count, bytes) and the current phase number. The phase completes when the
pending arrivals reach 0 and the tx-count is 0; then the phase number advances and pending is
reset to the expected count. ``.parity P`` waits for the completion of the phase whose parity is
P: complete when the current phase's parity differs from P.

Asynchronous writes that signal a barrier (TMA loads: complete_tx) are attached to the phase
they complete; they land when a wait *observes* that phase (the first test_wait/try_wait that
returns true for it), so a consumer that skips the wait reads stale bytes and gets an
`async-read` report. try_wait blocks the warp while the phase is incomplete (it may suspend
until the phase completes); when every warp is blocked the run ends with a deadlock report that
names the barrier and its state.

The barrier's state lives beside shared memory, keyed by its shared offset (its 8 bytes hold
nothing the program may read: an ld of them is what the ISA calls undefined).
"""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import Address, Sink

from ..errors import NotEmulated
from ..memory import SHARED_WINDOW, WINDOW_SIZE
from ..operands import constant
from ..sync_coverage import coverage_of
from ..types import TYPES
from ..warp import BLOCKED, READY
from . import sites
from .cluster import LOCAL_MASK, on_rank, own_local
from .common import space_of

U32, U64, PRED = TYPES[".u32"], TYPES[".u64"], TYPES[".pred"]
STATE_TAG = np.uint64(1 << 63)     # arrive's opaque state: the phase number, tagged


class MBarrier:
    __slots__ = ("offset", "expected", "pending", "tx", "phase", "waiters", "attached", "landed",
                 "where", "arrivers")

    def __init__(self, offset: int, count: int, where: str):
        self.offset = offset
        self.expected = count
        self.pending = count
        self.tx = 0
        self.phase = 0
        self.waiters: list = []       # blocked warps
        self.attached: list = []      # async ops that complete the current phase
        self.landed: list = []        # (phase, op): completed phases' ops no wait observed yet
        self.where = where
        self.arrivers: dict = {}      # phase -> arrive instructions (only while sites.recording)

    def describe(self, cta) -> str:
        return (f"mbarrier at {shared_name(cta, self.offset)} (phase {self.phase}, "
                f"{self.pending} of {self.expected} arrivals and {self.tx} tx bytes pending)")


def barriers_of(cta) -> dict:
    table = getattr(cta, "mbarriers", None)
    if table is None:
        table = cta.mbarriers = {}
    return table


def shared_name(cta, offset: int) -> str:
    """`symbol+offset` of a shared offset (the nearest shared variable at or below it)."""
    best = None
    for name, off in cta.machine.shared_layout.offsets.items():
        if off <= offset and (best is None or off > best[1]):
            best = (name, off)
    if best is None:
        return f"shared offset {offset:#x}"
    return f"{best[0]}+{offset - best[1]}" if offset != best[1] else best[0]


def shared_offsets(addr_reader, space):
    """f(w, m) -> int64 shared offsets of a barrier (or any shared::cta) address operand."""
    def read(w, m):
        a, _ = addr_reader(w, m)
        a = a.astype(np.uint64)
        if space == "generic":
            inside = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
            if not inside.all():
                raise NotEmulated("mbarrier at a generic address outside shared memory")
            a = a - np.uint64(SHARED_WINDOW)
        return own_local(w, a.astype(np.int64))
    return read


def lookup(w, offset: int, what: str):
    """The live barrier at a shared offset, or None after a report (uninitialised/invalidated)."""
    cta = w.cta
    if int(offset) > LOCAL_MASK:
        raise NotEmulated(f"{what} on an mbarrier of another CTA of the cluster")
    bar = barriers_of(cta).get(int(offset))
    if bar is None:
        m = cta.machine
        m.sanitizer.report("mbarrier", f"{what} on {shared_name(cta, int(offset))}, which is not an "
                           "initialised mbarrier (no mbarrier.init, or after mbarrier.inval)",
                           m.where_now(w), key=int(offset))
    return bar


# --- phase progress --------------------------------------------------------------------------------
def arrive(cta, bar: MBarrier, count: int = 1, tx: int = 0, drop: bool = False) -> int:
    """Arrive (with an optional expect_tx) on bar; returns the phase the arrival belongs to."""
    phase = bar.phase
    bar.tx += tx
    bar.pending -= count
    if drop:
        bar.expected -= count
    _maybe_complete(cta, bar)
    return phase


def change_tx(cta, bar: MBarrier, delta: int) -> None:
    bar.tx += delta
    _maybe_complete(cta, bar)


def attach(cta, bar: MBarrier, op, nbytes: int) -> None:
    """An async write of nbytes that completes_tx on bar (its data lands when a wait observes
    the phase it completes)."""
    bar.attached.append(op)
    change_tx(cta, bar, -nbytes)


def _maybe_complete(cta, bar: MBarrier) -> None:
    if bar.pending > 0 or bar.tx != 0:
        return
    if bar.pending < 0:
        m = cta.machine
        m.sanitizer.report("mbarrier", f"{bar.describe(cta)}: more arrivals than its count",
                           m.where_now(m.current) if m.current else bar.where, key=("over", bar.offset))
    bar.landed.extend((bar.phase, op) for op in bar.attached)
    bar.attached = []
    bar.phase += 1
    coverage_of(cta.machine).phase_completed(cta, shared_name(cta, bar.offset))
    bar.pending = bar.expected
    for w in bar.waiters:
        w.state = READY
        w.waiting = None
    bar.waiters = []


def observe(cta, bar: MBarrier, phase: int) -> int:
    """A wait saw `phase` complete: the async writes of that phase and earlier land now (how
    many)."""
    keep, landed = [], 0
    for ph, op in bar.landed:
        if ph <= phase:
            landed += not op.done
            cta.machine.asyncs.complete(op)
        else:
            keep.append((ph, op))
    bar.landed = keep
    if sites.active():
        sites.note_ids(id(i) for i in bar.arrivers.get(phase, ()))
    return landed


def record_arrival(bar: MBarrier, phase: int, instr) -> None:
    if sites.active():
        bar.arrivers.setdefault(phase, []).append(instr)


def land_all(cta) -> None:
    """At the end of a CTA every attached write lands (nothing can read it any more)."""
    for bar in barriers_of(cta).values():
        for _, op in bar.landed:
            cta.machine.asyncs.complete(op)
        for op in bar.attached:
            cta.machine.asyncs.complete(op)
        bar.landed, bar.attached = [], []


# --- handlers --------------------------------------------------------------------------------------
def _address(instr, scope, node):
    if not isinstance(node, Address):
        raise NotEmulated(f"{instr.name}: barrier operand is not an address")
    space = space_of(instr.modifiers)
    if space not in ("shared", "generic"):
        raise NotEmulated(instr.name)
    return shared_offsets(scope.decoder.address(node), space)


def _count_reader(scope, node):
    value = constant(node)
    if value is not None:
        return lambda w, m: np.full(int(m.sum()), value, np.int64)
    read = scope.decoder.reader(node, U32)
    return lambda w, m: read(w, m).astype(np.int64)


def _init(instr, scope):
    offsets = _address(instr, scope, instr.operands[0])
    count = _count_reader(scope, instr.operands[1])
    machine = scope.machine

    def run(w, m):
        table = barriers_of(w.cta)
        for off, c in zip(offsets(w, m), count(w, m)):
            table[int(off)] = MBarrier(int(off), int(c), machine.where_now(w))
            coverage_of(machine).mbarrier_initialised(w.cta, shared_name(w.cta, int(off)))
    return run


def _inval(instr, scope):
    offsets = _address(instr, scope, instr.operands[0])

    def run(w, m):
        table = barriers_of(w.cta)
        for off in np.unique(offsets(w, m)):
            bar = lookup(w, off, "mbarrier.inval")
            if bar is not None:
                if bar.attached:
                    w.cta.machine.sanitizer.report(
                        "mbarrier", f"mbarrier.inval of {bar.describe(w.cta)} while "
                        f"{len(bar.attached)} asynchronous copies still signal it",
                        w.cta.machine.where_now(w), key=("inval", int(off)))
                del table[int(off)]      # writes no wait observed land only when the CTA ends
    return run


def _arrive(instr, scope):
    mods = set(instr.modifiers)
    expect = ".expect_tx" in mods
    drop = ".arrive_drop" in mods
    noc = ".noComplete" in mods
    if noc:
        raise NotEmulated(instr.name)
    state, addr, *rest = instr.operands
    offsets = _address(instr, scope, addr)
    tx = _count_reader(scope, rest[0]) if expect and rest else None
    count_node = rest[1] if expect and len(rest) > 1 else (rest[0] if not expect and rest else None)
    count = _count_reader(scope, count_node) if count_node is not None else None
    write = None if isinstance(state, Sink) else scope.decoder.writer(state, U64)

    def run(w, m):
        offs = offsets(w, m)
        n = len(offs)
        txs = tx(w, m) if tx is not None else np.zeros(n, np.int64)
        cnts = count(w, m) if count is not None else np.ones(n, np.int64)
        phases = np.zeros(n, np.uint64)
        for i, off in enumerate(offs):
            target = on_rank(w, off)         # a remote arrive reaches another CTA's barrier
            bar = lookup(target[0], target[1], instr.name) if target is not None else None
            if bar is not None:
                phases[i] = arrive(target[0].cta, bar, int(cnts[i]), int(txs[i]), drop)
                record_arrival(bar, int(phases[i]), instr)
        if write is not None:
            write(w, m, phases | STATE_TAG)
    return run


def _tx(instr, scope):
    """mbarrier.expect_tx / complete_tx [addr], txCount."""
    sign = 1 if ".expect_tx" in instr.modifiers else -1
    offsets = _address(instr, scope, instr.operands[0])
    tx = _count_reader(scope, instr.operands[1])

    def run(w, m):
        for off, t in zip(offsets(w, m), tx(w, m)):
            bar = lookup(w, off, instr.name)
            if bar is not None:
                change_tx(w.cta, bar, sign * int(t))
    return run


def _wait(instr, scope):
    """test_wait (never blocks) / try_wait (blocks the warp while no lane's phase is complete)."""
    mods = set(instr.modifiers)
    parity = ".parity" in mods
    blocking = ".try_wait" in mods
    dest, addr, token, *_hint = instr.operands
    offsets = _address(instr, scope, addr)
    read_token = scope.decoder.reader(token, U32 if parity else U64)
    write = scope.decoder.writer(dest, PRED)
    name = instr.name

    def done(w, m):
        offs = offsets(w, m)
        toks = read_token(w, m)
        out = np.zeros(len(offs), bool)
        bars = []
        # a lane that repeats an earlier lane's (barrier, token) while that barrier's phase is
        # unchanged gets its answer: its lookup and observe would only repeat a deduplicated
        # report and land nothing more
        answers: dict = {}
        for i, (off, tok) in enumerate(zip(offs, toks)):
            key = (int(off), int(tok))
            known = answers.get(key)
            if known is not None and (known[1] is None or known[1].phase == known[2]):
                out[i] = known[0]
                bars.append(known[1])
                continue
            bar = lookup(w, off, name)
            bars.append(bar)
            if bar is None:
                out[i] = True          # reported; let the program go on
                answers[key] = (True, None, None)
                continue
            phase = bar.phase
            if parity:
                waited = phase - 1 if (phase & 1) != (int(tok) & 1) else phase
            else:
                waited = int(np.uint64(tok) & ~STATE_TAG)
            out[i] = phase > waited
            if out[i] and observe(w.cta, bar, waited):
                sites.note(instr)            # copies become visible through this wait
            answers[key] = (bool(out[i]), bar, phase)
        return out, bars

    if not blocking:
        return lambda w, m: write(w, m, done(w, m)[0])

    def run(w, exec_mask, top):
        if not exec_mask.any():
            top[0] += 1
            return
        out, bars = done(w, exec_mask)
        if out.any():
            write(w, exec_mask, out)
            top[0] += 1
            return
        bar = next(b for b in bars if b is not None)
        sites.note(instr)                    # it holds the warp back
        w.state = BLOCKED
        w.waiting = (f"{name} on {bar.describe(w.cta)}", top[0], top[3])
        bar.waiters.append(w)
    return run


def _pending_count(instr, scope):
    raise NotEmulated(instr.name)


_FORMS = (("init", _init), ("inval", _inval), ("arrive", _arrive), ("arrive_drop", _arrive),
          ("expect_tx", _tx), ("complete_tx", _tx), ("test_wait", _wait), ("try_wait", _wait),
          ("pending_count", _pending_count))


def _mbarrier(instr, scope):
    """A control handler (try_wait may block the warp); the other forms just step on."""
    first = instr.modifiers[0][1:] if instr.modifiers else ""
    factory = dict(_FORMS).get(first)
    if factory is None:
        raise NotEmulated(instr.name)
    run = factory(instr, scope)
    if first == "try_wait":
        return run

    def step(w, exec_mask, top):
        if exec_mask.any():
            run(w, exec_mask)
        top[0] += 1
    return step


HANDLERS = {"mbarrier": _mbarrier}
CONTROL = {"mbarrier"}
