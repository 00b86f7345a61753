"""The names of each function's registers, chosen while each statement is one instruction
(sugar/regnames.py writes them, after the rolling passes): see that module.

Role names: what `ld.param` loads from parameter `K` is `K`, a parameter's or a variable's
address `K_addr`, `mov %r, %ctaid.x` is `ctaid_x`, a conversion of a named value
(`cvta.to.global`) the name with a suffix (`a_ptr_g`), an address an mbarrier instruction
reads `bar`, one in tensor memory `tmem` (the shared word `tcgen05.alloc` writes it to:
`tmem_slot`); where no source names them, a raised loop's test `setp(p, a, b)` names `a` `iv`
and `b` `iv_end`. Source names: the outermost `.loc` of an instruction (through `inlined_at`) gives
its line in the kernel's own source (`.file` paths that exist, `--source`, corpus/src); the
name the statement there assigns (sugar/srcnames.py) names the registers defined at it: `T`
for the last value it defines that is used past that statement, `T_1`, `T_2`, ... for the
others (one count per name in a function). Role names come first; a role names one value, so
a register the function writes more than once gets none (it stays numbered).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from .demoted import declares_variable
from .flownames import flow_names, operand_roles
from .ir import Call, Display, Kw, is_insn, per_function, positional, unq
from .regnames import _IDENT, _atoms, _families, _pattern, with_families
from .sources import _sources
from .srcnames import statements

# `cvta.to.global.u64(rd[3], rd[1])`: the same value in another form, named after it
_CONVERSIONS = (("cvta.to.global.", "_g"), ("cvta.to.shared.", "_s"), ("cvta.param.", "_p"),
                ("cvta.", "_gen"), ("cvt.u64.", "_64"), ("cvt.s64.", "_64"), ("mov.", ""))
def _dests(first, pattern) -> list:
    """The registers an instruction's first operand writes (a register, a vector, `pair(...)`)."""
    if first.__class__ is str:
        return [first] if pattern.fullmatch(first) else []
    if first.__class__ in (Display, Call) and (first.__class__ is Display and first.open == "(" or
                                               getattr(first, "head", None) == "pair"):
        return [i for i in first.items if i.__class__ is str and pattern.fullmatch(i)]
    return []


def _defined(s, pattern) -> list:
    """The registers the instruction statement `s` writes (a raised call such as
    `mbarrier_wait([r[27]], r[122])` writes none)."""
    e = s.expr
    if e.__class__ is not Call or not is_insn(s):
        return []
    pos = positional(e)
    return _dests(pos[0], pattern) if pos else []


# --- application ----------------------------------------------------------------------




# what the address in an instruction's `[reg]` operands is, by opcode (the first lead that matches)
_ADDRESSES = (("mbarrier.", "bar"), ("mbarrier_wait", "bar"), ("tcgen05.commit.", "bar"),
              ("tcgen05.alloc.", "tmem_slot"), ("tcgen05.", "tmem"))


def _reads_register(op, pattern) -> bool:
    atoms: list = []
    _atoms(op, atoms)
    return any(pattern.search(a) for a in atoms)


def _address_role(opcode):
    return next((role for lead, role in _ADDRESSES if opcode.startswith(lead)), None)


def _loc(e, parent):
    """The (file, line) in the kernel's own source of a `ptx.loc(f, l, c, fn, (f, l, c))` statement."""
    pos = [i for i in e.items if i.__class__ is not Kw]
    here = tuple(pos[:3])
    outer = next((i for i in pos[3:] if i.__class__ is Display), None)
    up = tuple(outer.items) if outer is not None else None
    parent[here] = up
    seen = set()
    while up is not None and up not in seen:
        seen.add(up)
        here, up = up, parent.get(up)
    return (here[0], here[1]) if len(here) >= 2 else None


def _param_name(op):
    """`sym(k.K)` -> "K" (the parameter's Python name)."""
    if op.__class__ is Display and op.open == "[" and len(op.items) == 1:
        op = op.items[0]
    if op.__class__ is Call and op.head == "sym" and len(op.items) == 1 and op.items[0].__class__ is str:
        a = op.items[0]
        v = unq(a)
        name = (v if v is not None else a).rsplit(".", 1)[-1]
        return name if _IDENT.fullmatch(name) else None
    return None


