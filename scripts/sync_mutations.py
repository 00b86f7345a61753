"""Synchronisation mutants of a kernel and whether each is observable at a launch (the mutation
test, scripts/emulate_mutations.py).

A mutant deletes one `bar.sync` / `barrier.sync` or one `cp.async.wait_group` / `wait_all`, or
weakens one `shfl.sync` full member mask to its low half. Whether the change can show at a
launch is decided from runs of the *unmutated* kernel under each schedule (sync_observer.py),
never from the mutant's own outcome:

* not executed: the instruction never runs at this launch;
* a barrier: observable when it is the only order of some pair of conflicting accesses
  (shared or global bytes, two threads of one CTA, one a write);
* a wait: observable when a copy it completes is accessed before a later wait would complete it;
* a weakened mask: observable when a lane the weakened mask drops runs the instruction.
"""

from __future__ import annotations

from ptx2py.emulate.errors import EmulationError
from ptx2py.emulate.frontend import run
from ptx2py.emulate.operands import constant
from ptx2py.ptxgrammar.tree import Block, Function, Instruction, IntLiteral

WEAK_MASK = 0x0000FFFF
SCHEDULES = ("inorder", "reverse", "random:1")


def instructions(module, kernel=None, device_functions=True):
    """(path, instruction) of every instruction of the launched kernel (every kernel when None)
    and, with device_functions, of the module's device functions, which it may call; a path is
    the function's index, then block indices (edit_statement's path)."""
    def visit(items, path):
        for i, item in enumerate(items):
            if isinstance(item, Block):
                yield from visit(item.items, path + (i,))
            elif isinstance(item, Instruction):
                yield path + (i,), item

    for fi, fn in enumerate(module.items):
        if isinstance(fn, Function) and fn.body is not None and (
                kernel is None or fn.name == kernel or (device_functions and fn.head.kind != ".entry")):
            yield from visit(fn.body.items, (fi,))


def sync_sites(module, kernel=None):
    """(path to the instruction, mutation kind) for every synchronisation instruction of the
    launched kernel (and of the device functions of the module, which it may call)."""
    out = []
    for path, item in instructions(module, kernel):
        name = item.name
        if item.opcode in ("bar", "barrier") and ".sync" in item.modifiers:
            out.append((path, "delete " + name))
        elif item.opcode == "cp" and (".wait_group" in item.modifiers or ".wait_all" in item.modifiers):
            out.append((path, "delete " + name))
        elif item.opcode == "shfl" and ".sync" in item.modifiers:
            mask = constant(item.operands[-1])      # 0xffffffff, or Triton's -1
            if mask is not None and mask & 0xFFFFFFFF == 0xFFFFFFFF:
                out.append((path, "weaken mask of " + name))
    return out


def edit_statement(module, path, change):
    """The module with the statement at `path` (function index, then block indices) replaced by
    `change(statement)`, or deleted when `change` is None."""
    def edit_block(block, rest):
        items = list(block.items)
        i = rest[0]
        if len(rest) > 1:
            items[i] = edit_block(items[i], rest[1:])
        elif change is None:
            del items[i]
        else:
            items[i] = change(items[i])
        return block.with_changes(items=tuple(items))

    items = list(module.items)
    items[path[0]] = items[path[0]].with_changes(body=edit_block(items[path[0]].body, path[1:]))
    return module.with_changes(items=tuple(items))


def mutate(module, path, kind):
    def weaken_mask(instr):
        mask = IntLiteral(f"{WEAK_MASK:#010x}", trivia=instr.operands[-1].trivia)
        return instr.with_changes(operands=instr.operands[:-1] + (mask,))

    return edit_statement(module, path, None if kind.startswith("delete") else weaken_mask)


def instruction_at(module, path):
    node = module.items[path[0]].body
    for i in path[1:]:
        node = node.items[i]
    return node


class Observed:
    """What runs of the unmutated kernel under several schedules saw (union over the schedules)."""

    def __init__(self):
        self.executed: set = set()
        self.ordering: set = set()
        self.lanes: dict = {}
        self.runs: list = []            # (schedule, Result)

    def add(self, schedule, result) -> None:
        self.runs.append((schedule, result))
        self.executed |= result.executed
        self.ordering |= result.sync.ordering_ids()
        for key, bits in result.sync.lanes_by_id().items():
            self.lanes[key] = self.lanes.get(key, 0) | bits
        result.sync = None          # the observer holds the whole machine

    def classify(self, module, path, kind) -> str:
        """'not executed', 'unobservable' or 'observable' for one mutant."""
        key = id(instruction_at(module, path))
        if key not in self.executed:
            return "not executed"
        if kind.startswith("weaken mask"):
            return "observable" if self.lanes.get(key, 0) & ~WEAK_MASK & 0xFFFFFFFF else "unobservable"
        return "observable" if key in self.ordering else "unobservable"


def observe(module, launch, inputs, filename, schedules=SCHEDULES, max_steps=300_000) -> Observed:
    """Run the unmutated kernel under each schedule with the sync observer (EmulationError passes)."""
    seen = Observed()
    for sched in schedules:
        seen.add(sched, run(module, launch, inputs, filename=filename, max_steps=max_steps,
                            schedule=sched, observe=True))
    return seen


def outcome(module, launch, inputs, filename, schedule="inorder", max_steps=300_000):
    """(outputs or None, rendered reports) of one run; a refusal is a report."""
    try:
        r = run(module, launch, inputs, filename=filename, max_steps=max_steps, schedule=schedule)
    except EmulationError as e:
        return None, [str(e)]
    return r.outputs, [x.render() for x in r.reports]


__all__ = ["sync_sites", "mutate", "instruction_at", "observe", "outcome", "Observed", "SCHEDULES"]
