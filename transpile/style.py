"""A module's formatting style: the usual trivia for each kind of token position.

Every token of a statement (its own tokens and its operands', nested items
excluded) gets a *position key*:

- the statement's first token: ``("L", statement class, depth)``; its trivia is
  split into comment/blank-line calls, a newline and the *indent*, and the
  style stores the usual indent (or ``SAME_LINE`` + the text, for statements
  that usually share the previous statement's line, as in one-line inline asm);
- every other token: ``(previous token's owner class, previous token's class,
  owner class, token class)``, where a token's class is the punctuation itself,
  ``.`` for a dot-word or ``w`` for a word (name, number).

Context refines the keys: inside a ``// begin inline asm`` ... ``// end inline
asm`` region every key is prefixed with ``"asm"`` (user asm has its own
spacing); the lead key also records the previous statement (``prev_tag``: its
class, or opcode in asm, and its lead), so one-line asm blocks and label/blank
layouts are predicted; a ``call``'s tokens and a body-less function head have
their own owner names (their multi-line layouts differ); the first operand /
declarator key carries the spelling / state space. Every refined key falls back
to the coarser one (``Style.fallback``), so the table records only what differs.

``infer_style(module)`` counts the trivia seen at each key and keeps the most
common (grouping statements by shape first: see ``shape_trivia``);
``Style.predict(key)`` answers for any key (a fallback rule covers keys the
module never used, e.g. for hand-written DSL code). The generator gives an
explicit format argument only where a token's trivia differs from the
prediction, and the DSL fills in the predictions, so both sides share
``flatten`` and ``Style``.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter, defaultdict
from contextlib import contextmanager

from ptx2py.ptxgrammar.tree import Block, Declarator, Function, Module, Section

PUNCT = frozenset(",;{}()[]<>=+-|@!:?*/%&^~")
TIGHT_BEFORE = frozenset({",", ";", ")", "]", ":", "|", "<", ">", "[", "(", "}"})
TIGHT_AFTER = frozenset({"(", "[", "{", "@", "!", "|", "<", "-", "~"})
_TIGHT_DOT_OWNERS = frozenset({"Instruction", "call", "Register", "SpecialRegister", "Symbol", "Address"})


_CLASS_CACHE: dict = {}


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building a large acyclic structure
    (trees, statement lists): its full passes cost more than the work otherwise."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def deep_trees(limit: int = 12_000):
    """Room for the recursive walks over deep expression trees (a 5000-term PTX sum
    is 5000 levels deep; Python 3.11 keeps Python frames off the C stack)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def token_class(tok: str) -> str:
    c = _CLASS_CACHE.get(tok)
    if c is None:
        if tok in PUNCT:
            c = tok
        elif tok[0] == "." and len(tok) > 1:
            c = "."
        else:
            c = "w"
        if len(_CLASS_CACHE) < 1000000:
            _CLASS_CACHE[tok] = c
    return c


def default_trivia(key) -> str:
    """The fallback rule: one space between words, none around punctuation."""
    if key[0] == "asm":
        key = key[1:]
    if key[0] == "L":
        cls, depth = key[1], key[2]
        return "" if depth == 0 or cls == "Label" else "\t"
    pc, pt, c, t = key[:4]
    if t == "{" and c == "Block":
        return "\n"
    if t == "." and c == pc and c in _TIGHT_DOT_OWNERS:
        return ""
    if t == "[" and c != pc:
        return " "
    if t in TIGHT_BEFORE or pt in TIGHT_AFTER:
        return ""
    if pt == "=" or t == "=":
        return " "
    return " "


def flatten(stmt, out: list) -> list:
    """(node, index, owner class, token) for each token of one statement.

    Nested items (a function body's or block's statements, a section's data)
    are separate statements: a Block contributes only its `{`.
    """
    cls = stmt.__class__
    if cls is Block:
        out.append((stmt, 0, "Block", "{"))
        return out
    if cls is Section:
        out.append((stmt, 0, "Section", ".section"))
        out.append((stmt, 1, "Section", stmt.name))
        out.append((stmt, 2, "Section", "{"))
        return out
    name = cls.__name__
    i = 0
    for p in stmt._parts():
        if p.__class__ is str:
            out.append((stmt, i, name, p))
            i += 1
        else:
            flatten(p, out)
    return out


