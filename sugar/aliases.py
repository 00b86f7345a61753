"""Long instruction heads used where their calls wrap -> one named alias each:

    wmma_load_a = ptx.wmma.load.a.sync.aligned.row.m16n16k16.global_.f16
    ...
    wmma_load_a(r[45:53], [rd[7]], r[30])     # was 3 lines under black

A head with an `at(...)` prefix keeps its `.loc` chain as the `at=` keyword
(`ptx.add.s32(r[1], r[2], 1, at="1:53:3")` records the same `.loc` lines first), and
nvcc's plain `.loc` lines just before an aliased call become its `at=` where that saves lines.
The alias name is the opcode (or typed family; `tma_load`/`tma_store`/`tma_prefetch`
for the tensor bulk copies) and the fewest of its words that tell it apart from the
file's other aliases of that opcode (`sync`/`aligned` never do). An alias is made only for a head called at least twice
where it
saves lines: the calls' lines before, less the lines after and the alias line.
"""

from __future__ import annotations

import builtins
import keyword
import re

from ptx2py.transpile import dsl as dsl
from ptx2py.transpile.dsl.families import FAMILIES
from ptx2py.transpile.format import LINE

from .ir import _DIRECTIVES, Call, Kw, is_call, layout_lines, stmt, taken_names
from .srcloc import at_fits, locs_before, with_at

NOISE = frozenset({"sync", "aligned"})
HERE = "here"  # `asm.here.<insn>`: the current `.loc` again inside the bracket
MIN_USES = 2  # a name for one call is only indirection
MIN_GAIN = 2  # lines saved, the alias line counted
_AT = re.compile(r"((?:at\((?:[^()\"]|\([^()]*\))*\)\.)+)")  # `at(5, 0).at(...).`
_CHAIN = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\Z")
_PREFIXES = ("ptx", "asm", "nvasm")
RESERVED = frozenset(dsl.__all__) | frozenset(dir(builtins)) | frozenset(keyword.kwlist)


def split_head(head: str):
    """(alias target, `at=` value or None, `inside=` value or None) of an instruction head,
    else None: `at(5, 0).asm.bar.sync` -> ("asm.bar.sync", "at(5, 0)", None);
    `asm.at(5, 0).bar.sync` (the `.loc` inside the markers) -> ("asm.bar.sync", None, "at(5, 0)");
    `asm.here.bar.sync` (the current `.loc` again inside them) -> ("asm.bar.sync", None, HERE)."""
    at = inside = None
    m = _AT.match(head)
    if m is not None:
        at = m.group(1)[:-1]
        head = head[m.end():]
    for p in ("asm.", "nvasm."):
        m = _AT.match(head, len(p)) if head.startswith(p) else None
        if m is not None:
            inside = m.group(1)[:-1]
            head = p + head[m.end():]
        elif head.startswith(p + HERE + "."):
            inside, head = HERE, p + head[len(p) + len(HERE) + 1:]
    if at is not None and inside is not None:
        return None  # `.loc`s on both sides of the markers: the prefixes say it best
    if not _CHAIN.match(head):
        return None
    first, second = head.split(".", 2)[:2]
    if first in FAMILIES:
        return head, at, inside
    if first not in _PREFIXES:
        if at is None:
            return None
        head, first, second = "ptx." + head, "ptx", first
    if second not in FAMILIES and (second in _DIRECTIVES or second in ("block", "insn")):
        return None
    return head, at, inside


# families whose alias names say what the copy does, as a Hopper engineer names it: (load, store);
# PTX writes the destination state space first (`.shared::cluster.global`: global -> shared)
STEMS = {"cp_async_bulk_tensor": ("tma_load", "tma_store"),
         "cp_async_bulk_prefetch_tensor": ("tma_prefetch", "tma_prefetch")}


_STEM_NAMES = frozenset(n for pair in STEMS.values() for n in pair)  # a name that needs no word after it when alone


def _stem(op: str, words) -> str:
    names = STEMS.get(op)
    if names is None:
        return op
    spaces = [w for w in words if w.startswith(("shared", "global_"))]
    return names[0] if not spaces or spaces[0].startswith("shared") else names[1]


def _words(target: str):
    """(group, words): the opcode or family (with its prefix; a STEMS name for its alias) and
    the dot-words after it."""
    parts = target.split(".")
    kind = parts[0] if parts[0] in _PREFIXES else ""
    rest = parts[1:] if kind else parts
    return (kind, _stem(rest[0], rest[1:])), rest[1:]


def _ident(words) -> str:
    return "_".join(w.strip("_").replace("__", "_") for w in words if w.strip("_"))


def _distinguishing(words, others) -> list:
    """Its words, in order, that each tell it apart from one more member of the group."""
    cand = [w for w in dict.fromkeys(words) if w not in NOISE]
    if not others:
        return cand[:1]
    chosen, left = [], [set(o) for o in others]
    for w in cand:
        if not left:
            break
        if any(w not in o for o in left):
            chosen.append(w)
            left = [o for o in left if w in o]
    return chosen if not left else cand  # no word separates it: all of them


def names_for(targets, taken) -> dict:
    """target -> alias name, unique, clear of the DSL's names and the module's own."""
    groups: dict = {}
    for t in targets:
        g, words = _words(t)
        groups.setdefault(g, []).append((t, words))
    out, used = {}, set(taken) | RESERVED
    for (kind, op), members in sorted(groups.items()):
        for t, words in members:
            others = [w for u, w in members if u != t]
            base = [op, *_distinguishing(words, others)] if others or op not in _STEM_NAMES else [op]
            name = _ident(base)
            if name in used or not name.isidentifier():
                name = _ident([kind or "ptx", *base])
            k = 2
            while name in used or not name.isidentifier():
                name, k = f"{_ident(base)}_{k}", k + 1
            used.add(name)
            out[t] = name
    return out


