"""Where a module's trivia differs from its Style, for every statement, computed once, up front.

`ptx_to_python` walks the data one way: parse -> infer the Style (style.infer_style, counting
trivia over the whole tree) -> place every statement against that Style (here) -> generate the
Python (generator.py, which reads the placements and never consults the Style itself) -> render
(with no sugar pass, fused into generation: each statement is laid out as it is generated).

A statement's placement says what the generator writes around its call: the trivia before it
(the rest of the previous line, then whole blank, comment or other lines), the explicit
`indent=`/`lead=` keyword when the Style predicts another lead, and the `fmt=` entries for the
tokens whose trivia the Style does not predict. A container's closing `}` gets a placement too
(`close_indent=`/`close_lead=`), after the placements of the statements inside it: placements
come in the order the generator asks for them.
"""

from __future__ import annotations

from typing import NamedTuple

from ptx2py.ptxgrammar.tree import Module

from .style import (
    CONTAINER_CLASSES,
    SAME_LINE,
    Style,
    asm_context,
    close_key,
    flatten,
    inner_container,
    lead_value,
    position_keys,
    predicted_blank_lines,
    prev_tag,
    shape_trivia,
    split_lead,
)


class Lead(NamedTuple):
    """The trivia before a statement's first token (or before a `}`), as the generator writes it."""

    tail: str            # what follows the previous token on its line
    lines: tuple         # whole lines written as calls (blank, `//` comment, other text)
    indent: str          # the token's own indent (a comment line at another indent says so)
    keyword: str | None  # `indent`/`lead` (`close_indent`/`close_lead`) when the Style predicts otherwise
    value: str = ""      # that keyword's value


class Placement(NamedTuple):
    lead: Lead
    fmt: tuple  # ((token index, trivia), ...) for the tokens the Style does not predict
    plain: bool = False   # nothing to write but the statement: no lines before it, no keyword, no fmt


def place(module: Module, style: Style, memo: list | None = None):
    """The placements of every statement and every closing `}`, in generation order, as they
    are asked for (an iterator: only the statements not yet generated are held).
    `memo`: what `infer_style(module, memo=...)` recorded of every statement (shape, trivia,
    leading trivia, in walk order), reused when it was recorded for this module."""
    records = iter(memo) if memo and memo[0] is module else None
    if records is not None:
        next(records)   # the module
    return _Placer(style, records).items(module.items, 0)


class _Placer:
    def __init__(self, style: Style, records):
        self.style, self.records = style, records
        self.nl = style.newline
        self.preds: dict = {}  # shape -> predicted trivia per token
        self.at_start = True
        self.asm = False       # inside `// begin inline asm` ... `// end inline asm`
        self.prev = None       # (the previous statement, its asm state, L value): its prev_tag
        self.leads: dict = {}  # (leading trivia, predicted L value) -> (Lead, L value)

    def items(self, items, depth: int):
        """Each statement's placement, a container's items after it and then its `}`: one
        generator over a stack of open containers (a chain of nested generators costs a
        frame per level on every statement)."""
        records = self.records
        stack = [(iter(items), depth, None)]
        while stack:
            it, depth, container = stack[-1]
            for item in it:
                if records is None:
                    yield self.statement(item, depth)
                else:   # `recorded`, inline: most statements share a placement already made
                    rec = next(records)   # [trivia, count, {leading trivia: Placement}, shape]
                    t0 = next(records)
                    placed = rec[2].get(t0)
                    self.asm = rec[3][1][0]
                    yield self.recorded(item, depth, rec, t0) if placed is None else placed
                if item.__class__ in CONTAINER_CLASSES:
                    inner = inner_container(item)
                    if inner is not None:
                        stack.append((iter(inner.items), depth + 1, inner))
                        break
            else:
                stack.pop()
                if container is not None:
                    yield self.close(container, depth - 1)

    def recorded(self, stmt, depth: int, rec: list, t0: str) -> Placement:
        """A statement's placement from infer_style's record `rec` (the statements of one
        shape, trivia and leading trivia `t0` share it)."""
        # (the file's first statement, placed apart, has a shape of its own: no previous one)
        placed = rec[2][t0] = self.placed(stmt, depth, rec[3], rec[0], t0)[0]
        return placed

    def statement(self, stmt, depth: int) -> Placement:
        tv = []
        sig = [depth, None]
        shape_trivia(stmt, sig, tv)
        self.asm = asm_context(tv[0], self.asm)
        sig[1] = (self.asm, self.prev_tag())
        sig = tuple(sig)
        placed, lvalue = self.placed(stmt, depth, sig, tuple(tv), tv[0])
        self.prev = (stmt, self.asm, lvalue)
        return placed

    def prev_tag(self) -> str:
        """The previous statement's prev_tag (for the lead key of a statement outside the memo)."""
        return "" if self.prev is None else prev_tag(*self.prev)

    def placed(self, stmt, depth: int, sig: tuple, tv: tuple, t0: str):
        """(the Placement of a statement of shape `sig`, trivia `tv` led by `t0`; its L value)."""
        preds = self.preds.get(sig)
        if preds is None:
            predict = self.style.predict
            preds = self.preds[sig] = tuple([predict(k) for k in position_keys(flatten(stmt, []), depth, sig[1])])
        if self.at_start:
            lead, lvalue = self.lead(t0, preds[0], "indent", "lead", True)
            self.at_start = False
        else:   # leading trivia repeat ("\n\t" ...): each (text, prediction) is placed once
            key = (t0, preds[0])
            hit = self.leads.get(key)
            if hit is None:
                hit = self.leads[key] = self.lead(t0, preds[0], "indent", "lead", False)
            lead, lvalue = hit
        if tv[1:] == preds[1:]:   # the usual case, compared in one go
            fmt = ()
        else:
            fmt = tuple([(k, tv[k]) for k in range(1, len(tv)) if tv[k] != preds[k]])
        plain = not fmt and not lead.tail and not lead.lines and lead.keyword is None
        return Placement(lead, fmt, plain), lvalue

    def close(self, container, depth: int) -> Placement:
        text = container.trivia[-1]
        self.asm = asm_context(text, self.asm)
        pred = self.style.predict(close_key(container.__class__, not container.items, depth, self.asm))
        return Placement(self.lead(text, pred, "close_indent", "close_lead", False)[0], ())

    def lead(self, text: str, predicted: str, indent_kw: str, lead_kw: str, at_start: bool):
        """(the lines before a token, less the empty lines its predicted L value supplies, and
        the explicit keyword when the prediction differs; the token's own L value)."""
        parts = split_lead(text, self.nl, at_start)
        if parts is None:
            return Lead("", (), "", None if predicted == SAME_LINE + text else lead_kw, text), SAME_LINE + text
        tail, lines, indent = parts
        if indent[:1] in ("\n", SAME_LINE):  # a lone LF in a CRLF module reads as an L value's marker
            return Lead("", (), "", lead_kw, text), SAME_LINE + text
        k = predicted_blank_lines(predicted)
        if indent == predicted[k:] and predicted_blank_lines(lead_value(lines, "")) >= k:
            return Lead(tail, tuple(lines[:len(lines) - k]), indent, None), indent
        keyword = None if indent == predicted and not k else indent_kw
        return Lead(tail, tuple(lines), indent, keyword, indent), indent
