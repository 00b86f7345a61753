"""Typed calls (transpile/dsl/typed.py) for tensor-core, TMA and mbarrier
instructions: `ptx.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(d, a, b, d)`
-> `mma_sync.m16n8k16.row.col.f32.f16.f16.f32(d=..., a=..., b=...)`, and the
matrix-descriptor constant OR-ed into the registers a `wgmma` reads
(`or.b64 %rd5, %rd17, 4611686293305294848`) shown as a named value, decoded,
`WGMMA_DESC_BITS = wgmma_desc(sbo=1024, swizzle="128B")`, defined once at the top, and
a tcgen05.mma instruction descriptor set by `mov.b32` as `IDESC = tcgen05_idesc("f16", ...)`.

Every instruction of a family is rewritten (one spelling per family, whatever its
length: the aliases pass shortens long heads), checked: the typed call's operands,
rebuilt by `typed.operands` from its keywords and defaults, are the original ones.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import product

from ptx2py.transpile.dsl.descriptors import TCGEN05_IDESC, WGMMA_DESC, decode
from ptx2py.transpile.dsl.errors import DSLError
from ptx2py.transpile.dsl.typed import FAMILIES, applicable, operands
from ptx2py.transpile.format import flat
from ptx2py.transpile.generator import q
from ptx2py.transpile.names import from_python, to_python

from .ir import Call, Display, Kw, is_insn, per_function, positional, stmt, taken_names

_REG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[0-9]+\]\Z")
_RANGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[^\[\]]*:[^\[\]]*\]\Z")  # r[0:64]: a vector
# prefixes before the instruction; an `at(...)` may hold one nested tuple (`inlined_at=(1, 124, 5)`)
_PREFIX = re.compile(r"(?:asm\.|nvasm\.|block\.|here\.|at\((?:\"[^\"]*\"|\([^()]*\)|[^()\"])*\)\.)+")
# python spelling of each family's leading words, longest first (cp.async.bulk.tensor before cp.async.bulk)
_LEADS = sorted(((tuple(to_python(w) for w in f.lead), f) for f in FAMILIES.values()), key=lambda x: -len(x[0]))
_FIRST = {lead[0] for lead, _ in _LEADS}


def _is_vec(item) -> bool:
    if item.__class__ is Display:
        return item.open == "("
    return item.__class__ is str and _RANGE.match(item) is not None


def _split(head):
    """(typed prefix, family, modifier idents) of a plain instruction head, else None."""
    if head.startswith("ptx."):
        pre, rest = "", head[4:]
    else:
        m = _PREFIX.match(head)
        if m is None:
            return None
        pre, rest = m.group(), head[m.end():]
    words = rest.split(".")
    if words[0] not in _FIRST:
        return None
    for lead, fam in _LEADS:
        if tuple(words[:len(lead)]) == lead:
            return pre, fam, words[len(lead):]
    return None


def _same(a, b) -> bool:
    return len(a) == len(b) and all(flat(x) == flat(y) for x, y in zip(a, b))


def _name(fam, mods, items):
    """{operand name: item} whose rebuilt operand list is `items`, else None. Optional
    operands (and those of vector or scalar operands only) are tried present first."""
    ops = applicable(fam, mods)
    unsure = [o for o in ops if o.kind == "opt" or any("~" in c for c in o.conds)]
    for pick in product((True, False), repeat=len(unsure)):
        absent = {o.name for o, p in zip(unsure, pick) if not p}
        chosen = [o for o in ops if o.name not in absent]
        if len(chosen) != len(items):
            continue
        kw = {o.name: v for o, v in zip(chosen, items)}
        try:
            if _same(operands(fam, mods, kw, _is_vec, str), items):
                return kw
        except DSLError:
            continue
    return None


def _short(fam, mods, kw, items):
    """`kw` without the defaulted operands that hold their default."""
    out = dict(kw)
    for o in fam.operands:
        if o.kind == "def" and o.name in out:
            dflt = kw.get(o.default, o.default)
            if flat(out[o.name]) == flat(dflt):
                del out[o.name]
    try:
        return out if _same(operands(fam, mods, out, _is_vec, str), items) else kw
    except DSLError:
        return kw


def typed(s, free):
    """(family, {operand: item}, typed call) of instruction `s`, else None."""
    sp = _split(s.expr.head)
    if sp is None or sp[1].name not in free:
        return None
    pre, fam, idents = sp
    mods = tuple(from_python(i) for i in idents)
    items = positional(s.expr)
    kw = _name(fam, mods, items)
    if kw is None:
        return None
    short = _short(fam, mods, kw, items)
    head = pre + ".".join([fam.name, *idents])
    call = Call(head, [Kw(k, v) for k, v in short.items()] + [i for i in s.expr.items if i.__class__ is Kw])
    return fam, kw, call


def run(stmts, ctx):
    taken = taken_names(stmts)
    free = set(FAMILIES) - taken
    descs = set()
    for s in stmts:
        t = typed(s, free) if is_insn(s) else None
        if t is None:
            continue
        fam, kw, call = t
        if fam.name == "wgmma_mma":
            descs.update(kw[k] for k in ("a", "b") if kw[k].__class__ is str and _REG.match(kw[k]))
        if call is not None:
            s.expr = call
    stmts = _accumulators(stmts, taken)
    if "IDESC" not in taken:
        stmts = _idescs(stmts)
    if not descs or "WGMMA_DESC_BITS" in taken:
        return stmts
    return _desc_bits(stmts, descs)


def _is_regs(s) -> bool:
    return s.expr.__class__ is Call and s.expr.head == "regs" and s.prefix.endswith(" = ")


def _accumulators(stmts, taken):
    """The register range a function's wgmma calls accumulate into (`d=r[125:189]`) -> one
    name, bound after the function's `regs(...)` line: `acc = r[125:189]`, `d=acc`."""
    return per_function(stmts, lambda fn: _name_accumulators(fn, taken))


