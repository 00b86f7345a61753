"""Debug labels as a prefix of the instruction they mark:

    ptx.label(L.tmp15)
    at(207, 12, kernels_215).max.f32(r[187], r[186], r[185])
->  label(L.tmp15).at(207, 12, kernels_215).max.f32(r[187], r[186], r[185])

LLVM writes `$L__tmpN:` before the first instruction of each inlined call (and after it) for
DWARF's `DW_AT_low_pc`/`DW_AT_high_pc`; nothing branches to them. A label that no instruction
or `.branchtargets`/`.calltargets` list names (in the PTX), and that no other statement of the
Python names (outside `with ptx.section(...)` data), joins the instruction statement after it
where the joined line fits; branch targets keep their own line (they start blocks). The pass
runs last, so no pass after it reads the joined heads; the label, the `.loc` and the
instruction record in the order of the input (`transpile/dsl/structured.py`: `label`).
"""

from __future__ import annotations

import re

from ptx2py.ptxgrammar.tree import Instruction, LabelList, Symbol
from ptx2py.transpile.dsl import control
from ptx2py.transpile.format import LINE, flat

from .ir import Call, Kw, is_insn, stmt, taken_names, unq
from .loops import label_atom

NAMES = ("label",)
_TOKEN = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*""")


def run(stmts, ctx):
    if ctx.module is None or taken_names(stmts) & set(NAMES):
        return stmts
    spelling = label_spellings(stmts)
    if spelling is None:
        return stmts
    named = referenced_labels(ctx.module) | {spelling(a) for a in _atoms_outside_sections(stmts)}
    out, k, n = [], 0, len(stmts)
    while k < n:
        s = stmts[k]
        atom = label_atom(s)
        joined = None
        if atom is not None and k + 1 < n and spelling(atom) not in named | {None}:
            joined = _joined(atom, stmts[k + 1], s.depth)
        out.append(joined or s)
        k += 2 if joined else 1
    return out


def _joined(atom, ins, depth):
    """`label(<atom>).<ins head>(...)` on one line, else None."""
    e = ins.expr
    if ins.depth != depth or not is_insn(ins) or any(i.__class__ is Kw and i.name == "at" for i in e.items):
        return None  # (`at=` records its `.loc`s before any prefix: the label would follow them)
    head = e.head[4:] if e.head.startswith("ptx.") else e.head
    call = Call(f"label({atom}).{head}", e.items)
    return stmt(call, depth) if 4 * depth + len(call.flat()) <= LINE else None


def referenced_labels(module) -> set:
    """The names the module's instructions (their operands) and `.branchtargets`/`.calltargets`
    lists use, labels among them (section data, DWARF's label addresses, is neither)."""
    out = set()
    for node in module.walk():
        if node.__class__ is Instruction:
            out.update(x.name for x in node.walk() if x.__class__ is Symbol)
        elif node.__class__ is LabelList:
            out.update(node.labels)
    return out


def _atoms_outside_sections(stmts) -> set:
    """The atoms of every statement but the `ptx.label(x)` lines, the `L = labels(...)` table
    and the section blocks' bodies: a label named anywhere there (a branch, a loop, a table) is no debug label."""
    out, section = set(), None
    for s in stmts:
        if section is not None and s.depth > section:
            continue
        section = s.depth if s.prefix == "with " and getattr(s.expr, "head", None) == "ptx.section" else None
        if label_atom(s) is None and s.prefix != "L = ":  # (the table spells every label)
            out.update(_TOKEN.findall(s.prefix + flat(s.expr) + s.trailer))
    return out


def label_spellings(stmts):
    """atom -> the PTX label it spells (None for an atom that is no label): `L.tmp15` by
    the module's `L = labels(...)` table or by rule, a string literal as itself."""
    table = control.L
    for s in stmts:
        if s.depth == 0 and s.prefix == "L = " and getattr(s.expr, "head", None) == "labels":
            table = _table(s.expr)
            if table is None:
                return None

    def spelling(atom):
        if atom.startswith("L.") and atom[2:].isidentifier():
            try:
                return getattr(table, atom[2:])
            except (AttributeError, control.DSLError):
                return None
        return unq(atom)

    return spelling


def _table(call):
    """The `labels(...)` table the generated module binds to `L`, None when it is not literal."""
    args = [unq(i) for i in call.items if i.__class__ is str]
    kw = {i.name: unq(i.value) for i in call.items if i.__class__ is Kw}
    if None in args or None in kw.values() or len(args) + len(kw) != len(call.items):
        return None
    try:
        return control.labels(*args, **kw)
    except control.DSLError:
        return None
