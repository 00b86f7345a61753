"""cp.async (sm_80): 4/8/16-byte global -> shared copies with zero-fill, commit and wait groups.
The source is read at issue; the destination is written at the wait that covers the copy
(asyncops.py), so a missing or too-weak wait shows up as stale data or an async-read report."""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import Address, Register

from ..asyncops import SharedWrite
from ..errors import NotEmulated
from ..operands import constant
from ..sync_coverage import coverage_of
from ..types import TYPES


def _cp_async(instr, scope):
    mods = set(instr.modifiers)
    if ".bulk" in mods or ".shared" not in mods and ".shared::cta" not in mods or ".global" not in mods:
        raise NotEmulated(instr.name)
    dst, src, size_node, *rest = instr.operands
    if not isinstance(dst, Address) or not isinstance(src, Address):
        raise NotEmulated(instr.name)
    size = constant(size_node)
    if size not in (4, 8, 16):
        raise NotEmulated(f"{instr.name} with cp-size {size_node}")
    if ".L2::cache_hint" in mods and rest:
        rest = rest[:-1]
    dec = scope.decoder
    read_src_size = ignore = None
    if rest:
        extra = rest[0]
        decl = scope.code.reg_decl(extra.name) if isinstance(extra, Register) else None
        if decl is not None and decl.type == ".pred":
            ignore = dec.reader(extra, TYPES[".pred"])
        else:
            read_src_size = dec.reader(extra, TYPES[".u32"])
    daddr, saddr = dec.address(dst), dec.address(src)
    machine = scope.machine

    def run(w, m):
        lanes = np.flatnonzero(m)
        d, _ = daddr(w, m)
        s, _ = saddr(w, m)
        n = np.full(len(lanes), size, np.int64)
        if read_src_size is not None:
            n = np.minimum(read_src_size(w, m).astype(np.int64), size)
        if ignore is not None:
            n = np.where(ignore(w, m), 0, n)
        rows = np.zeros((len(lanes), size), np.uint8)
        reading = n > 0
        if reading.any():
            sub = np.zeros(32, bool)
            sub[lanes[reading]] = True
            got = machine.load(w, sub, "global", s[reading], size)
            keep = np.arange(size)[None, :] < n[reading][:, None]
            rows[reading] = np.where(keep, got, 0)
        d = d.astype(np.int64)
        ok = (d >= 0) & (d + size <= w.cta.shared.size)
        if not ok.all():
            machine.sanitizer.bad_access("oob", w, lanes[~ok], d[~ok].astype(np.uint64), size, "shared",
                                         "cp.async destination outside shared memory", True)
        if ok.any():
            op = SharedWrite(machine.asyncs, w, lanes[ok], machine.where_now(w), d[ok], rows[ok])
            coverage_of(machine).async_write(w.cta, (d[ok][:, None] + np.arange(size)).reshape(-1))
            machine.asyncs.groups(w).open.append(machine.asyncs.issue(op))
    return run


def _commit(instr, scope):
    machine = scope.machine
    return lambda w, m: machine.asyncs.groups(w).commit()


def _wait_group(instr, scope):
    keep = constant(instr.operands[0])
    if keep is None:
        raise NotEmulated(f"{instr.name} with a register count")
    machine = scope.machine

    def run(w, m):
        coverage_of(machine).wait(machine.where_now(w), instr.name, keep, len(machine.asyncs.groups(w).groups))
        _wait(machine, w, keep)
    return run


def _wait(machine, w, keep: int) -> None:
    g = machine.asyncs.groups(w)
    if machine.observer is None:
        g.wait(machine.asyncs, keep)
    else:                                   # the mutation test's observability (sync_observer.py)
        machine.observer.wait(w, g, keep, lambda: g.wait(machine.asyncs, keep))


def _wait_all(instr, scope):
    machine = scope.machine

    def run(w, m):
        machine.asyncs.groups(w).commit()
        _wait(machine, w, 0)
    return run


_FORMS = {".commit_group": _commit, ".wait_group": _wait_group, ".wait_all": _wait_all}


def _cp(instr, scope):
    if instr.opcode == "cp" and instr.modifiers[:1] == (".async",):
        for mod, factory in _FORMS.items():
            if mod in instr.modifiers:
                return factory(instr, scope)
        return _cp_async(instr, scope)
    raise NotEmulated(instr.name)


HANDLERS = {"cp": _cp}