def _variables(stmts) -> frozenset:
    """The Python names bound to the module's and its functions' variables (`tile = var.shared...`):
    what `mov %r, tile` reads the address of (a block's own registers, `r0`, are no address)."""
    return frozenset(s.prefix[:-3] for s in stmts if s.prefix.endswith(" = ") and s.expr.__class__ is Call
                     and declares_variable(s.expr) and s.prefix[:-3].isidentifier())


def _role(opcode, pos, named, pattern, variables):
    """A role name of the register an instruction defines, or None."""
    src = pos[1] if len(pos) == 2 else None
    if src is None:
        return None
    if opcode.startswith("ld.param."):
        return _param_name(src)
    if opcode.startswith("mov."):
        if src.__class__ is str and src.startswith("sreg."):
            return src[5:].replace(".", "_")
        p = _param_name(src)
        if p is None and src.__class__ is str and src in variables:
            p = src   # a variable's address: `mov.u32 %r, smem` (the names pass wrote it bare)
        if p is not None:
            return p + "_addr"
    if src.__class__ is str and src in named and pattern.fullmatch(src):
        opcode = opcode.replace("_.", ".")  # the Python spelling `cvta.to.global_.u64`
        for lead, suffix in _CONVERSIONS:
            if opcode.startswith(lead) and suffix:
                return named[src].rstrip("_") + suffix
    return None


def _source_targets(ctx) -> dict:
    """{file index atom: {line: name}} of the sources readable for this module."""
    module = getattr(ctx, "module", None)
    if module is None:
        return {}
    from ptx2py.ptxgrammar.tree import File

    files = {f.index: f.path[1:-1] for f in module.items if f.__class__ is File}
    if not files:
        return {}
    options = getattr(ctx, "options", None) or {}
    texts = list(_sources(options, module))
    out = {}
    for index, path in files.items():
        hit = next((t for p, t in texts if p == path), None)
        if hit is None:
            hit = next((t for p, t in texts if Path(p).name == Path(path).name), None)
        if hit is None and options.get("source") and index == min(files, key=int):
            hit = next((t for p, t in texts if p == options["source"]), None)
        if hit is not None:
            out[index] = statements(path, hit)
    return out


class _Numbering:
    """One function's names: `T` once, then `T_1`, `T_2`, ... (one count per base)."""

    def __init__(self):
        self.used, self.count = set(), {}

    def plain(self, base):
        if base in self.used:
            return self.numbered(base)
        self.used.add(base)
        return base

    def numbered(self, base):
        while True:
            k = self.count[base] = self.count.get(base, 0) + 1
            if f"{base}_{k}" not in self.used:
                self.used.add(f"{base}_{k}")
                return f"{base}_{k}"