def position_keys(flat, depth: int, ctx=None) -> list:
    """The key of every token in `flat` (index 0 is the statement lead).

    `ctx` is None or (asm, prev): inside a `// begin inline asm` ...
    `// end inline asm` region (verbatim user asm with its own spacing) every key
    is prefixed with "asm" and falls back to the same key outside the region;
    `prev` (see `prev_tag`) is appended to the lead key, which falls back to the
    lead key without it.
    """
    if ctx is not None:
        asm, prev = ctx
        keys = position_keys(flat, depth)
        keys[0] = (*keys[0], prev)
        return [("asm", *k) for k in keys] if asm else keys
    first = flat[0]
    stmt = first[0]
    keys = [("L", first[2] if stmt.__class__ is not Function else "Function", depth)]
    insn = stmt if first[2] == "Instruction" else None
    decl = stmt if first[2] == "VarDecl" else None
    rename = None
    if insn is not None and insn.opcode == "call":
        # call sequences have their own multi-line layout; the return list is not the args
        rename = {"Instruction": "call"}
        if insn.operands and insn.operands[0].__class__.__name__ == "ParenList":
            rename[id(insn.operands[0])] = "ParenList0"
    elif stmt.__class__ is Function and stmt.body is None:
        rename = {"FunctionHead": "FunctionDecl"}
    prev_cls, prev_t = first[2], token_class(first[3])
    if rename:
        prev_cls = rename.get(prev_cls, prev_cls)
    owner = "call" if rename and "Instruction" in rename else "Instruction"
    for node, _, c, tok in flat[1:]:
        t = token_class(tok)
        if rename:
            c = rename.get(id(node), rename.get(c, c))
        if insn is not None and prev_cls == owner and c != owner and prev_t in ".w":
            # the first operand: producers pad it by the instruction's spelling
            keys.append((prev_cls, prev_t, c, t, insn.opcode + "".join(insn.modifiers)))
            insn = None
        elif decl is not None and prev_cls == "VarDecl" and c == "Declarator":
            # the first declarator: padded by state space, `<N>` counts and depth (nvcc)
            d0 = decl.declarators[0] if decl.declarators else None
            keys.append((prev_cls, prev_t, c, t,
                         decl.space + ("<>" if d0 is not None and d0.count is not None else "") + str(depth)))
            decl = None
        elif c == "Section" and t == "{":
            # by section name: LLVM writes its empty `.debug_macinfo` on one line (`{\t}`)
            keys.append((prev_cls, prev_t, c, t, stmt.name))
        else:
            keys.append((prev_cls, prev_t, c, t))
        prev_cls, prev_t = c, t
    return keys


def close_key(container_class, empty: bool, depth: int, asm: bool):
    """The lead key of a container's closing `}`: by what it closes (a function body or
    block, a section; empty or not), falling back to the key by depth alone. LLVM closes
    a function at column 0 and a section at a tab, an empty section on its own line."""
    key = ("L", "}", depth, container_class.__name__ + (" empty" if empty else ""))
    return ("asm", *key) if asm else key


def prev_tag(stmt, asm: bool, lval: str) -> str:
    """What the next statement's lead key records of `stmt`: its class (its opcode in
    inline asm and for branches) and its L value (indent, or SAME_LINE + text)."""
    if stmt.__class__ is Instruction and (asm or stmt.opcode in _BRANCHES):
        return stmt.opcode + ":" + lval  # nvcc leaves a blank line after a branch
    if stmt.__class__ is VarDecl and stmt.space == ".reg" and not asm:
        return "VarDecl.reg:" + lval  # nvcc's blank line after the registers, not after `.shared`
    return stmt.__class__.__name__ + ":" + lval


_BRANCHES = frozenset({"bra", "ret", "exit", "brx"})


def statement_class(stmt) -> str:
    return stmt.__class__.__name__


class Style:
    """Per-module trivia table; `newline` and `final_newline` are module-wide.

    `preset` names a producer's usual table (`style_presets.json`: "nvcc", "llvm");
    the module's own entries override it, so a module records only what differs."""

    __slots__ = ("table", "own", "preset", "newline", "cache")

    def __init__(self, table=None, newline: str = "\n", preset: str | None = None):
        self.own = dict(table or {})
        self.preset = preset
        self.table = {**preset_table(preset), **self.own} if preset else self.own
        self.newline = newline
        self.cache = {}

    def predict(self, key) -> str:
        try:
            return self.cache[key]
        except KeyError:
            value = self.table.get(key)
            if value is None:
                value = self.fallback(key)
            self.cache[key] = value
            return value

    def fallback(self, key) -> str:
        """What `key` predicts when the table lacks it."""
        coarse = coarser_key(key)
        while coarse is not None:
            value = self.table.get(coarse)
            if value is not None:
                return value
            coarse = coarser_key(coarse)
        if is_coarse(key):
            return _NEVER  # a coarse key itself: always recorded when present
        if key[0] == "asm":
            if key[1] == "L" and len(key) == 5:
                return self.predict(key[:4])
            return self.predict(key[1:])
        if key[0] == "L" and len(key) == 4:  # the lead after a given previous statement (a `}`: its container)
            return self.predict(key[:3])
        if key[0] == "Section" and len(key) == 5:  # a section's `{` by name
            return self.predict(key[:4])
        if key[0] == "L" and key[2] > 1:  # nested blocks: the depth-1 indent
            return self.predict(("L", key[1], 1))
        return default_trivia(key)

    def overrides(self) -> dict:
        """The module's entries that differ from its preset or the fallback rule (what it records),
        less each key no statement consults (`fallback_only`) whose finer keys predict the same
        without it (a file's usual gap over all its declarations, ` \t` or ` `, matters only where
        no finer key says)."""
        base = preset_table(self.preset)
        own = self.own
        rec = {k: v for k, v in own.items() if v != (base[k] if k in base else self.fallback(k))}
        consulted = [(k, v) for k, v in own.items() if not fallback_only(k)]
        for c in [k for k in rec if fallback_only(k)]:
            trial = Style({k: v for k, v in rec.items() if k != c}, self.newline, self.preset)
            if all(trial.predict(k) == v for k, v in consulted):
                rec = trial.own
        return rec


