"""A parsed module prepared for execution: each function's instructions in one flat list, its
labels, declarations and the immediate post-dominator of every branch (the reconvergence points
of the SIMT stack, see simt.py), with every instruction's file:line:col."""

from __future__ import annotations

import re
from collections import ChainMap
from dataclasses import dataclass, field

from ptx2py.ptxgrammar.tree import Block, Function, Instruction, Label, VarDecl

from .errors import EmulationError

EXIT = -1            # the virtual exit node of a CFG (paths that only meet at the end)

# opcodes that end a path through a function, and that leave it (no fall-through)
_ENDS = {"ret", "exit", "trap"}


@dataclass
class RegDecl:
    type: str                  # ".b32"
    vector: str | None = None  # ".v4" for `.reg .v4 .f32 %v`


@dataclass
class FunctionCode:
    """One `.entry`/`.func`, flattened. Nested blocks share the function's names (PTX
    scopes only add call-parameter names, which are unique per call site in practice)."""

    name: str
    function: Function
    instructions: list = field(default_factory=list)
    where: list = field(default_factory=list)          # (line, col) per instruction
    labels: dict = field(default_factory=dict)         # name -> instruction index (outermost definition)
    label_scopes: dict = field(default_factory=dict)   # id(instruction) -> ChainMap of the labels it sees
    regs: dict = field(default_factory=dict)           # exact name -> RegDecl
    reg_ranges: dict = field(default_factory=dict)     # prefix -> (count, RegDecl) for %r<N>
    variables: list = field(default_factory=list)      # .shared/.local/.param VarDecls inside the body
    ipdom: list = field(default_factory=list)          # per instruction: reconvergence index or EXIT

    @property
    def is_entry(self) -> bool:
        return self.function.head.kind == ".entry"

    def reg_decl(self, name: str) -> RegDecl | None:
        decl = self.regs.get(name)
        if decl is not None:
            return decl
        m = _NUMBERED.match(name)
        if m:
            rng = self.reg_ranges.get(m.group(1))
            if rng is not None and int(m.group(2)) < rng[0]:
                return rng[1]
        return None


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


class Program:
    """Every function of a module, prepared. ``positions`` maps id(instruction) -> (line, col)."""

    def __init__(self, module, filename: str = "<ptx>"):
        from ptx2py.lint.rules import instruction_positions

        self.module = module
        self.filename = filename
        self.positions = {id(i): (line, col) for i, line, col in instruction_positions(module)}
        self.functions: dict[str, FunctionCode] = {}
        self.prototypes: dict[str, Function] = {}
        self.module_vars: list[VarDecl] = [i for i in module.items if isinstance(i, VarDecl)]
        for item in module.items:
            if isinstance(item, Function):
                if item.body is None:
                    self.prototypes[item.name] = item
                else:
                    self.functions[item.name] = self._prepare(item)

    def entries(self) -> list[str]:
        return [n for n, f in self.functions.items() if f.is_entry]

    def where(self, instr) -> str:
        line, col = self.positions.get(id(instr), (0, 0))
        return f"{self.filename}:{line}:{col}"

    def _prepare(self, fn: Function) -> FunctionCode:
        code = FunctionCode(fn.name, fn)
        pending_labels: list = []          # (name, the block's label table) waiting for an instruction

        # A label is visible in the block that declares it and the blocks inside it (PTX ISA 4.4
        # "Statements": labels have block scope), so inline-asm blocks may reuse names (LAB_WAIT).
        def visit(block: Block, scope: ChainMap):
            for item in block.items:
                if isinstance(item, Instruction):
                    idx = len(code.instructions)
                    for name, table in pending_labels:
                        table[name] = idx
                    pending_labels.clear()
                    code.instructions.append(item)
                    code.label_scopes[id(item)] = scope
                    code.where.append(self.positions.get(id(item), (0, 0)))
                elif isinstance(item, Label):
                    pending_labels.append((item.name, scope.maps[0]))
                elif isinstance(item, Block):
                    visit(item, scope.new_child())
                elif isinstance(item, VarDecl):
                    self._declare(code, item)

        outer = ChainMap()
        visit(fn.body, outer)
        for name, table in pending_labels:   # labels at the very end: the function's implicit return
            table[name] = len(code.instructions)
        code.labels = dict(outer.maps[0])
        for p in (fn.head.params.params if fn.head.params else ()):
            if p.space == ".reg":
                code.regs[p.name] = RegDecl(p.type)
        for p in (fn.head.returns.params if fn.head.returns else ()):
            if p.space == ".reg":
                code.regs[p.name] = RegDecl(p.type)
        code.ipdom = immediate_post_dominators(code)
        return code

    @staticmethod
    def _declare(code: FunctionCode, decl: VarDecl) -> None:
        if decl.space != ".reg":
            code.variables.append(decl)
            return
        rd = RegDecl(decl.type, decl.vector)
        for d in decl.declarators:
            if d.count is not None:
                code.reg_ranges[d.name] = (int(d.count), rd)
            else:
                code.regs[d.name] = rd


