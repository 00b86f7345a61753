"""Basic blocks and their edges.

`build(items, classify)` works on any statement sequence: `classify(item)` says what an
item does to control flow (a `Step`). `function_cfg(fn)` classifies a `ptxgrammar`
function body with the tables below: labels are scoped by `{ }` blocks, as in PTX.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptx2py.ptxgrammar.tree import Block, Function, Instruction, Label, LabelList, Symbol

# what an opcode does to control flow (every other opcode falls through)
BRANCHES = frozenset({"bra"})  # one label operand
INDIRECT_BRANCHES = frozenset({"brx"})  # a `.branchtargets` list's label operand
STOPS = frozenset({"ret", "exit"})  # leave the function


@dataclass(frozen=True)
class Step:
    """What one item does: defines `label`, branches to `targets`, or stops; `guarded`:
    only sometimes (so it also falls through)."""

    label: object = None
    targets: tuple = ()
    stop: bool = False
    guarded: bool = False

    @property
    def transfers(self) -> bool:
        return bool(self.targets) or self.stop


@dataclass
class BasicBlock:
    index: int
    start: int  # items[start:end]
    end: int
    labels: list = field(default_factory=list)
    succ: list = field(default_factory=list)
    pred: list = field(default_factory=list)
    stops: bool = False  # ends the function (ret/exit, or falls off its end)


@dataclass
class Graph:
    """Blocks in layout order; block 0 is the entry. `label_block[key]` is the block a label starts;
    `unresolved` lists branch targets that name no label (their edges are missing)."""

    items: list
    blocks: list
    label_block: dict
    unresolved: list
    name: str = ""

    def block_of(self, item_index: int) -> int:
        lo, hi = 0, len(self.blocks) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.blocks[mid].start <= item_index:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def edges(self):
        for b in self.blocks:
            for s in b.succ:
                yield b.index, s


def build(items, classify, name: str = "") -> Graph:
    steps = [classify(x) for x in items]
    leaders = {0}
    for k, st in enumerate(steps):
        if st is None:
            continue
        if st.label is not None:
            leaders.add(k)
        if st.transfers:
            leaders.add(k + 1)
    starts = sorted(x for x in leaders if x < len(items)) or [0]
    blocks = [BasicBlock(i, s, starts[i + 1] if i + 1 < len(starts) else len(items)) for i, s in enumerate(starts)]
    label_block = {}
    for b in blocks:
        for k in range(b.start, b.end):
            st = steps[k]
            if st is not None and st.label is not None:
                b.labels.append(st.label)
                label_block[st.label] = b.index
    unresolved = []
    for b in blocks:
        succ = []
        falls = True
        for k in range(b.start, b.end):
            st = steps[k]
            if st is None or not st.transfers:
                continue
            for t in st.targets:
                if t in label_block:
                    succ.append(label_block[t])
                else:
                    unresolved.append(t)
            if not st.guarded:
                falls = False
                b.stops = st.stop
        if falls:
            if b.index + 1 < len(blocks):
                succ.append(b.index + 1)
            else:
                b.stops = True
        if any(st is not None and st.stop and st.guarded for st in steps[b.start:b.end]):
            b.stops = True
        for s in dict.fromkeys(succ):
            b.succ.append(s)
            blocks[s].pred.append(b.index)
    return Graph(list(items), blocks, label_block, unresolved, name)


# --- PTX functions ---------------------------------------------------------------------------


def _flatten(block: Block, scope: tuple, out: list, scopes: dict, counter: list):
    """Items of nested `{ }` blocks in order, each with its scope path; labels per scope."""
    for it in block.items:
        if it.__class__ is Block:
            counter[0] += 1
            _flatten(it, scope + (counter[0],), out, scopes, counter)
        else:
            out.append((it, scope))
            if it.__class__ is Label:
                scopes.setdefault(scope, {})[it.name] = (scope, it.name)


def function_cfg(fn: Function) -> Graph:
    """The control-flow graph of a function with a body (items: its statements, `{ }` flattened;
    label keys: (scope path, name))."""
    flat, scopes = [], {}
    if fn.body is not None:
        _flatten(fn.body, (0,), flat, scopes, [0])

    def resolve(name, scope):
        for n in range(len(scope), 0, -1):
            got = scopes.get(scope[:n], {}).get(name)
            if got is not None:
                return got
        return (None, name)

    tables = {}  # `L: .branchtargets A, B;` -> L's targets
    for k, (it, scope) in enumerate(flat):
        if it.__class__ is LabelList and k and flat[k - 1][0].__class__ is Label:
            tables[flat[k - 1][0].name] = [resolve(x, scope) for x in it.labels]

    def classify(pair):
        it, scope = pair
        if it.__class__ is Label:
            return Step(label=(scope, it.name))
        if it.__class__ is not Instruction:
            return None
        guarded = it.guard is not None
        if it.opcode in STOPS:
            return Step(stop=True, guarded=guarded)
        if it.opcode in BRANCHES or it.opcode in INDIRECT_BRANCHES:
            syms = [o.name for o in it.operands if o.__class__ is Symbol]
            if it.opcode in BRANCHES:
                targets = tuple(resolve(s, scope) for s in syms[:1])
            else:
                targets = tuple(t for s in syms for t in tables.get(s, ()))
            return Step(targets=targets, guarded=guarded)
        return None

    g = build(flat, classify, fn.name)
    g.items = [it for it, _ in flat]
    return g


def module_cfgs(module) -> list:
    """`function_cfg` of every function of a module that has a body."""
    return [function_cfg(f) for f in module.functions if f.body is not None]