_PRESETS: dict = {}


def _load_presets() -> dict:
    if not _PRESETS:
        import json
        from pathlib import Path

        data = json.loads((Path(__file__).parent / "style_presets.json").read_text())
        for preset, entries in data.items():
            _PRESETS[preset] = {tuple(k): v for k, v in entries}
    return _PRESETS


def preset_table(name: str | None) -> dict:
    """A named producer style (`{}` for None), loaded once from style_presets.json
    (written by scripts/make_style_presets.py from the corpus)."""
    if not name:
        return {}
    try:
        return _load_presets()[name]
    except KeyError:
        raise ValueError(f"no style preset {name!r} (have {', '.join(sorted(_PRESETS))})") from None


def preset_names() -> list:
    return sorted(_load_presets())


def with_best_preset(style: "Style") -> "Style":
    """The same predictions under the preset that leaves the fewest entries to record."""
    best = style
    for name in preset_names():
        cand = Style(style.own, style.newline, name)
        if len(cand.overrides()) < len(best.overrides()):
            best = cand
    return best


_NEVER = object()  # what a coarse key falls back to: it is always recorded when present
FIRST = "first"  # the coarse keys of the gap before an instruction's first operand


def coarser_key(key):
    """The next coarser key of a first-operand key, or None.

    ``(owner, ".", class, token, "wmma.mma.sync.aligned...")`` -> ``("first", owner,
    "wmma.mma")`` -> ``("first", owner, "wmma")`` -> ``("first", owner)``: producers
    pad by opcode (LLVM's `and.b32  \t`), nvcc by instruction family (`wmma.mma` vs
    `wmma.load`), and mostly use one gap, so the table records the usual gap once
    and the exceptions by family or opcode, not every spelling.
    """
    asm = key[0] == "asm"
    k = key[1:] if asm else key
    if len(k) == 5 and k[0] == "VarDecl":  # by state space
        c = (FIRST, k[0], k[4].split("<")[0].rstrip("0123456789"))
    elif len(k) == 5 and k[0] in _FIRST_OWNERS:  # by opcode and first modifier (`wmma.mma`)
        c = (FIRST, k[0], ".".join(k[4].split(".", 2)[:2]))
    elif len(k) == 3 and k[0] == FIRST and k[1] != "VarDecl" and "." in k[2]:  # by opcode
        c = (FIRST, k[1], k[2].split(".", 1)[0])
    elif len(k) == 3 and k[0] == FIRST:
        c = k[:2]
    else:
        return None
    return ("asm", *c) if asm else c


_FIRST_OWNERS = frozenset({"Instruction", "call", "VarDecl"})


def is_coarse(key) -> bool:
    return (key[1] if key[0] == "asm" else key[0]) == FIRST


def fallback_only(key) -> bool:
    """A key only finer keys fall back to (`add_coarse_entries` fills it): a coarse
    first-operand key, a lead key without the previous statement, a section's `{` without
    its name. Statements consult the finer keys alone."""
    k = key[1:] if key[0] == "asm" else key
    return k[0] == FIRST or k[0] == "L" and len(k) == 3 or k[0] == "Section" and len(k) == 4 and k[3] == "{"


def add_coarse_entries(table: dict) -> None:
    """Give each coarse first-operand key the most common value of its finer keys
    (by opcode, then overall), each statement lead key the most common value over
    the previous statements (a `}`'s over its containers), a section's `{` over the names, so `Style.overrides` keeps
    only the exceptions."""
    leads: dict = defaultdict(Counter)
    for k, v in table.items():
        if k[0] == "L" and len(k) == 4 or k[0] == "asm" and k[1] == "L" and len(k) == 5:
            leads[k[:-1]][v] += 1
        elif k[0] == "Section" and len(k) == 5:
            leads[k[:-1]][v] += 1
    for c, cnt in leads.items():
        if c not in table:
            table[c] = cnt.most_common(1)[0][0]
    finer = [k for k in table if not is_coarse(k)]
    for _level in range(3):
        groups: dict = defaultdict(Counter)
        for k in finer:
            c = coarser_key(k)
            if c is not None:
                groups[c][table[k]] += 1
        for c, cnt in groups.items():
            table[c] = cnt.most_common(1)[0][0]
        finer = list(groups)


_ASM_BEGIN = "begin inline asm"
_ASM_END = "end inline asm"


def asm_context(text: str, state: bool) -> bool:
    """Whether a statement led by `text` is inside an inline-asm region, given the
    state before it: the last `begin inline asm` / `end inline asm` in `text` decides."""
    if "inline asm" not in text:
        return state
    b = text.rfind(_ASM_BEGIN)
    e = text.rfind(_ASM_END)
    return b > e if b >= 0 or e >= 0 else state


SAME_LINE = "\x00"  # an L-key value SAME_LINE + text: the statement shares the previous line