# ----------------------------------------------------------------------------- CFG
def branch_targets(code: FunctionCode, index: int) -> list[int]:
    """Successors of instruction `index` (EXIT for paths that leave the function)."""
    instr = code.instructions[index]
    op = instr.opcode
    nxt = index + 1 if index + 1 < len(code.instructions) else EXIT
    if op in _ENDS:
        return [nxt] if instr.guard is not None else [EXIT]
    if op == "bra":
        target = label_index(code, instr.operands[0].name, instr)
        return [target] if instr.guard is None else [target, nxt]
    if op == "brx":
        targets = [code.labels[n] for n in _brx_targets(code, instr)]
        return targets if instr.guard is None else [*targets, nxt]
    return [nxt]


def _brx_targets(code: FunctionCode, instr) -> list[str]:
    """`brx.idx %r, $table;`: the labels of the `.branchtargets` list after `$table:`."""
    return list(code_branchtargets(code).get(instr.operands[1].name, ()))


def code_branchtargets(code: FunctionCode) -> dict:
    from ptx2py.ptxgrammar.tree import LabelList

    out, last_label = {}, None
    for item in code.function.body.items:
        if isinstance(item, Label):
            last_label = item.name
        elif isinstance(item, LabelList) and item.directive == ".branchtargets" and last_label:
            out[last_label] = item.labels
    return out


def label_index(code: FunctionCode, name: str, instr) -> int:
    """The instruction a label names as seen from `instr` (its innermost block first)."""
    try:
        return code.label_scopes[id(instr)][name]
    except KeyError:
        raise EmulationError(f"branch to unknown label {name}") from None


def immediate_post_dominators(code: FunctionCode) -> list[int]:
    """ipdom of every instruction over the instruction-level CFG (iterative, Cooper-Harvey-
    Kennedy on the reversed graph). EXIT where paths only meet when the function ends."""
    n = len(code.instructions)
    succ = [[s if s != n else EXIT for s in branch_targets(code, i)] for i in range(n)]
    # reverse post-order of the reversed CFG = order from EXIT backwards
    preds_rev = [[] for _ in range(n + 1)]     # successors in the reversed graph; node n = EXIT
    for i, ss in enumerate(succ):
        for s in ss:
            preds_rev[n if s == EXIT else s].append(i)
    order, seen = [], [False] * (n + 1)
    stack = [(n, iter(preds_rev[n]))]
    seen[n] = True
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            order.append(node)
            stack.pop()
        elif not seen[nxt]:
            seen[nxt] = True
            stack.append((nxt, iter(preds_rev[nxt])))
    order.reverse()                            # reverse post-order, EXIT first
    rank = {node: k for k, node in enumerate(order)}
    ipdom = [None] * (n + 1)
    ipdom[n] = n

    def intersect(a, b):
        while a != b:
            while rank[a] > rank[b]:
                a = ipdom[a]
            while rank[b] > rank[a]:
                b = ipdom[b]
        return a

    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            cands = [n if s == EXIT else s for s in succ[node]]
            done = [c for c in cands if ipdom[c] is not None]
            if not done:
                continue
            new = done[0]
            for c in done[1:]:
                new = intersect(c, new)
            if ipdom[node] != new:
                ipdom[node] = new
                changed = True
    return [EXIT if (d is None or d == n) else d for d in ipdom[:n]]
