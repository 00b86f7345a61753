"""Each same-line comment (`ptx.comment(" =>This Inner Loop Header: Depth=1", inline="   ")`)
tagged with the trivia key of the statement (or `}`) whose line it ends, so that
sugar/trivia.py can move its whitespace into that statement's table entry (`"inline"`) and the
body keeps `ptx.comment(" =>This Inner Loop Header: Depth=1")`: the comment stays with the
statement it is written beside when either moves.

The generator writes one such call for each lead whose tail is a `//` comment, in the order of
`gen.leads`; the statement the comment ends is the one whose lead comes before it there. This
pass runs first, on the generator's own list, and pairs calls and leads in that order (each
pair checked: the lead's tail is the call's whitespace, `//` and text). When the counts or any
pair disagree nothing is tagged and the calls keep their `inline=`.
"""

from __future__ import annotations

import re

from .ir import inline_comment

NAMES = ()
COMMENT_TAIL = re.compile(r"[ \t]*//[^\n]*")


def run(stmts, ctx):
    gen = ctx.generator
    tags = getattr(gen, "tags", None)
    if tags is None:
        return stmts
    leads, prev = [], None
    for key, lead in gen.leads.items():
        if lead[0] and COMMENT_TAIL.fullmatch(lead[0]):
            leads.append((prev, lead[0]))
        prev = key
    calls = [(s.expr, c) for s in stmts if (c := inline_comment(s)) is not None]
    if len(leads) != len(calls) or any(key is None or tail != pad + "//" + text
                                       for (key, tail), (_, (text, pad)) in zip(leads, calls)):
        return stmts
    for (key, _), (call, (_, pad)) in zip(leads, calls):
        tags[id(call)] = (call, key, "inline", pad)
    return stmts