def lead_value(lines, indent: str) -> str:
    """A statement's L value: its indent after one newline per empty line that
    directly precedes it (nvcc's blank line before each label is predicted, not
    written out)."""
    k = 0
    for line in reversed(lines):
        if line:
            break
        k += 1
    return "\n" * k + indent


def predicted_blank_lines(value: str) -> int:
    """How many empty lines an L value puts before its statement."""
    return len(value) - len(value.lstrip("\n"))


def split_lead(text: str, nl: str, at_start: bool):
    """Leading trivia -> (tail, lines, indent) or None when it has no newline.

    ``tail`` is what follows the previous token on its line, ``lines`` the
    whole lines (blank or comment) in between, ``indent`` what precedes the
    token on its own line. At the start of the file there is no tail.
    """
    segs = text.split(nl)
    if at_start:
        return "", segs[:-1], segs[-1]
    if len(segs) == 1:
        return None
    return segs[0], segs[1:-1], segs[-1]


def infer_style(module: Module, nl: str | None = None, memo: list | None = None) -> Style:
    """Count trivia per position key over the whole module; keep the most common.

    Statements are grouped by shape first (one dict update per statement); the
    position keys are computed once per shape and the per-key counters once per
    distinct (shape, trivia) pair. `memo`, when given (a list), is filled for reuse by
    `layout.place`: the module, then for every statement in walk order its (shape, trivia)
    record -- [trivia tuple with the L value first, count, a dict shared by the statements
    of that pair (place caches its placements there), shape] -- and its leading trivia.
    """
    if nl is None:
        nl = detect_newline(module)
    if memo is not None:
        memo.clear()
        memo.append(module)
    counter = _ShapeCounter(nl, memo)
    counter.visit(module.items, 0)
    shapes = counter.shapes
    counts: dict = defaultdict(Counter)
    for sig, (item, seen, *_) in shapes.items():
        if sig[0] is _CLOSE:
            keys = [close_key(sig[3], sig[4], sig[1], sig[2])]
        else:
            keys = position_keys(flatten(item, []), sig[0], sig[1])
        for tvt, rec in seen.items():
            c = rec[1]
            counts[keys[0]][tvt[0]] += c
            for k, v in zip(keys[1:], tvt[1:]):
                counts[k][v] += c
    table = {k: c.most_common(1)[0][0] for k, c in counts.items()}
    add_coarse_entries(table)
    return with_best_preset(Style(table, nl))