def _name_accumulators(fn, taken):
    regs_at = next((k for k, s in enumerate(fn) if s.depth == 1 and _is_regs(s)), None)
    if regs_at is None:
        return fn
    ranges, shapes = [], {}
    for s in fn:
        e = s.expr
        if e.__class__ is Call and ".wgmma_mma." in "." + e.head and not s.prefix:
            d = next((i for i in e.items if i.__class__ is Kw and i.name == "d"), None)
            if d is not None and d.value.__class__ is str and _RANGE.match(d.value):
                if d.value not in shapes:
                    ranges.append(d.value)
                    shapes[d.value] = e.head.split("wgmma_mma.", 1)[1]
    bound = {rg: _bound_at(fn, rg.split("[")[0]) for rg in ranges}
    ranges = [rg for rg in ranges if bound[rg] is not None]   # a file bound nowhere at the top stays as it is
    names, n = {}, 0
    for rg in ranges:
        while (name := "acc" if n == 0 else f"acc_{n}") in taken:
            n += 1
        names[rg] = name
        n += 1
    if not names:
        return fn
    for s in fn:
        e = s.expr
        if e.__class__ is Call and ".wgmma_mma." in "." + e.head:
            for i in e.items:
                if i.__class__ is Kw and i.name == "d" and i.value in names:
                    i.value = names[i.value]
            e._flat = None
    out = list(fn)
    for rg in sorted(ranges, key=lambda r: -max(regs_at, bound[r])):   # after the line binding its file
        at = max(regs_at, bound[rg]) + 1
        out[at:at] = [stmt(f"# the wgmma accumulator ({shapes[rg]})", 1), stmt(rg, 1, names[rg] + " = ")]
    return out


def _bound_at(fn, name: str):
    """The index of the function-level statement binding `name` (`r = reg.b32(...)`,
    `p, r, rd = regs(...)`), else None."""
    for k, s in enumerate(fn):
        if s.depth == 1 and s.prefix.endswith(" = ") and name in (x.strip() for x in s.prefix[:-3].split(",")):
            return k
    return None


