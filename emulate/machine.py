"""The machine: a grid of CTAs run one after another, each CTA's warps scheduled between
barriers in a selectable order, memory accesses routed to their state space and checked.

Scheduling: a warp runs until it blocks (barrier, exit) or has run QUANTUM instructions, then
the next ready warp in the schedule's order runs: `inorder` (warp 0 first), `reverse`, or
`random:SEED` (a fresh seeded permutation every round). CTAs start in the same order, one at a
time by default (`resident_ctas` > 1: that many interleave, round by round). Atomics of one
instruction apply lane by lane in the same order.
"""

from __future__ import annotations

import random as _random

import numpy as np

from . import memory as M
from . import watchdog
from .errors import EmulationError, NotEmulated, Report, Trap
from .layout import FrameLayout, SharedLayout, decl_size, init_bytes, kernel_param_layout
from .operands import OperandDecoder
from .sanitizer import SharedShadow, thread_name
from .semantics.cluster import has_remote, remote_load, remote_store, split_ranks
from .warp import BLOCKED, DONE, READY, WARP, Frame, Warp

QUANTUM = 4096
CONST_CODE = len(M.WINDOWS)          # a generic address in the const window (after window_codes' own)
# the order a generic access visits its spaces: (window code, space)
GENERIC_ORDER = ((0, "global"), (CONST_CODE, "const"), (1, "shared"), (2, "local"), (3, "param"))


class Schedule:
    def __init__(self, spec: str = "inorder"):
        self.spec = spec
        if spec in ("inorder", "reverse"):
            self.rng = None
        elif spec.startswith("random:") and spec[7:].lstrip("-").isdigit():
            self.rng = _random.Random(int(spec[7:]))
        else:
            raise EmulationError(f"unknown schedule {spec!r} (inorder, reverse, random:SEED)")

    def order(self, items: list) -> list:
        if self.spec == "inorder":
            return list(items)
        if self.spec == "reverse":
            return list(reversed(items))
        out = list(items)
        self.rng.shuffle(out)
        return out


class Scope:
    """One function's decoded instructions and names (what operands resolve against)."""

    def __init__(self, machine, code):
        self.machine = machine
        self.code = code
        self.layout = FrameLayout(code, kernel_params=code.is_entry)
        self.param_size = self.layout.param_size
        self.ops = [None] * len(code.instructions)
        self.decoder = OperandDecoder(code, self)

    # --- names ---------------------------------------------------------------------------------
    def symbol_space(self, name: str) -> str | None:
        if name in self.layout.params:
            return "fparam"
        if self.code.is_entry and name in self.machine.kparam_offsets:
            return "kparam"
        if name in self.layout.locals:
            return "local"
        if name in self.machine.shared_layout.offsets:
            return "shared"
        region = self.machine.globals.by_name(name)
        if region is not None:
            return "global"
        if self.machine.consts.by_name(name) is not None:
            return "const"
        return None

    def symbol_value(self, name: str) -> int | None:
        space = self.symbol_space(name)
        if space == "fparam":
            return self.layout.params[name]
        if space == "kparam":
            return self.machine.kparam_offsets[name]
        if space == "local":
            return self.layout.locals[name]
        if space == "shared":
            return self.machine.shared_layout.offsets[name]
        if space == "global":
            return self.machine.globals.by_name(name).base
        if space == "const":
            return self.machine.consts.by_name(name).base
        return None

    def special_register(self, node):
        from .specials import special_register

        return special_register(self.machine, node)

    def op(self, pc: int):
        op = self.ops[pc]
        if op is None:
            from .semantics import decode

            instr = self.code.instructions[pc]
            try:
                op = self.ops[pc] = decode(instr, self)
            except NotEmulated as e:
                raise NotEmulated(e.what, self.machine.where_instr(self.code, pc)) from None
        return op