class _ShapeCounter:
    """The walk of `infer_style`: every statement's shape and trivia, counted per shape.

    `shapes`: shape -> [first statement of that shape, {trivia tuple: [that tuple, count,
    the dict shared with layout.place, the shape]}, the shape's first copy]; a closing `}`
    counts under (_CLOSE, depth, asm, container class, empty)."""

    def __init__(self, nl: str, memo: dict | None):
        self.nl, self.memo = nl, memo
        self.shapes: dict = {}
        self.at_start = True
        self.asm = False
        self.prev = ""      # the previous statement's prev_tag
        self.leads: dict = {}   # leading trivia -> its L value (they repeat: "\n\t" ...)
        self.fast: dict = {}    # quick key -> (record, asm state after, prev_tag after): see visit

    def lead_indent(self, text: str) -> str:
        if not self.at_start:
            v = self.leads.get(text)
            if v is not None:
                return v
        parts = split_lead(text, self.nl, self.at_start)
        if parts is None or parts[2][:1] in ("\n", SAME_LINE):  # as layout.place reads it (lead=)
            v = SAME_LINE + text
        else:
            v = lead_value(parts[1], parts[2])
        if not self.at_start:
            self.leads[text] = v
        self.at_start = False
        return v

    def visit(self, items, depth: int) -> None:
        memo, fast, cc = self.memo, self.fast, _CC
        asm, prev = self.asm, self.prev   # as locals in the loop, written back around nesting
        for item in items:
            cls = item.__class__
            # The statement's *quick key*: the state before it, its tokens' classes and its
            # nodes' trivia tuples as they are (not flattened). It fixes the shape, the trivia
            # and so the record, the L value and the next statement's state, which the first
            # statement of that key computes (`count`) and the others reuse.
            fk = None
            if QUICK:
                try:
                    if cls is Instruction:   # most statements: written out
                        g = item.guard
                        k = [depth, asm, prev, item.opcode, item.modifiers, item.trivia,
                             None if g is None else (g.negated, cc.get(g.predicate) or token_class(g.predicate))]
                        for o in item.operands:   # `_quick_operands`, inline
                            oc = o.__class__
                            if (oc is Register or oc is Symbol) and o.component is None:
                                k += (oc, cc.get(o.name) or token_class(o.name), o.trivia)
                            elif oc is IntLiteral:
                                k += (oc, cc.get(o.text) or token_class(o.text), o.trivia)
                            else:
                                _quick_operands((o,), k, cc)
                        fk = tuple(k)
                    elif cls is SectionData and len(item.values) == 1 and item.values[0].__class__ is IntLiteral:
                        v = item.values[0]   # `.b8 0` (most of a -G module's debug sections): `_quick_data`, inline
                        fk = (depth, asm, prev, SectionData, item.directive, item.trivia,
                              IntLiteral, cc.get(v.text) or token_class(v.text), v.trivia)
                    else:
                        quick = _QUICK.get(cls)
                        if quick is not None:
                            fk = quick(item, depth, asm, prev, cc)
                except _NotQuick:   # a statement of a rare form: counted the long way
                    fk = None
            hit = None if fk is None else fast.get(fk)
            nk = None
            if hit is None and fk is not None and not self.at_start:
                # a lead seen once (`// callseq 12, 0` before a -G call block's first
                # statement): the key again with the lead as `count` reads it, its L value
                # and the asm state after it
                i = _LEAD_AT.get(cls)
                if i is not None and fk[i] is item.trivia:
                    t0 = item.trivia[0]
                    ind = self.leads.get(t0)
                    if ind is None:
                        ind = self.lead_indent(t0)
                    nk = (_LED, fk[:i], ind, asm_context(t0, asm), item.trivia[1:], fk[i + 1:])
                    hit = fast.get(nk)
            if hit is None:
                rec, asm, prev, t0 = self.count(item, depth, asm, prev)
                if fk is not None:
                    fast[fk] = (rec, asm, prev)
                    if nk is not None:
                        fast[nk] = (rec, asm, prev)
            else:
                rec, asm, prev = hit
                rec[1] += 1
                t0 = item.trivia[0]   # (a statement with a quick key owns its first token)
            if memo is not None:
                memo.append(rec)
                memo.append(t0)
            if cls in CONTAINER_CLASSES:
                inner = inner_container(item)
                if inner is not None:
                    self.asm, self.prev = asm, prev
                    self.nested(inner, depth)
                    asm, prev = self.asm, self.prev
        self.asm, self.prev = asm, prev

    def count(self, item, depth: int, asm: bool, prev: str):
        """Count one statement the long way: (its record, the asm state and prev_tag after it,
        its leading trivia)."""
        tv = []
        sig = [depth, (asm, prev)]
        _SHAPERS.get(item.__class__, _generic_shape)(item, sig, tv)   # shape_trivia
        t0 = tv[0]
        if "inline asm" in t0:
            asm = asm_context(t0, asm)
            sig[1] = (asm, prev)
        ind = self.leads.get(t0)   # (empty at the start of the file)
        if ind is None:
            ind = self.lead_indent(t0)
        prev = prev_tag(item, asm, ind.lstrip("\n"))
        sig = tuple(sig)
        tv[0] = ind
        key = tuple(tv)
        shapes = self.shapes
        entry = shapes.get(sig)
        if entry is None:
            rec = [key, 1, {}, sig]
            shapes[sig] = [item, {key: rec}, sig]
        else:
            seen = entry[1]
            rec = seen.get(key)
            if rec is None:   # (the shape's first copy: statements share it)
                rec = seen[key] = [key, 1, {}, entry[2]]
            else:
                rec[1] += 1
        return rec, asm, prev, t0

    def nested(self, close, depth: int) -> None:
        self.visit(close.items, depth + 1)
        text = close.trivia[-1]
        a = self.asm = asm_context(text, self.asm)
        ind = self.lead_indent(text)
        ck = (_CLOSE, depth, a, close.__class__, not close.items)
        entry = self.shapes.get(ck)
        if entry is None:
            self.shapes[ck] = [None, {(ind,): [(ind,), 1, None]}]
        else:
            rec = entry[1].get((ind,))
            if rec is None:
                entry[1][(ind,)] = [(ind,), 1, None]
            else:
                rec[1] += 1


_CLOSE = object()
_LED = object()   # marks a quick key whose lead is its L value (see visit)
CONTAINER_CLASSES = frozenset({Function, Block, Section})   # the classes `inner_container` opens


def inner_container(item):
    """The node whose items are nested in a statement with a body (its `{ }`), else None."""
    cls = item.__class__
    if cls is Function:
        return item.body
    if cls is Block or cls is Section:
        return item
    return None


def detect_newline(module: Module) -> str:
    crlf = lf = 0
    for node in module.walk():
        for t in node.trivia or ():
            if "\n" in t:
                n = t.count("\n")
                c = t.count("\r\n")
                crlf += c
                lf += n - c
        if crlf + lf > 200:
            break
    return "\r\n" if crlf > lf else "\n"


# --- statement shapes: the fast path -------------------------------------------------
#
# A statement's *shape* (``shape_key``) is a hashable signature that fixes its
# flattened (owner class, token class) sequence, its depth and, for an
# instruction, its spelling -- so it fixes every position key. Statements repeat
# in few shapes, so keys, predictions and counts are computed once per shape;
# per statement only the signature and the trivia list (in ``flatten`` order)
# are gathered, by specialised walkers for the hot node classes and a generic
# walker over ``_parts()`` for the rest.

from ptx2py.ptxgrammar.tree import (  # noqa: E402
    Address,
    BinaryExpr,
    FloatLiteral,
    Instruction,
    IntLiteral,
    Label,
    Loc,
    Register,
    SectionData,
    SpecialRegister,
    Symbol,
    UnaryExpr,
    VarDecl,
    Vector,
)