def _decoded(call_name, layout, value: int, lead=()):
    """`call_name(*lead, field=...)` spelling `value` exactly, else None."""
    got = decode(layout, value)
    if got is None:
        return None
    fields, rest = got
    items = list(lead) + [Kw(k, q(v) if v.__class__ is str else str(v)) for k, v in fields.items()]
    if rest:
        items.append(Kw("other", hex(rest)))
    return Call(call_name, items)


def _const(c) -> bool:
    return c.__class__ is str and c.isdigit() and (c == "0" or c[0] != "0")


def _idescs(stmts):
    """`mov.b32 %r, <int>` into the instruction-descriptor register of a `tcgen05.mma` (set once)
    -> `IDESC = tcgen05_idesc("f16", d="f32", a="f16", b="f16", m=128, n=128, ...)` at the top."""
    kinds = {}
    for s in stmts:
        h = s.expr.head if s.expr.__class__ is Call else ""
        if "tcgen05.mma" not in h and "tcgen05_mma" not in h:
            continue
        kind = next((w[6:] for w in h.split(".") if w.startswith("kind__")), None)
        if kind not in TCGEN05_IDESC or ".sp" in h or "ws" in h.split("."):
            continue
        kw = {i.name: i.value for i in s.expr.items if i.__class__ is Kw}
        pos = positional(s.expr)
        reg = kw.get("idesc", pos[3] if len(pos) > 3 and not kw.keys() - {"pred"} else None)
        if reg.__class__ is str and _REG.match(reg):
            kinds.setdefault(reg, set()).add(kind)
    if not kinds:
        return stmts
    sets = Counter(s.expr.items[0] for s in stmts if is_insn(s) and s.expr.head.startswith("ptx.mov.") and s.expr.items)
    consts, order = {}, []
    for s in stmts:
        if not (is_insn(s) and s.expr.head == "ptx.mov.b32" and len(s.expr.items) == 2):
            continue
        d, c = s.expr.items
        if len(kinds.get(d, ())) != 1 or sets[d] != 1 or not _const(c):
            continue
        kind = next(iter(kinds[d]))
        if (c, kind) not in consts:
            call = _decoded("tcgen05_idesc", TCGEN05_IDESC[kind], int(c), [q(kind)])
            if call is None:
                continue
            consts[(c, kind)] = ("IDESC" if not consts else f"IDESC_{len(consts)}", call)
            order.append((c, kind))
        s.expr.items[1] = consts[(c, kind)][0]
        s.expr._flat = None
    head = []
    for k in order:
        head += [stmt(f"# {hex(int(k[0]))}: tcgen05.mma instruction descriptor (.kind::{k[1]})", 0),
                 stmt(consts[k][1], 0, consts[k][0] + " = ")]
    return head + stmts


def _desc_bits(stmts, descs):
    """The descriptor constant: `or.b64 <desc>, <reg>, <big int>` into a register a wgmma reads."""
    consts = Counter()
    ors = []
    for s in stmts:
        if is_insn(s) and s.expr.head == "ptx.or_.b64" and len(s.expr.items) == 3:
            d, _, c = s.expr.items
            if d in descs and c.__class__ is str and c.isdigit() and c[0] != "0" and int(c) >= 1 << 32:
                consts[c] += 1
                ors.append(s)
    if not consts:
        return stmts
    c = consts.most_common(1)[0][0]
    for s in ors:
        if s.expr.items[2] == c:
            s.expr.items[2] = "WGMMA_DESC_BITS"
            s.expr._flat = None
    return [stmt(f"# {hex(int(c))}: the wgmma shared-memory descriptor bits OR-ed into each start address", 0),
            stmt(_decoded("wgmma_desc", WGMMA_DESC, int(c)) or c, 0, "WGMMA_DESC_BITS = ")] + stmts
