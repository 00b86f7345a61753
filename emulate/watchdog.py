"""The engine's watchdog: a kernel that does not terminate ends with a located report, as a
GPU's watchdog ends it, instead of running forever.

Two limits, both checked by the run loop (machine.py), never by the instruction handlers:
- a step budget: warp-instructions any one block (CTA) may run (`--max-steps N`, default
  MAX_STEPS: a hundred times what a block of the 1024^3 TMA+WGMMA matmul runs, and an
  endless loop ends within ~15 s of CPU). The report names the loop the warp is in: its back
  edge (the branch that jumps back, whose place `file:line:col` reports of DSL input also
  give as a Python line) and its head;
- a call depth: device-function calls nested deeper than MAX_CALL_DEPTH (endless recursion);
  the report names the call chain, each call site once with how many times it repeats.
"""

from __future__ import annotations

from .errors import Report

MAX_STEPS = 1_000_000
MAX_CALL_DEPTH = 1_000


class Watchdog(Exception):
    """A limit was reached: the run stops with this report."""

    def __init__(self, report: Report):
        super().__init__(report.message)
        self.report = report


def enclosing_loop(code, pc: int) -> tuple[int, int] | None:
    """(back edge, loop head) of the innermost loop around instruction `pc`: the branch that
    jumps back to a head at or before `pc` from at or after it (the shortest such span), or
    None when `pc` is in no loop (a wait that spins on one instruction counts as its own)."""
    from .program import EXIT, branch_targets

    best = None
    for i in range(pc, len(code.instructions)):
        for target in branch_targets(code, i):
            if target != EXIT and target <= pc and (best is None or i - target < best[0] - best[1]):
                best = (i, target)
        if best is not None and i - pc >= best[0] - best[1]:
            break                     # no later branch can make a shorter span
    return best


def step_limit(machine, warp, cta, limit: int) -> Watchdog:
    """The report of a block that ran `limit` warp-instructions: where its warp is looping."""
    top = warp.stack[-1]
    code, pc = top[3].code, top[0]
    where_pc = machine.where_instr(code, pc)
    loop = enclosing_loop(code, pc) if 0 <= pc < len(code.instructions) else None
    if loop is None:
        place, where = f"warp {warp.index} is at {where_pc}", where_pc
    else:
        back, head = loop
        where = machine.where_instr(code, back)
        place = (f"warp {warp.index} is in the loop whose back edge `{_text(code, back)}` is at {where} "
                 f"(its head at {machine.where_instr(code, head)})")
    message = (f"step limit of {limit:,} warp-instructions reached in block {tuple(cta.ctaid)}: {place}; "
               f"a loop that never ends (or raise --max-steps)")
    return Watchdog(Report("trap", message, where, {"limit": limit, "block": list(cta.ctaid), "warp": warp.index,
                                                    "at": where_pc}))


def call_depth(machine, warp, limit: int) -> Watchdog:
    """The report of calls nested `limit` deep: the call chain, repeats counted."""
    chain = call_sites(machine, warp)
    runs: list[list] = []
    for site in chain:
        if runs and runs[-1][0] == site:
            runs[-1][1] += 1
        else:
            runs.append([site, 1])
    shown = " -> ".join(f"{callee} (called at {where}{f' x{n}' if n > 1 else ''})" for (where, callee), n in runs)
    where = chain[-1][0] if chain else machine.where_now(warp)
    message = f"call depth limit of {limit} reached (endless recursion?): {machine.code.name} -> {shown}"
    return Watchdog(Report("trap", message, where, {"limit": limit, "chain": [f"{w} {c}" for w, c in chain]}))


def call_sites(machine, warp) -> list[tuple[str, str]]:
    """(`file:line:col` of the call, the function it calls) of every call on the warp's stack,
    outermost first."""
    sites, below = [], None
    for entry in warp.stack:
        frame = entry[3]
        if below is not None and frame is not below[3] and frame.caller is below[3]:
            code, pc = below[3].code, below[0] - 1      # the caller's entry is past its call already
            sites.append((machine.where_instr(code, pc), frame.code.name))
        below = entry
    return sites


def _text(code, pc: int) -> str:
    from ptx2py.ptxgrammar import emit

    return " ".join(emit(code.instructions[pc]).split())