_BLOCK, _SECTION, _END, _INSN, _ADDR, _VEC, _BIN, _UN = (object() for _ in range(8))
_LEAVES = (Register, SpecialRegister, Symbol, IntLiteral, FloatLiteral)
_LEAF_MARK = {c: object() for c in _LEAVES}
_LEAF_MARK_C = {c: object() for c in _LEAVES}   # with a component
_CC = _CLASS_CACHE
_T_LOC, _T_COMMA, _T_PLUS, _T_FUNCTION_NAME, _T_INLINED_AT = (
    token_class(t) for t in (".loc", ",", "+", "function_name", "inlined_at"))


def _tc(tok):
    c = _CC.get(tok)
    return c if c is not None else token_class(tok)


def _leaf_text(n):
    return n.text if n.__class__ is IntLiteral or n.__class__ is FloatLiteral else n.name


def _loc_sig(node, sig: list) -> None:
    """What the generic walk appends for a `.loc` (its parts are all tokens), written out:
    locs are most statements of a -lineinfo or -G module."""
    cc = _CC
    sig.append(Loc)
    sig.append(_T_LOC)
    sig.append(cc.get(node.file) or token_class(node.file))
    sig.append(cc.get(node.line) or token_class(node.line))
    sig.append(cc.get(node.column) or token_class(node.column))
    if node.function_name is not None:
        sig.append(_T_COMMA)
        sig.append(_T_FUNCTION_NAME)
        sig.append(_tc(node.function_name))
        if node.function_offset is not None:
            sig.append(_T_PLUS)
            sig.append(_tc(node.function_offset))
        sig.append(_T_COMMA)
        sig.append(_T_INLINED_AT)
        for x in node.inlined_at:
            sig.append(cc.get(x) or token_class(x))
    sig.append(_END)


def shape_trivia(node, sig: list, tv: list) -> None:
    """Append `node`'s shape signature to `sig` and its trivia (flatten order) to `tv`."""
    _SHAPERS.get(node.__class__, _generic_shape)(node, sig, tv)


# One function per hot node class, looked up by class (`_SHAPERS`); the rest walk `_parts()`.

def _insn_shape(node, sig, tv) -> None:
    t = node.trivia
    g = node.guard
    mods = node.modifiers
    ops = node.operands
    sig.append(_INSN)
    if g is None:
        sig.append(None)
        h = 1 + len(mods)
    else:
        sig.append((g.negated, _tc(g.predicate)))
        h = (3 if g.negated else 2) + 1 + len(mods)
    sig.append(node.opcode)
    sig.append(mods)
    sig.append(len(ops))
    tv.extend(t[:h])
    _operands(ops, t, h, sig, tv)
    tv.append(t[-1])


def _loc_shape(node, sig, tv) -> None:
    _loc_sig(node, sig)
    tv.extend(node.trivia)


def _data_shape(node, sig, tv) -> None:
    t = node.trivia
    values = node.values
    n = len(values)
    sig.append(SectionData)
    sig.append(node.directive)
    sig.append(n)
    tv.append(t[0])
    if n > 3 and _plain_ints(values):
        # a long run of plain integers (debug strings): one mark for the whole run, the
        # values' and the commas' trivia interleaved by slicing
        sig.append(_INT_RUN)
        inter = [None] * (2 * n - 1)
        inter[::2] = [v.trivia[0] for v in values]
        inter[1::2] = t[1:n]
        tv += inter
        return
    _operands(values, t, 1, sig, tv)


def _plain_ints(values) -> bool:
    """Every value an IntLiteral whose token class is "w" (as `_operands` would record it)."""
    texts = [v.text for v in values if v.__class__ is IntLiteral]
    if len(texts) != len(values):
        return False
    classes = set(map(_CC.get, texts))
    if None in classes:   # a spelling not classified yet
        classes = {token_class(x) for x in texts}
    return classes == _W_ONLY


_W_ONLY = {"w"}


def _int_shape(node, sig, tv) -> None:   # IntLiteral, FloatLiteral
    sig.append(_LEAF_MARK[node.__class__])
    sig.append(_tc(node.text))
    tv.append(node.trivia[0])


def _name_shape(node, sig, tv) -> None:   # Register, SpecialRegister, Symbol
    comp = node.component
    if comp is None:
        sig.append(_LEAF_MARK[node.__class__])
        sig.append(_tc(node.name))
        tv.append(node.trivia[0])
    else:
        sig.append(_LEAF_MARK_C[node.__class__])
        sig.append(_tc(node.name))
        sig.append(_tc(comp))
        tv.extend(node.trivia)


def _list_shape(node, sig, tv) -> None:   # Address, Vector
    t = node.trivia
    items = node.items
    n = len(items)
    if node.__class__ is Address:
        sig.append(_ADDR)
        sig.append(node.suffix)
    else:
        sig.append(_VEC)
    sig.append(n)
    tv.append(t[0])
    _operands(items, t, 1, sig, tv)
    tv.append(t[n if n else 1])
    if node.__class__ is Address and node.suffix is not None:
        tv.append(t[-1])


