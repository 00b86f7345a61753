"""A module's formatting style: the usual trivia for each kind of token position.

Every token of a statement (its own tokens and its operands', nested items
excluded) gets a *position key*:

- the statement's first token: ``("L", statement class, depth)``; its trivia is
  split into comment/blank-line calls, a newline and the *indent*, and the
  style stores the usual indent;
- every other token: ``(previous token's owner class, previous token's class,
  owner class, token class)``, where a token's class is the punctuation itself,
  ``.`` for a dot-word or ``w`` for a word (name, number).

``infer_style(module)`` counts the trivia seen at each key and keeps the most
common; ``Style.predict(key)`` answers for any key (a fallback rule covers keys
the module never used, e.g. for hand-written DSL code). The generator gives an
explicit format argument only where a token's trivia differs from the
prediction, and the DSL fills in the predictions, so both sides share
``flatten`` and ``Style``.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ptxgrammar.tree import Block, Function, Module, Section

PUNCT = frozenset(",;{}()[]<>=+-|@!:?*/%&^~")
TIGHT_BEFORE = frozenset({",", ";", ")", "]", ":", "|", "<", ">", "[", "(", "}"})
TIGHT_AFTER = frozenset({"(", "[", "{", "@", "!", "|", "<", "-", "~"})
_TIGHT_DOT_OWNERS = frozenset({"Instruction", "Register", "SpecialRegister", "Symbol", "Address"})


_CLASS_CACHE: dict = {}


def token_class(tok: str) -> str:
    c = _CLASS_CACHE.get(tok)
    if c is None:
        if tok in PUNCT:
            c = tok
        elif tok[0] == "." and len(tok) > 1:
            c = "."
        else:
            c = "w"
        if len(_CLASS_CACHE) < 100000:
            _CLASS_CACHE[tok] = c
    return c


def default_trivia(key) -> str:
    """The fallback rule: one space between words, none around punctuation."""
    if key[0] == "L":
        _, cls, depth = key
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


def position_keys(flat, depth: int) -> list:
    """The key of every token in `flat` (index 0 is the statement lead)."""
    first = flat[0]
    keys = [("L", first[2] if first[0].__class__ is not Function else "Function", depth)]
    prev_cls, prev_t = first[2], token_class(first[3])
    insn = first[0] if first[2] == "Instruction" else None
    for _, _, c, tok in flat[1:]:
        t = token_class(tok)
        if insn is not None and prev_cls == "Instruction" and c != "Instruction" and prev_t in ".w":
            # the first operand: producers pad it by the instruction's spelling
            keys.append((prev_cls, prev_t, c, t, insn.opcode + "".join(insn.modifiers)))
            insn = None
        else:
            keys.append((prev_cls, prev_t, c, t))
        prev_cls, prev_t = c, t
    return keys


def statement_class(stmt) -> str:
    return stmt.__class__.__name__


class Style:
    """Per-module trivia table; `newline` and `final_newline` are module-wide."""

    __slots__ = ("table", "newline", "cache")

    def __init__(self, table=None, newline: str = "\n"):
        self.table = dict(table or {})
        self.newline = newline
        self.cache = {}

    def predict(self, key) -> str:
        try:
            return self.cache[key]
        except KeyError:
            value = self.table.get(key)
            if value is None:
                value = default_trivia(key)
                if key[0] == "L" and key[2] > 1:  # nested blocks: the depth-1 indent
                    value = self.predict(("L", key[1], 1))
            self.cache[key] = value
            return value

    def overrides(self) -> dict:
        """The table entries that differ from the fallback rule (what the module records)."""
        out = {}
        for k, v in self.table.items():
            fallback = default_trivia(k)
            if k[0] == "L" and k[2] > 1:
                fallback = self.table.get(("L", k[1], 1), default_trivia(("L", k[1], 1)))
            if v != fallback:
                out[k] = v
        return out


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


def infer_style(module: Module, nl: str | None = None, memo: dict | None = None) -> Style:
    """Count trivia per position key over the whole module; keep the most common.

    `memo`, when given, receives id(statement) -> (flat, keys) for reuse.
    """
    from ptxgrammar import emit  # noqa: F401  (documented dependency)

    if nl is None:
        nl = detect_newline(module)
    counts: dict = defaultdict(Counter)
    at_start = [True]

    def lead_indent(text):
        parts = split_lead(text, nl, at_start[0])
        at_start[0] = False
        return None if parts is None else parts[2]

    def visit_items(items, depth):
        for item in items:
            flat = flatten(item, [])
            keys = position_keys(flat, depth)
            if memo is not None:
                memo[id(item)] = (flat, keys)
            ind = lead_indent(flat[0][0].trivia[flat[0][1]])
            if ind is not None:
                counts[keys[0]][ind] += 1
            for (node, i, _, _), key in zip(flat[1:], keys[1:]):
                counts[key][node.trivia[i]] += 1
            inner = _inner_items(item)
            if inner is not None:
                visit_items(inner[0].items if hasattr(inner[0], "items") else (), depth + 1)
                close = inner[0]
                ind = lead_indent(close.trivia[-1])
                if ind is not None:
                    counts[("L", "}", depth)][ind] += 1

    visit_items(module.items, 0)
    table = {k: c.most_common(1)[0][0] for k, c in counts.items()}
    return Style(table, nl)


def _inner_items(item):
    """(the node whose items are nested, ) for a statement with a body, else None."""
    cls = item.__class__
    if cls is Function:
        return (item.body,) if item.body is not None else None
    if cls is Block or cls is Section:
        return (item,)
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