class CTA:
    def __init__(self, machine, ctaid):
        self.machine = machine
        self.ctaid = ctaid
        self.rank = 0             # %cluster_ctarank
        self.cluster = [self]     # the CTAs of its cluster, by rank (semantics/cluster.py)
        size = machine.shared_size
        self.shared = np.zeros(size, np.uint8)
        self.shadow = SharedShadow(size)
        self.epoch = 0
        self.steps = 0            # warp-instructions run (the watchdog's budget is per block)
        self.barriers: dict[int, dict] = {}
        nthreads = int(np.prod(machine.block))
        nwarps = (nthreads + WARP - 1) // WARP
        self.warps = [Warp(self, i, nthreads, machine.entry_frame) for i in range(nwarps)]
        local = machine.entry_scope.layout.local_size     # grows with the call depth (Machine.grow_local)
        for w in self.warps:
            w.local = np.zeros((WARP, max(local, 8)), np.uint8)

    def live_threads(self) -> int:
        return int(sum(int(w.live.sum()) for w in self.warps))


class Machine:
    def __init__(self, program, kernel: str, grid, block, dynamic_shared: int = 0, sanitizer=None,
                 schedule: str = "inorder", max_steps: int | None = None, resident_ctas: int = 1,
                 cluster=(1, 1, 1), max_call_depth: int | None = None):
        from .asyncops import AsyncRegistry
        from .sanitizer import Sanitizer

        if kernel not in program.functions or not program.functions[kernel].is_entry:
            raise EmulationError(f"no .entry {kernel} (entries: {', '.join(program.entries()) or 'none'})")
        self.program = program
        self._wheres: dict = {}     # (function, pc) -> "file:line:col"
        self.grid = tuple(int(x) for x in grid) + (1,) * (3 - len(grid))
        self.block = tuple(int(x) for x in block) + (1,) * (3 - len(block))
        self.cluster = tuple(int(x) for x in cluster) + (1,) * (3 - len(cluster))
        self.explicit_cluster = int(self.cluster != (1, 1, 1))
        if any(g % c for g, c in zip(self.grid, self.cluster)):
            raise EmulationError(f"grid {list(self.grid)} is not a whole number of clusters {list(self.cluster)}")
        self.sanitizer = sanitizer or Sanitizer()
        self.schedule = Schedule(schedule)
        self.max_steps = watchdog.MAX_STEPS if max_steps is None else int(max_steps)    # per block
        self.max_call_depth = watchdog.MAX_CALL_DEPTH if max_call_depth is None else int(max_call_depth)
        self.progress = None      # called with (blocks done, blocks) as blocks finish (a terminal's bar)
        self.resident_ctas = max(int(resident_ctas), 1)
        self.steps = 0
        self.thread_steps = 0
        self.asyncs = AsyncRegistry(self)
        self.code = program.functions[kernel]
        self.globals = M.RegionSet("global", M.GLOBAL_BASE)
        self.consts = M.RegionSet("const", M.CONST_BASE)
        self._module_data()
        self.shared_layout = SharedLayout(program)
        self.dynamic_shared = int(dynamic_shared)
        self.shared_size = max(self.shared_layout.dynamic_offset + self.dynamic_shared,
                               self.shared_layout.static_size, 1)
        self.kparam_offsets, self.kparam_kinds, size = kernel_param_layout(self.code)
        self.kparams = np.zeros(max(size, 8), np.uint8)
        self.scopes = {}
        self.entry_scope = self.scope(self.code)
        self.current = None       # the warp running now
        self.in_atomic = False    # atomics are not race-tracked
        self.observer = None      # a SyncObserver (sync_observer.py) when asked for
        self._site_ids: dict = {}
        self._sites: list = []

    def _module_data(self):
        for decl in self.program.module_vars:
            if decl.space not in (".global", ".const"):
                continue
            target = self.globals if decl.space == ".global" else self.consts
            for dd in decl.declarators:
                size, align = decl_size(decl, dd)
                target.add(dd.name, init_bytes(decl, dd, size), max(align, 16), readonly=decl.space == ".const")

    def scope(self, code) -> Scope:
        s = self.scopes.get(code.name)
        if s is None:
            s = self.scopes[code.name] = Scope(self, code)
        return s

    def entry_frame(self, warp) -> Frame:
        return Frame(self.code, self.entry_scope)

    # --- locations ------------------------------------------------------------------------------
    def where_instr(self, code, pc: int) -> str:
        key = (code.name, pc)
        where = self._wheres.get(key)
        if where is None:        # handlers ask on every run (reports, coverage): formatted once
            line, col = code.where[pc] if 0 <= pc < len(code.where) else (0, 0)
            where = self._wheres[key] = f"{self.program.filename}:{line}:{col}"
        return where

    def pc_now(self, warp) -> int:
        """A launch-wide id of the instruction the warp runs now (its function and index)."""
        if not warp.stack:
            return -1
        top = warp.stack[-1]
        key = (top[3].code.name, top[0])
        site = self._site_ids.get(key)
        if site is None:
            site = self._site_ids[key] = len(self._sites)
            self._sites.append((top[3].code, top[0]))
        return site

    def where_now(self, warp) -> str:
        top = warp.stack[-1] if warp.stack else None
        if top is None:
            return f"{self.program.filename}:0:0"
        return self.where_instr(top[3].code, top[0])

    def where_of(self, warp, site: int) -> str:
        code, pc = self._sites[site]
        return self.where_instr(code, pc)

    def async_op(self, ident: int):
        return self.asyncs.get(ident)

    # --- kernel parameters and buffers ---------------------------------------------------------------
    def set_param(self, name: str, raw: bytes) -> None:
        off = self.kparam_offsets[name]
        self.kparams[off: off + len(raw)] = np.frombuffer(raw, np.uint8)

    def add_buffer(self, name: str, data: np.ndarray) -> int:
        return self.globals.add(name, data).base

    # --- running ------------------------------------------------------------------------------------
    def run(self) -> list[Report]:
        """Clusters (one CTA each without a cluster launch) in the schedule's order, `resident_ctas`
        of them at a time: each round runs every ready warp of every resident cluster once (in the
        schedule's order), so with more than one resident a CTA that spins on a flag or lock another
        CTA sets lets that CTA run. The CTAs of one cluster always run together."""
        from .semantics.cluster import clusters_of

        waiting = self.schedule.order(clusters_of(self.grid, self.cluster))
        resident: list = []
        total, done = len(waiting), 0
        try:
            while waiting or resident:
                while waiting and len(resident) < self.resident_ctas:
                    resident.append(self._start_cluster(waiting.pop(0)))
                for ctas in self.schedule.order(resident) if len(resident) > 1 else resident:
                    if not self._round(ctas):
                        self._deadlock(ctas)
                        return self.sanitizer.reports
                    if all(w.state == DONE for cta in ctas for w in cta.warps):
                        for cta in ctas:
                            self.asyncs.finish_cta(cta)
                        resident.remove(ctas)
                        done += 1
                        if self.progress is not None:
                            self.progress(done, total)
        except watchdog.Watchdog as stop:
            self.sanitizer.reports.append(stop.report)
        except Trap as t:
            self.sanitizer.reports.append(Report("trap", str(t), self.where_now(self.current)
                                                 if self.current else self.program.filename))
        except NotEmulated as e:           # a form found only when it runs: located at its instruction
            if e.where or self.current is None:
                raise
            raise NotEmulated(e.what, self.where_now(self.current)) from None
        return self.sanitizer.reports

    def _start_cluster(self, ctaids) -> list:
        ctas = [CTA(self, c) for c in ctaids]
        for rank, cta in enumerate(ctas):
            cta.rank, cta.cluster = rank, ctas
            if self.observer is not None:
                self.observer.cta_start(cta)
        return ctas

    def _round(self, ctas) -> bool:
        """Every ready warp of the cluster runs once (until it blocks or its quantum ends); False
        when none could run although some are not done (every warp blocked)."""
        from .semantics.cluster import check_cluster_barrier
        from .semantics.control import check_barriers

        warps = [w for cta in ctas for w in cta.warps]
        ran = False
        for w in self.schedule.order(warps):
            if w.state == READY:
                self._run_warp(w)
                ran = True
                check_barriers(w.cta)
                check_cluster_barrier(ctas)
        return ran or all(w.state == DONE for w in warps)

    def _deadlock(self, ctas):
        waits = []
        for cta in ctas:
            prefix = f"block {cta.ctaid} " if len(ctas) > 1 else ""
            for w in cta.warps:
                if w.state == BLOCKED:
                    what, pc, frame = w.waiting
                    waits.append(f"{prefix}warp {w.index} waits at {self.where_instr(frame.code, pc)} ({what})")
        first = next(w for cta in ctas for w in cta.warps if w.state == BLOCKED)
        blocks = " and ".join(str(c.ctaid) for c in ctas)
        self.sanitizer.report("deadlock", f"every warp of block{'s' if len(ctas) > 1 else ''} {blocks} is blocked: "
                              + "; ".join(waits), self.where_instr(first.waiting[2].code, first.waiting[1]),
                              waits=waits)

    def _run_warp(self, w) -> None:
        """Run the warp until it blocks, finishes or has run QUANTUM instructions (fewer when its
        block's step budget is nearly spent: the watchdog then stops the run, located)."""
        self.current = w
        cta = w.cta
        start = self.steps
        try:
            self._steps(w, min(QUANTUM, self.max_steps - cta.steps + 1))
        finally:
            cta.steps += self.steps - start
        if cta.steps > self.max_steps:
            raise watchdog.step_limit(self, w, cta, self.max_steps)

    def _steps(self, w, budget: int) -> None:
        """The interpreter loop proper (the hot path: one pass per warp-instruction)."""
        stack = w.stack
        count_nonzero = np.count_nonzero
        while budget:
            top = stack[-1]
            if top[0] == top[1]:
                stack.pop()
                if not stack:
                    w.state = DONE
                    break
                continue
            if w.dirty:                      # masks changed (exit, ret): drop empty entries
                w.dirty = False
                stack[:] = [e for e in stack if e[2].any()]
                if not stack:
                    w.state = DONE
                    break
                continue
            frame = top[3]
            pc = top[0]
            if pc >= len(frame.ops) or pc < 0:
                from .semantics.control import implicit_return
                implicit_return(w, top)
                continue
            op = frame.ops[pc] or frame.scope.op(pc)
            mask = top[2]
            self.steps += 1
            budget -= 1
            if op.guard is not None:
                g = op.guard(w, mask)
                exec_mask = mask.copy()
                exec_mask[mask] = g
                n = count_nonzero(exec_mask)
            else:
                exec_mask = mask
                n = -1
            if op.control:
                self.thread_steps += count_nonzero(exec_mask) if n < 0 else n
                op.run(w, exec_mask, top)
                if stack and stack[-1][3].depth > self.max_call_depth:
                    raise watchdog.call_depth(self, w, self.max_call_depth)
                if w.state != READY:
                    break
            else:
                if n:
                    self.thread_steps += count_nonzero(exec_mask) if n < 0 else n
                    op.run(w, exec_mask)
                top[0] = pc + 1

    # --- memory ---------------------------------------------------------------------------------------
    def _split_generic(self, w, addrs):
        """(space, lanes, space address) per window; a generic local address is absolute in the
        thread's local memory, a `.local` address relative to the running frame. Lanes are None
        when every address lies in the one window (the common case: no masks)."""
        one = M.single_window(addrs)
        if one is not None:
            yield ("kparam" if one == "param" else one), None, addrs - self._window_base(w, one)
            return
        win = M.window_codes(addrs)
        win[(win == 0) & (addrs >= np.uint64(M.CONST_BASE))] = CONST_CODE       # cvta.const addresses
        for code, space in GENERIC_ORDER:
            sel = win == code
            if sel.any():
                yield ("kparam" if space == "param" else space), sel, addrs[sel] - self._window_base(w, space)

    def _window_base(self, w, space: str):
        base = np.uint64(M.WINDOW_BASE[space])
        if space == "local":
            base += np.uint64(self._local_base(w))
        return base

    def load(self, w, mask, space: str, addrs, nbytes: int):
        """Bytes (n active lanes, nbytes) read from `space` at addrs."""
        lanes = np.flatnonzero(mask)
        if space == "generic":
            out = None
            for sp, sel, a in self._split_generic(w, addrs):
                if sel is None:
                    return self._load(w, lanes, sp, a, nbytes)
                if out is None:
                    out = np.zeros((len(lanes), nbytes), np.uint8)
                out[sel] = self._load(w, lanes[sel], sp, a, nbytes)
            return np.zeros((len(lanes), nbytes), np.uint8) if out is None else out
        return self._load(w, lanes, space, addrs, nbytes)

    def store(self, w, mask, space: str, addrs, rows) -> None:
        lanes = np.flatnonzero(mask)
        if space == "generic":
            for sp, sel, a in self._split_generic(w, addrs):
                if sel is None:
                    self._store(w, lanes, sp, a, rows)
                else:
                    self._store(w, lanes[sel], sp, a, rows[sel])
            return
        self._store(w, lanes, space, addrs, rows)

    def _check_align(self, w, lanes, addrs, nbytes, space, write):
        if nbytes > 1:
            bad = (addrs % np.uint64(nbytes)) != 0
            if bad.any():
                self.sanitizer.bad_access("misaligned", w, lanes[bad], addrs[bad], nbytes, space,
                                          f"not aligned to {nbytes} bytes", write)

    def _flat(self, w, space):
        """(1-D data, size) of a flat per-CTA or per-launch space."""
        if space == "shared":
            return w.cta.shared
        if space == "kparam":
            return self.kparams
        raise AssertionError(space)

    def _load(self, w, lanes, space, addrs, nbytes):
        addrs = addrs.astype(np.uint64)
        self._check_align(w, lanes, addrs, nbytes, space, False)
        if space in ("global", "const"):
            regions = self.globals if space == "global" else self.consts
            idx, offs = regions.locate(addrs, nbytes)
            out = np.zeros((len(lanes), nbytes), np.uint8)
            bad = idx < 0
            if bad.any():
                self.sanitizer.bad_access("oob", w, lanes[bad], addrs[bad], nbytes, space,
                                          "outside every buffer", False)
            for r, sel in regions.by_region(idx):
                out[sel] = M.gather(regions.regions[r].data, offs[sel], nbytes)
                if self.observer is not None and space == "global":
                    self.observer.global_access(w, lanes[sel], regions.regions[r], offs[sel], nbytes)
            return out
        if space in ("local", "fparam"):
            data = w.local if space == "local" else w.stack[-1][3].params
            offs = addrs.astype(np.int64) + (self._local_base(w) if space == "local" else 0)
            ok = (offs >= 0) & (offs + nbytes <= data.shape[1])
            if ok.all():
                return M.gather_lanes(data, lanes, offs, nbytes)
            self.sanitizer.bad_access("oob", w, lanes[~ok], addrs[~ok], nbytes, space, "outside the frame", False)
            out = np.zeros((len(lanes), nbytes), np.uint8)
            out[ok] = M.gather_lanes(data, lanes[ok], offs[ok], nbytes)
            return out
        if space == "shared" and has_remote(addrs):
            return self._cluster_access(w, lanes, addrs, nbytes)
        data = self._flat(w, space)
        offs = addrs.astype(np.int64)
        ok = (offs >= 0) & (offs + nbytes <= data.size)
        if not ok.all():
            self.sanitizer.bad_access("oob", w, lanes[~ok], addrs[~ok], nbytes, space,
                                      f"outside the {data.size}-byte {space} space", False)
        out = np.zeros((len(lanes), nbytes), np.uint8)
        if space == "shared" and ok.any():
            self.sanitizer.shared_read(w.cta, w, lanes[ok], offs[ok], nbytes)
        out[ok] = M.gather(data, offs[ok], nbytes)
        return out

    def _store(self, w, lanes, space, addrs, rows, atomic=False):
        addrs = addrs.astype(np.uint64)
        self._check_align(w, lanes, addrs, rows.shape[1], space, True)
        nbytes = rows.shape[1]
        if space in ("global", "const"):
            if space == "const":
                raise NotEmulated("st to .const space")
            idx, offs = self.globals.locate(addrs, nbytes)
            bad = idx < 0
            if bad.any():
                self.sanitizer.bad_access("oob", w, lanes[bad], addrs[bad], nbytes, space,
                                          "outside every buffer", True)
            for r, sel in self.globals.by_region(idx):
                if self.observer is not None:
                    self.observer.global_access(w, lanes[sel], self.globals.regions[r], offs[sel], nbytes, rows[sel])
                M.scatter(self.globals.regions[r].data, offs[sel], rows[sel])
            return
        if space in ("local", "fparam"):
            data = w.local if space == "local" else w.stack[-1][3].params
            offs = addrs.astype(np.int64) + (self._local_base(w) if space == "local" else 0)
            ok = (offs >= 0) & (offs + nbytes <= data.shape[1])
            if not ok.all():
                self.sanitizer.bad_access("oob", w, lanes[~ok], addrs[~ok], nbytes, space, "outside the frame", True)
            M.scatter_lanes(data, lanes[ok], offs[ok], rows[ok])
            return
        if space == "kparam":
            raise NotEmulated("st to kernel .param space")
        if has_remote(addrs):
            self._cluster_access(w, lanes, addrs, nbytes, rows, atomic)
            return
        data = w.cta.shared
        offs = addrs.astype(np.int64)
        ok = (offs >= 0) & (offs + nbytes <= data.size)
        if not ok.all():
            self.sanitizer.bad_access("oob", w, lanes[~ok], addrs[~ok], nbytes, space,
                                      f"outside the {data.size}-byte shared space", True)
        if ok.any():
            self.sanitizer.shared_write(w.cta, w, lanes[ok], offs[ok], nbytes, atomic, rows=rows[ok])
        M.scatter(data, offs[ok], rows[ok])

    def _cluster_access(self, w, lanes, addrs, nbytes, rows=None, atomic=False):
        """Distributed shared memory: `.shared::cluster` addresses, split by the CTA they name."""
        out = np.zeros((len(lanes), nbytes), np.uint8) if rows is None else None
        for cta, sel, offs in split_ranks(w, lanes, addrs, nbytes, rows is not None):
            if cta is w.cta and rows is None:
                out[sel] = self._load(w, lanes[sel], "shared", offs, nbytes)
            elif cta is w.cta:
                self._store(w, lanes[sel], "shared", offs, rows[sel], atomic)
            elif rows is None:
                out[sel] = remote_load(w, cta, lanes[sel], offs, nbytes)
            else:
                remote_store(w, cta, lanes[sel], offs, rows[sel])
        return out

    def _local_base(self, w) -> int:
        return w.stack[-1][3].local_base

    @staticmethod
    def grow_local(w, frame) -> None:
        """Room in the warp's local memory for a new frame's `.local` variables."""
        need = frame.local_base + frame.scope.layout.local_size
        if need > w.local.shape[1]:
            w.local = np.pad(w.local, ((0, 0), (0, need - w.local.shape[1])))

    # --- results ---------------------------------------------------------------------------------------
    def buffer(self, name: str) -> np.ndarray:
        return self.globals.by_name(name).data


__all__ = ["Machine", "CTA", "Scope", "Schedule", "thread_name"]