def _aliased(s, name, locs, here=False):
    """The call of alias `name` for statement s; `locs`: its (`at=`, `inside=`) values or None;
    `here`: the alias repeats the current `.loc` (`asm.here.<insn>`), so a call that does
    says nothing and one without a `.loc` inside says `inside=None`."""
    at, inside = locs
    if here:
        inside = None if inside == HERE else "None" if inside is None else inside
    items = list(s.expr.items) + [Kw(kw, _loc_value(v)) for kw, v in (("at", at), ("inside", inside)) if v is not None]
    return stmt(Call(name, items), s.depth)


def _here_target(target: str) -> str:
    """`asm.cp.async_...` -> `asm.here.cp.async_...` (its calls repeat the current `.loc`)."""
    p, rest = target.split(".", 1)
    return f"{p}.{HERE}.{rest}"


_ONE_AT = re.compile(r"at(\((?:[0-9]+, )+[0-9]+\))\Z")  # `at(176, 15)`: positional ints only


def _loc_value(v: str) -> str:
    """A keyword's `.loc` value: one plain `at(176, 15)` is its arguments, `(176, 15)` (the
    keyword says it is a location; four columns fewer keep the call on one line)."""
    m = _ONE_AT.match(v)
    return m.group(1) if m else v


def _definition(name, target):
    if len(name) + 3 + len(target) > LINE:  # black wraps a long value in ( )
        return stmt(Call("", [target]), 0, name + " = ")
    return stmt(target, 0, name + " = ")


# keywords that only reproduce whitespace: the layout table after the body takes them (sugar/trivia)
LAYOUT_KW = frozenset({"fmt", "indent", "lead", "close_indent", "close_lead", "end_indent"})


def _lines(s) -> int:
    """The statement's lines once its layout keywords have gone to the layout table."""
    e = s.expr
    if e.__class__ is Call and any(i.__class__ is Kw and i.name in LAYOUT_KW for i in e.items):
        e = Call(e.head, [i for i in e.items if i.__class__ is not Kw or i.name not in LAYOUT_KW])
    return layout_lines(e, s.depth, s.prefix)


def _clash(e, split) -> bool:
    """Whether the call has an `at=`/`inside=` keyword that its head's prefix gives too (one
    alias call cannot say both; an own `at=` alone stays on the alias call)."""
    return any(i.__class__ is Kw
               and (i.name == "at" and split[1] is not None or i.name == "inside" and split[2] is not None)
               for i in e.items)


def run(stmts, ctx):
    uses: dict = {}
    for k, s in enumerate(stmts):
        e = s.expr
        if e.__class__ is not Call or s.prefix or s.trailer:
            continue
        split = split_head(e.head)
        if split is None or _clash(e, split):
            continue
        if any(x is not None and not at_fits(x, s.depth) for x in split[1:]):
            continue
        uses.setdefault(split[0], []).append((k, split[1:]))
    taken = taken_names(stmts)
    plain_locs = not any(is_call(s, "srcmap") for s in stmts[:2])
    locs = {k: locs_before(stmts, k) for us in uses.values() for k, at in us if at[0] is None and plain_locs}
    here = {t: any(at[1] == HERE for _, at in us) for t, us in uses.items()}
    chosen = [t for t, us in uses.items() if here[t] or any(_lines(stmts[k]) > 1 or locs.get(k) for k, _ in us)]
    for _ in range(3):  # names depend on which aliases there are: settle them
        names = names_for(chosen, taken)
        keep = [t for t in chosen
                if sum(_use(stmts, k, names[t], at, locs, here[t])[0] is not stmts[k] for k, at in uses[t]) >= MIN_USES
                and _gain(stmts, uses[t], names[t], t, locs, here[t]) >= MIN_GAIN]
        if keep == chosen:
            break
        chosen = keep
    if not chosen:
        return stmts
    names = names_for(chosen, taken)
    out, drop = list(stmts), set()
    for t in chosen:
        for k, at in uses[t]:
            out[k], first = _use(stmts, k, names[t], at, locs, here[t])
            drop.update(range(first, k))
    defs = [_definition(names[t], _here_target(t) if here[t] else t) for t in sorted(chosen, key=lambda t: names[t])]
    return defs + [s for k, s in enumerate(out) if k not in drop]


def _use(stmts, k, name, at, locs, here=False):
    """(the aliased call at k, the index its statements start at): nvcc's plain `.loc` lines
    just before it become its `at=` where that takes fewer lines. Every call of an aliased
    head takes the alias (one spelling), its `inside=` keyword too."""
    call = _aliased(stmts[k], name, at, here)
    before = locs.get(k)
    folded = None if before is None else with_at(stmts[before[0]:k], call, before[1])
    return (call, k) if folded is None else (folded, before[0])


def _gain(stmts, us, name, target, locs, here=False) -> int:
    before = after = 0
    for k, at in us:
        call, first = _use(stmts, k, name, at, locs, here)
        before += sum(_lines(s) for s in stmts[first:k + 1])
        after += _lines(call)
    return before - after - _lines(_definition(name, _here_target(target) if here else target))