def _analyse(fn, sources, variables) -> tuple:
    """({register atom: name}, the registers whose names are kept only where they fit: those
    carried along the data flow) of one function."""
    families = _families(fn)
    if not families:
        return {}, set()
    pattern = _pattern(families)
    parent, loc = {}, None
    defs, uses = [], {}
    named: dict = {}
    names = _Numbering()
    held = []   # (register, the role of the address it holds)
    loops, compares = [], {}   # the predicates raised loops repeat on; setp's operands per predicate
    insns: list = []   # (opcode, operands, destinations) of each instruction, for sugar/flownames.py
    constants = set()  # registers set by a `mov` of a constant (a shuffle's lane mask): never a statement's value
    # a role names one value: a register the function writes more than once (nvcc's `tid.x` reused as a
    # loop counter) holds others too, and is left numbered
    written = Counter(d for s in fn for d in _defined(s, pattern))
    refused: set = set()

    def statement(where):
        """(file, first line, the name it assigns or None) of the source statement at `where`."""
        if where is None or not where[1].isdigit():
            return None
        st = sources.get(where[0], {}).get(int(where[1]))
        return None if st is None else (where[0], st[1], st[0])

    for s in fn:
        e = s.expr
        if e.__class__ is not Call:
            continue
        if s.prefix == "with " and e.head == "loop":
            loops += [i.value for i in e.items if i.__class__ is Kw and i.name == "while_" and i.value.__class__ is str]
            continue
        if e.head == "ptx.loc":
            loc = _loc(e, parent)
            continue
        pos = positional(e)
        dests = _defined(s, pattern)
        if e.head.startswith("ptx."):
            insns.append((e.head[4:].replace("_.", "."), pos, dests))
        atoms: list = []
        _atoms(e, atoms)
        st = statement(loc)
        for a in atoms:
            for m in pattern.findall(a):
                uses.setdefault(m, set()).add(st[:2] if st else loc)
        role = _address_role((e.head[4:] if e.head.startswith("ptx.") else e.head).replace("_.", "."))
        if role is not None:
            held += [(m, role) for op in pos if op.__class__ is Display and op.open == "[" and op.items
                     and op.items[0].__class__ is str for m in pattern.findall(op.items[0])]
        if e.head.startswith("ptx.setp.") and len(pos) == 3 and pos[0].__class__ is str:
            compares[pos[0]] = pos[1:]
        for d in dests:
            defs.append((d, st))
            if e.head.startswith("ptx.mov.") and len(pos) == 2 and not _reads_register(pos[1], pattern):
                constants.add(d)
            role = _role(e.head[4:], pos, named, pattern, variables) if len(dests) == 1 else None
            if role is not None and d not in named and d not in refused:
                if written[d] > 1:
                    refused.add(d)
                else:
                    named[d] = names.plain(role)
    optional: set = set()   # the names sugar/regnames.py leaves out where they lengthen a statement
    for reg, role in held:
        if reg not in named and reg not in refused:
            if written.get(reg, 0) > 1:
                refused.add(reg)
            else:
                named[reg] = names.plain(role)
    assigned: dict = {}   # the source names a register's definitions assign: one name, or none
    for d, st in defs:
        assigned.setdefault(d, set()).add(st[2] if st is not None else None)
    groups: dict = {}
    for d, st in defs:
        if d not in named and st is not None and st[2] is not None and len(assigned[d]) == 1:
            group = groups.setdefault(st, [])
            if d not in group:
                group.append(d)
    taken = set(named)
    for st, regs in groups.items():
        regs = [d for d in regs if d not in taken]
        if not regs:
            continue
        live = [d for d in regs if uses.get(d, set()) - {st[:2]}]
        values = [d for d in live if d not in constants]
        result = (values or live or regs)[-1]   # the value the statement leaves for the rest of the kernel
        named[result] = names.plain(st[2])
        for d in regs:
            if d is not result:
                named[d] = names.numbered(st[2])
        taken.update(regs)
    for pred in loops:  # what no source names: the loop's counter and its bound, by the test it repeats on
        for reg, role in zip(compares.get(pred, ()), ("iv", "iv_end")):
            if reg.__class__ is str and pattern.fullmatch(reg) and reg not in named and reg not in refused:
                named[reg] = names.plain(role)
    # what no source names either: the ISA's role of a constant operand (a shuffle's clamp)
    for reg, role in operand_roles(insns, pattern).items():
        if role is not None and reg in constants and written[reg] == 1 and reg not in named:
            named[reg] = names.plain(role)
            optional.add(reg)
    before = set(named)
    flow_names(insns, named, pattern, names.plain)
    optional.update(set(named) - before)
    return named, optional


def run(stmts, ctx):
    """Pass: the names of each function's registers, kept in `ctx.register_names` (one dict per
    function that declares registers, in order)."""
    sources, shared = _source_targets(ctx), _variables(s for s in stmts if s.depth == 0)
    found = []

    def one(fn):
        found.append(_analyse(fn, sources, shared | _variables(fn)))
        return fn
    per_function(stmts, lambda fn: one(fn) if with_families(fn) else fn)
    ctx.register_names = found
    return stmts


