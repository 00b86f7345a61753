"""LLVM's debug-scope labels, written by the DSL: `scope_labels()` in a function body.

LLVM (Triton's and Pallas's PTX) writes a label `$L__tmpN:` where an instruction's debug
scope -- the inlined call its `.loc` names (`function_name`, `inlined_at`), or none --
differs from the previous instruction's: DWARF's `DW_AT_low_pc`/`DW_AT_high_pc` of each
inlined call name them, nothing branches to them. The label stands right before the first
`.loc` after the previous instruction, and N counts on from the `$L__tmp` label before it.

In a function whose body calls `scope_labels()`, the DSL writes those labels itself as the
body is recorded (`ScopeRule`, fed each label, `.loc` and instruction in order), so that the
body shows only the program: a statement moved into or out of an inlined call gets its label
with it, and each label gets the layout an explicit `ptx.label` there would get. The labels
LLVM writes elsewhere (before the function's first scoped instruction, after its `ret`) stay
written out, and number the ones after them. `--sugar` (`sugar/scopelabels.py`) calls
`scope_labels()` only in a function where this rule gives back each label it leaves out, at
its place and with its number (`implied`).
"""

from __future__ import annotations

import re

from ptx2py.ptxgrammar.tree import Block, Instruction, Label, Loc

from .errors import DSLError

TMP = re.compile(r"\$L__tmp(0|[1-9][0-9]*)\Z")
LABEL_TRIVIA = ("\n", "")   # `$L__tmpN:` alone on its line, at column 0
START = object()            # the scope before a function's first instruction
_NO_LABEL = object()        # ScopeRule.before: no `$L__tmp` label right before


def scope(loc):
    """The debug scope a `.loc` puts the instructions after it in (None: the function's own)."""
    if loc is None or loc.function_name is None:
        return None
    return loc.function_name, loc.function_offset, loc.inlined_at


def number(label) -> int | None:
    m = TMP.match(label.name) if label.__class__ is Label else None
    return None if m is None else int(m.group(1))


class ScopeRule:
    """The rule, one statement at a time: `see(container, x)` for each label, `.loc` and
    instruction of a function body in the order of the text (`container`: the block or list
    holding it) returns N where `$L__tmpN:` goes right before `x`, else None. `first`: N of
    the first label when no `$L__tmp` label comes before it."""

    __slots__ = ("last", "prev", "cur", "in_gap", "before", "names", "written")

    def __init__(self, first: int = 0):
        self.last = first - 1
        self.prev = START    # the scope of the previous instruction
        self.cur = None      # the last `.loc`
        self.in_gap = False  # a `.loc` came since the previous instruction
        self.before = _NO_LABEL  # the container of a `$L__tmp` label right before this statement
        self.names: set = set()   # the `$L__tmp` labels of the body so far
        self.written: set = set()  # those the rule wrote

    def see(self, container, x):
        cls = x.__class__
        n = None
        if cls is Loc:
            if not self.in_gap:
                self.in_gap = True
                if self.prev is not START and scope(x) != self.prev and self.before is not container:
                    n = self.last = self.last + 1
                    self._name(n, x)
            self.cur = x
        elif cls is Instruction:
            self.prev, self.in_gap = scope(self.cur), False
        elif cls is Label:
            k = number(x)
            if k is not None:
                if x.name in self.written:
                    raise DSLError(f"scope_labels(): {x.name} is written by the rule already, where the "
                                   "debug scope changes (drop this ptx.label, or scope_labels())")
                self.names.add(x.name)
                self.last = k
            self.before = container if k is not None else _NO_LABEL
            return None
        self.before = _NO_LABEL
        return n

    def _name(self, n: int, loc) -> None:
        name = f"$L__tmp{n}"
        if name in self.names:
            raise DSLError(f"scope_labels(): {name} is written out too; the rule writes it before the "
                           f".loc {loc.file} {loc.line} {loc.column} where the debug scope changes "
                           "(drop the ptx.label, or scope_labels())")
        self.names.add(name)
        self.written.add(name)


def _walk(items, container):
    """(container, statement) for every label, `.loc` and instruction, in the order of the text."""
    for x in items:
        cls = x.__class__
        if cls is Block:
            yield from _walk(x.items, x)
        elif cls is Instruction or cls is Loc or cls is Label:
            yield container, x


def sites(items, first: int = 0, skip=frozenset()) -> list:
    """(loc, N) for each label the rule writes in a function body, before `loc`; the statements
    whose ids are in `skip` are left out (what the rule writes without them)."""
    rule, out = ScopeRule(first), []
    for container, x in _walk(items, None):
        if id(x) not in skip:
            n = rule.see(container, x)
            if n is not None:
                out.append((x, n))
    return out


def implied(items, first: int, kept=frozenset()):
    """The `$L__tmp` labels of a function body that `scope_labels(first=...)` writes back, as
    (their ids, the `first=` it needs: 0 where that is the default), or None: no label is left
    to the rule. A label named in `kept` (a branch target) stays. A label is left to it when the rule, without the
    labels left to it, writes
    that label at its place, with its number, in the layout the DSL gives it; the rule writes
    no other label there."""
    walked = list(_walk(items, None))
    candidates = {}   # id(loc) -> the plain `$L__tmp` label right before it
    for (c0, x0), (c1, x1) in zip(walked, walked[1:]):
        if c0 is c1 and x1.__class__ is Loc and number(x0) is not None and x0.name not in kept and _plain(x0, x1):
            candidates[id(x1)] = x0
    for start in dict.fromkeys((0, first)):
        left = dict(candidates)
        while left:   # keep written out the labels the rule does not write at their place
            try:
                got = {id(loc): n for loc, n in sites(items, start, frozenset(id(lab) for lab in left.values()))}
            except DSLError:   # the rule would write a label that stays written out
                break
            placed = {k: lab for k, lab in left.items() if k in got}
            if len(placed) == len(left):
                if len(got) == len(left) and all(got[k] == number(lab) for k, lab in left.items()):
                    return frozenset(id(lab) for lab in left.values()), start
                break   # another number, or a label LLVM did not write
            left = placed
    return None


def _plain(label, loc) -> bool:
    """The label alone on its line, the `.loc` on the next: the layout the DSL writes."""
    lead = loc.trivia[0] if loc.trivia else ""
    return label.trivia == LABEL_TRIVIA and lead[:1] == "\n" and "/" not in lead
