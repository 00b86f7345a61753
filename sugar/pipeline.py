"""The order of the sugar passes (the only place that knows it)."""

from __future__ import annotations

import functools

from . import (
    aliases,
    arrays,
    banner,
    comment_keys,
    debugdata,
    debuglabels,
    debugstr,
    demoted,
    fitted,
    floats,
    inline_asm,
    name_runs,
    names,
    ranges,
    registers,
    regnames,
    repeat,
    roles,
    scopelabels,
    srcfiles,
    srcloc,
    structure,
    tensorcore,
    trivia,
    valuenames,
    warproles,
)

# comment_keys tags the generator's same-line comments before any pass rebuilds them;
# trivia takes the layout out before name_runs and repeat roll statements into loops (each
# rolled statement then finds its own entry); fitted re-spells what the later nesting made too wide;
# scopelabels leaves LLVM's scope labels to the DSL before then (the rounds they split are alike
# without them); valuenames picks register names while each statement is one instruction and
# regnames writes them once the rolling passes are done (floats spells literals by value after the
# rolling passes compared them as written; warproles' comments come after the rolling too);
# debuglabels joins debug labels to their instruction last (no pass after it reads those heads)
PASSES: list = [comment_keys, names, structure, valuenames, banner, registers, arrays, demoted, srcloc,
                inline_asm, srcloc, debugstr, debugdata, ranges, tensorcore, roles, scopelabels, trivia, srcfiles,
                name_runs, repeat, aliases, regnames, floats, warproles, fitted, debuglabels]


def passes(**options):
    """The sugar passes as `transpile.ptx_to_python(text, passes=...)` takes them, with `options`
    bound: what the passes may read besides the tree (`filename`, `launch`, `source`: paths;
    `param_names`: {kernel spelling: [Python name per .param]})."""
    return functools.partial(apply, options=options)


def apply(stmts, *, module=None, generator=None, passes=None, options=None):
    """`options`: what the passes may read besides the tree (`filename`, `launch`, `source`: paths)."""
    from .ctx import Context

    ctx = Context(module, generator, stmts, options)
    for p in PASSES if passes is None else passes:
        stmts = p.run(stmts, ctx)
    return stmts