def _binary_shape(node, sig, tv) -> None:
    sig.append(_BIN)
    sig.append(node.op)
    shape_trivia(node.left, sig, tv)
    tv.append(node.trivia[0])
    shape_trivia(node.right, sig, tv)


def _unary_shape(node, sig, tv) -> None:
    sig.append(_UN)
    sig.append(node.op)
    tv.append(node.trivia[0])
    shape_trivia(node.operand, sig, tv)


def _block_shape(node, sig, tv) -> None:
    sig.append(_BLOCK)
    tv.append(node.trivia[0])


def _section_shape(node, sig, tv) -> None:
    sig.append(_SECTION)
    sig.append(node.name)   # (its `{` key names it)
    tv.extend(node.trivia[:3])


def _generic_shape(node, sig, tv) -> None:
    sig.append(node.__class__)
    t = node.trivia
    i = 0
    for p in node._parts():
        if p.__class__ is str:
            sig.append(_tc(p))
            tv.append(t[i])
            i += 1
        else:
            shape_trivia(p, sig, tv)
    sig.append(_END)


_INT_RUN = object()
_SHAPERS = {
    Instruction: _insn_shape, Loc: _loc_shape, SectionData: _data_shape,
    IntLiteral: _int_shape, FloatLiteral: _int_shape,
    Register: _name_shape, SpecialRegister: _name_shape, Symbol: _name_shape,
    Address: _list_shape, Vector: _list_shape, BinaryExpr: _binary_shape, UnaryExpr: _unary_shape,
    Block: _block_shape, Section: _section_shape,
}


def _operands(ops, t, h, sig, tv) -> None:
    """A comma-separated operand list whose commas are trivia t[h], t[h+1], ..."""
    j = h - 1
    cc = _CC
    for o in ops:
        if j >= h:
            tv.append(t[j])
        j += 1
        oc = o.__class__
        if oc is IntLiteral:
            sig.append(_INT_MARK)
            c = cc.get(o.text)
            sig.append(c if c is not None else token_class(o.text))
            tv.append(o.trivia[0])
        elif (oc is Register or oc is SpecialRegister or oc is Symbol) and o.component is None:
            sig.append(_LEAF_MARK[oc])
            c = cc.get(o.name)
            sig.append(c if c is not None else token_class(o.name))
            tv.append(o.trivia[0])
        else:
            _SHAPERS.get(oc, _generic_shape)(o, sig, tv)


_INT_MARK = _LEAF_MARK[IntLiteral]


# --- quick keys (`_ShapeCounter.visit`) --------------------------------------------------
#
# A quick key holds a statement's token classes and its nodes' trivia tuples unflattened
# (the parser shares equal ones), so most statements cost one short tuple and one lookup.
# It must fix everything `count` derives: two statements with one quick key have the same
# shape signature and the same trivia. A token class is `cc.get(x) or token_class(x)`
# (names are often new: registers, labels). `_NotQuick`: a form without a quick key.

def _quick_operands(ops, k: list, cc) -> None:
    """Three entries per operand: its class, its token class (a leaf) or its shape and
    trivia (any other operand, as the shape walkers write them), its trivia."""
    for o in ops:
        oc = o.__class__
        if oc is IntLiteral:
            k += (oc, cc.get(o.text) or token_class(o.text), o.trivia)
        elif (oc is Register or oc is SpecialRegister or oc is Symbol) and o.component is None:
            k += (oc, cc.get(o.name) or token_class(o.name), o.trivia)
        else:
            sig: list = []
            tv: list = []
            _SHAPERS.get(oc, _generic_shape)(o, sig, tv)
            k += (oc, tuple(sig), tuple(tv))


def _quick_data(item, depth, asm, prev, cc):
    k = [depth, asm, prev, SectionData, item.directive, item.trivia]
    _quick_operands(item.values, k, cc)
    return tuple(k)


def _quick_label(item, depth, asm, prev, cc):
    return (depth, asm, prev, Label, item.trivia, cc.get(item.name) or token_class(item.name))


def _quick_loc(item, depth, asm, prev, cc):
    fn = item.function_name
    k = (depth, asm, prev, Loc, item.trivia, _tc(item.file), _tc(item.line), _tc(item.column))
    if fn is None:
        return k
    off = item.function_offset
    return (*k, _tc(fn), None if off is None else _tc(off), *[_tc(x) for x in item.inlined_at])


def _quick_decl(item, depth, asm, prev, cc):
    """`.reg .b32 %r<5>;` and other declarations of plain names (no array, no initializer)."""
    attrs = item.attrs
    k = [depth, asm, prev, VarDecl, item.linkage, item.space, attrs, item.trivia]
    for a in attrs:
        if a.__class__ is not str:
            raise _NotQuick
    for d in item.declarators:
        if d.dims or d.init is not None or d.__class__ is not Declarator:
            raise _NotQuick
        c = d.count
        k += (cc.get(d.name) or token_class(d.name), None if c is None else cc.get(c) or token_class(c), d.trivia)
    return tuple(k)


def _quick_block(item, depth, asm, prev, cc):
    return (depth, asm, prev, Block, item.trivia[0])   # (its `}` is counted apart: `nested`)


class _NotQuick(Exception):
    pass


_QUICK: dict = {}   # statement class -> its quick key (Instruction's is written out in visit)
QUICK = True   # False: every statement counted the long way (test_transpile_fast_paths.py compares)


def shape_nodes(node, sig: list, nodes: list) -> None:
    """The shape signature of a (hand-built) node, as `shape_trivia` writes it, without
    reading trivia; also lists the nodes visited (the order `trivia_plan` follows)."""
    cls = node.__class__
    nodes.append(node)
    if cls is Loc:
        _loc_sig(node, sig)
        return
    if cls is Instruction:   # the hot case first
        g = node.guard
        sig.append(_INSN)
        sig.append(None if g is None else (g.negated, _tc(g.predicate)))
        sig.append(node.opcode)
        sig.append(node.modifiers)
        ops = node.operands
        sig.append(len(ops))
        _operand_nodes(ops, sig, nodes)
        return
    mark = _LEAF_MARK.get(cls)
    if mark is not None:
        if cls is IntLiteral:
            sig.append(mark)
            c = _CC.get(node.text)
        elif cls is FloatLiteral:
            sig.append(mark)
            c = _CC.get(node.text)
        else:
            comp = node.component
            c = _CC.get(node.name)
            if comp is not None:
                sig.append(_LEAF_MARK_C[cls])
                sig.append(c if c is not None else token_class(node.name))
                c = _CC.get(comp)
                sig.append(c if c is not None else token_class(comp))
                return
            sig.append(mark)
        if c is None:
            c = token_class(_leaf_text(node))
        sig.append(c)
        return
    if cls is SectionData:
        sig.append(SectionData)
        sig.append(node.directive)
        values = node.values
        sig.append(len(values))
        _operand_nodes(values, sig, nodes)
        return
    if cls is Address or cls is Vector:
        if cls is Address:
            sig.append(_ADDR)
            sig.append(node.suffix)
        else:
            sig.append(_VEC)
        sig.append(len(node.items))
        _operand_nodes(node.items, sig, nodes)
        return
    if cls is BinaryExpr:
        sig.append(_BIN)
        sig.append(node.op)
        shape_nodes(node.left, sig, nodes)
        shape_nodes(node.right, sig, nodes)
        return
    if cls is UnaryExpr:
        sig.append(_UN)
        sig.append(node.op)
        shape_nodes(node.operand, sig, nodes)
        return
    if cls is Block:
        sig.append(_BLOCK)
        return
    if cls is Section:
        sig.append(_SECTION)
        sig.append(node.name)
        return
    sig.append(cls)
    for p in node._parts():
        if p.__class__ is str:
            c = _CC.get(p)
            sig.append(c if c is not None else token_class(p))
        else:
            shape_nodes(p, sig, nodes)
    sig.append(_END)


def _operand_nodes(ops, sig: list, nodes: list) -> None:
    """`shape_nodes` over an operand list, plain leaves inline (as `_operands` does)."""
    cc = _CC
    for o in ops:
        oc = o.__class__
        if oc is IntLiteral:
            nodes.append(o)
            sig.append(_INT_MARK)
            c = cc.get(o.text)
            sig.append(c if c is not None else token_class(o.text))
        elif (oc is Register or oc is SpecialRegister or oc is Symbol) and o.component is None:
            nodes.append(o)
            sig.append(_LEAF_MARK[oc])
            c = cc.get(o.name)
            sig.append(c if c is not None else token_class(o.name))
        else:
            shape_nodes(o, sig, nodes)


def trivia_plan(stmt, nodes: list) -> list:
    """For each node of `nodes` (as `shape_nodes` lists them): the flatten positions
    of its tokens, as a callable values -> trivia tuple (an int for a single token)."""
    from operator import itemgetter

    where: dict = {}
    for pos, (node, _, _, _) in enumerate(flatten(stmt, [])):
        where.setdefault(id(node), []).append(pos)
    plan = []
    for n in nodes:
        idx = where.get(id(n), [])
        plan.append(idx[0] if len(idx) == 1 else (itemgetter(*idx) if len(idx) > 1 else None))
    return plan


_TRIVIA: dict = {}   # trivia tuples by value: equal ones are one object (tuples of str are immutable)


def apply_plan(nodes: list, plan: list, values: list) -> None:
    """Give each node its trivia tuple from `values` (flatten order) by `plan`."""
    same = _TRIVIA.setdefault
    for n, g in zip(nodes, plan):
        if g.__class__ is int:
            t = (values[g],)
            n.trivia = same(t, t)
        elif g is None:
            n.trivia = ()
        else:
            t = g(values)
            n.trivia = same(t, t)
    if len(_TRIVIA) > 65536:
        _TRIVIA.clear()


# where each quick key holds its statement's trivia tuple (the lead first)
_LEAD_AT = {Instruction: 5, SectionData: 5, Label: 4, Loc: 4, VarDecl: 7}
_QUICK.update({SectionData: _quick_data, Label: _quick_label, Loc: _quick_loc, VarDecl: _quick_decl,
               Block: _quick_block})
