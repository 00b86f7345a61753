"""`.loc` + the instruction it describes -> `at(line, col).<insn>(...)` (`file=` when not
`.file 1`); a `.loc` with its derived comment and no instruction after it -> `loc(line, col)`;
several plain `.loc`s with none after them (before a label or block) -> one `loc(...)` each.

A chain of inlined `.loc`s (nvcc -lineinfo: each one's `inlined_at` is the previous one's
location) before an instruction -> `at(53, 3).at(477, 5, file=2, fn=0).<insn>` (`fn=N`:
`function_name $L__info_stringN`, inlined at the frame before; `inlined_at=(f, l, c)` when
not). A prefix is used only where it takes no more lines than the `loc(...)` lines it
replaces; where its head would not fit, `ptx.<insn>(..., at=at(...))` when that is shorter.
An inlined frame the module's `.loc`s spell out often (sugar/frames.py) is named once after
`srcmap(...)` (`kernels_215 = inlined(fn=0, at=(1, 215, 9))`) and written `at(207, 12,
kernels_215)` wherever its `inlined_at=` would be spelled out.

LLVM/Triton's trailing `// file.py:L:C` comment on a `.loc` line is derived
from the `.file` table and a module-wide column (`srcmap(col)`), so it costs
nothing; a `.loc` whose comment does not match stays a plain `ptx.loc(...)`.
"""

from __future__ import annotations

import functools
from collections import Counter

from ptx2py.ptxgrammar.tree import File, Loc
from ptx2py.transpile.dsl.locs import DEFAULT_FILE
from ptx2py.transpile.dsl.structured import line_text, loc_comment, pad_to, source_name
from ptx2py.transpile.generator import q

from .frames import definitions, frame_key, named_frames
from .inline_asm import BEGIN, END
from .ir import ASM_BRACKETS, Call, Display, Kw, inline_comment, is_call, is_insn, layout_lines, stmt, taken_names, unq
from .names import RESERVED

NAMES = ("at", "loc", "srcmap")
MAX_PREFIX = 44


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    stmts = _blanks_first(stmts, getattr(ctx.generator, "tags", None))
    idx = [k for k, s in enumerate(stmts) if is_call(s, "ptx.loc") and id(s) in ctx.node]
    if not idx:
        return stmts
    files = {f.index: source_name(f.path[1:-1]) for f in ctx.module.walk() if f.__class__ is File}
    node_of = {k: ctx.node[id(stmts[k])] for k in idx}
    source_map(stmts, ctx, idx, files)
    column = ctx.srccol
    out = []
    if column is not None and not any(is_call(s, "srcmap") for s in stmts[:2]):
        table = Display("{", "}", [f"{f}: {q(files[f])}" for f in ctx.srcfiles])
        out.append(stmt(Call("srcmap", [str(column), table]), 0))
    if not hasattr(ctx, "frame_names"):  # the first run names them, after `srcmap(...)`
        ctx.frame_names = named_frames(ctx.module, files, taken_names(stmts) | RESERVED)
        out.extend(definitions(ctx.frame_names))
    typed = functools.partial(_typed, named=ctx.frame_names)
    k, n = 0, len(stmts)

    def commented(m):
        node = node_of[m]
        c = inline_comment(stmts[m + 1]) if m + 1 < n else None
        return (c is not None and c[0] == loc_comment(node.file, node.line, node.column, files)
                and c[1] == pad_to(line_text(node), column))

    while k < n:
        s = stmts[k]
        if k in node_of:
            done = _chain(stmts, k, node_of, out, None if column is None else commented, typed)
            if done:
                k = done
                continue
        if k in node_of:
            node = node_of[k]
            j = k + 1
            if column is not None:
                c = inline_comment(stmts[j]) if j < n else None
                ok = (c is not None and c[0] == loc_comment(node.file, node.line, node.column, files)
                      and c[1] == pad_to(line_text(node), column))
                j += 1
            else:
                ok = True
            f = _frame(s)
            if (ok and f is not None and j < n and stmts[j].depth == s.depth and stmts[j].prefix == "with "
                    and stmts[j].expr.__class__ is Call and stmts[j].expr.head in ASM_BRACKETS):
                pre = typed([f])
                hdr = stmts[j]
                if len(pre) <= MAX_PREFIX and 4 * hdr.depth + len(pre) + 30 <= 88:
                    out.append(stmt(Call(pre + "." + hdr.expr.head, hdr.expr.items), hdr.depth, hdr.prefix,
                                    hdr.trailer))
                    k = j + 1
                    continue
            if ok and f is not None and _again(stmts, k, j, ctx, node):
                ins = stmts[j]
                h = ins.expr.head
                folded = stmt(Call(typed([f]) + "." + (h[4:] if h.startswith("ptx.") else h), ins.expr.items),
                              ins.depth)
                repeats(ctx)[id(folded)] = (folded, h)  # inline_asm: `asm.here.<insn>`, `with asm.here():`
                out.append(folded)
                k = j + 1
                continue
            if (ok and f is not None and j < n and is_insn(stmts[j]) and stmts[j].depth == s.depth
                    and not _has_at(stmts[j])):
                pre = typed([f])
                ins = stmts[j]
                h = ins.expr.head
                rest = h[4:] if h.startswith("ptx.") else h
                call = Call(pre + "." + rest, ins.expr.items)
                if (len(pre) <= MAX_PREFIX and 4 * ins.depth + len(pre) + len(rest) + 2 <= 88
                        and (_bracketed(stmts, k) or layout_lines(call, ins.depth) <= 1 + layout_lines(ins.expr,
                                                                                                       ins.depth))):
                    out.append(stmt(call, ins.depth))  # no longer than `loc(...)` on a line of its own
                    k = j + 1
                    continue
                kw = with_at(stmts[k:j], ins, typed([f]))
                if kw is not None:
                    out.append(kw)
                    k = j + 1
                    continue
        if k in node_of and column is not None and commented(k) and _frame(s) is not None:
            out.append(stmt(typed([_frame(s)], "loc"), s.depth))  # `.loc` + comment, no instruction
            k += 2
            continue
        run_end = _plain_run_end(stmts, k, node_of) if column is None else k
        if run_end - k >= 2 and _no_statement_after(stmts, run_end, s.depth):  # before a label or block
            for x in stmts[k:run_end]:
                out.append(stmt(typed([_frame(x)], "loc"), s.depth))
            k = run_end
            continue
        out.append(s)
        k += 1
    return out


def _blanks_first(stmts, tags):
    """Blank lines between a `.loc` and its instruction moved before the `.loc`, so the two
    meet: the trivia pass takes every blank line into the table under the statement it
    leads (the instruction), wherever it stands in the body; without that pass, as they are."""
    if tags is None:
        return stmts
    out = list(stmts)
    for k, s in enumerate(stmts):
        if not is_call(s, "ptx.loc"):
            continue
        j = k + 1
        while j < len(stmts) and stmts[j].depth == s.depth and _tagged_blank(stmts[j], tags):
            j += 1
        if j > k + 1 and j < len(stmts) and is_insn(stmts[j]) and stmts[j].depth == s.depth:
            out[k:j] = [*stmts[k + 1:j], s]
    return out


def _tagged_blank(s, tags) -> bool:
    t = tags.get(id(s.expr)) if is_call(s, "ptx.blank") else None
    return t is not None and t[0] is s.expr and t[2] == "line"


def _again(stmts, k, j, ctx, node) -> bool:
    """Whether the `.loc` at k, the first line of an inline-asm bracket (its instruction at
    j), repeats the `.loc` before it in the module (every field; recording follows the text,
    so that is the DSL's current `.loc` there): `asm.here.<insn>` and `with asm.here():`
    (transpile/dsl/structured.py) write that `.loc` again, as LLVM does there."""
    ins = stmts[j] if j < len(stmts) else None
    if ins is None or not is_insn(ins) or ins.depth != stmts[k].depth or _has_at(ins) or not _bracketed(stmts, k):
        return False
    prev = _previous_locs(ctx).get(id(node))
    return prev is not None and _fields(prev) == _fields(node) and _leaves_it(stmts, k, ctx, node)


def _leaves_it(stmts, k, ctx, node) -> bool:
    """Whether the bracket opened before k leaves the current `.loc` as it found it (no other
    `.loc` inside, or the last one the same): then a run of such brackets repeats one `.loc`
    each, all spelled `here` alike, and the loop passes still roll them."""
    d, last = stmts[k].depth, node
    for x in range(k + 1, len(stmts)):
        s = stmts[x]
        if s.depth < d or s.depth == d and (_is_comment(s, BEGIN) or _is_comment(s, END)):
            break
        if is_call(s, "ptx.loc") and id(s) in ctx.node:
            last = ctx.node[id(s)]
    return _fields(last) == _fields(node)


def _is_comment(s, text) -> bool:
    return s.expr.__class__ is Call and s.expr.head == "ptx.comment" and s.expr.items[:1] == [text] and not s.prefix


def repeats(ctx) -> dict:
    """id -> (statement, its head without the prefix) of the `at(...).<insn>` statements that
    open an inline-asm bracket with a `.loc` that repeats the current one (`_again`)."""
    if not hasattr(ctx, "repeats_loc"):
        ctx.repeats_loc = {}
    return ctx.repeats_loc


def _fields(loc):
    return loc.file, loc.line, loc.column, loc.function_name, loc.function_offset, loc.inlined_at


def _previous_locs(ctx) -> dict:
    """id(`.loc`) -> the `.loc` before it in the module (the current one when it is recorded)."""
    if not hasattr(ctx, "previous_locs"):
        prev, ctx.previous_locs = None, {}
        for node in ctx.module.walk():
            if node.__class__ is Loc:
                ctx.previous_locs[id(node)] = prev
                prev = node
    return ctx.previous_locs


def _bracketed(stmts, k) -> bool:
    """Whether the `.loc` at k opens an inline-asm bracket's body: its prefix goes on the
    instruction whatever the lines, as `asm.at(...).<insn>` is then one unit (to move, to roll)."""
    return k > 0 and is_call(stmts[k - 1], "ptx.comment", 1) and stmts[k - 1].expr.items[0] == BEGIN


def source_map(stmts, ctx, idx, files) -> None:
    """Set ctx.srccol (the `// name:L:C` comment column, None when no `.loc` has its derived
    comment) and ctx.srcfiles (the `.file` indices the locs use), once per module.
    `idx`: the indices of the `ptx.loc` statements; `files`: `.file` index -> name."""
    if hasattr(ctx, "srccol"):
        return
    padded = []  # (line length, padding) of each `.loc` followed by its derived comment
    for k in idx:
        c = inline_comment(stmts[k + 1]) if k + 1 < len(stmts) else None
        node = ctx.node[id(stmts[k])]
        if c and c[0] == loc_comment(node.file, node.line, node.column, files):
            padded.append((len(line_text(node)), c[1]))
    ctx.srccol = _source_column(padded)
    ctx.srcfiles = sorted({ctx.node[id(stmts[k])].file for k in idx if ctx.node[id(stmts[k])].file in files}, key=int)


def _source_column(padded):
    """The comment column that explains the most `.loc` comments (`pad_to`: a line at or past
    the column gets one space, so long inlined `.loc`s agree with any column), else None."""
    cols = Counter(n + len(pad) for n, pad in padded if pad != " ")
    if not cols:
        cols = Counter(n + 1 for n, _ in padded)
    return max(cols, key=lambda col: (sum(pad == pad_to("x" * n, col) for n, pad in padded), cols[col]), default=None)


def _no_statement_after(stmts, j, depth) -> bool:
    """Whether stmts[j] is a label, a loop/skip_if block or the end of the block (what no
    `.loc` folds into)."""
    if j >= len(stmts) or stmts[j].depth < depth:
        return True
    s = stmts[j]
    e = s.expr
    return s.depth == depth and e.__class__ is Call and (
        is_call(s, "ptx.label") or s.prefix == "with " and e.head in ("loop", "skip_if", "if_", "else_"))


def _plain_run_end(stmts, k, node_of):
    """The index after the plain `ptx.loc(...)` statements from k on at one depth."""
    e = k
    while e < len(stmts) and e in node_of and stmts[e].depth == stmts[k].depth and _frame(stmts[e]) is not None:
        e += 1
    return e


def _frame(s):
    """(file, line, col, fn index or None, inlined_at or None) of a plain `ptx.loc(...)`, else None."""
    it = s.expr.items
    if s.prefix or s.trailer or any(i.__class__ is Kw for i in it) or len(it) not in (3, 5):
        return None
    ints = it[:3]
    if len(it) == 5:
        fn, inl = unq(it[3]), it[4]
        if (fn is None or not fn.startswith("$L__info_string") or inl.__class__ is not Display
                or inl.open != "(" or len(inl.items) != 3):
            return None
        n = fn[len("$L__info_string"):]
        if not _int(n) or not all(_int(x) for x in inl.items):
            return None
        return tuple(int(x) for x in ints) + (int(n), tuple(int(x) for x in inl.items)) if all(
            _int(x) for x in ints) else None
    return tuple(int(x) for x in ints) + (None, None) if all(_int(x) for x in ints) else None


def _int(x):
    return x.__class__ is str and x.isdigit() and (x == "0" or x[0] != "0")


def _typed(frames, head="at", named=None):
    """`at(53, 3).at(477, 5, file=2, fn=0)`: the frames' `.loc` lines as typed calls, line and
    column first (`file=` when not `.file 1`; `inlined_at=` when not the frame before);
    `named`: {frame key: name} of the module's named inlined frames (`at(207, 12, kernels_215)`)."""
    out, prev = [], None
    for f in frames:
        a = [str(f[1]), str(f[2])]
        name = None if named is None or f[4] == prev else named.get(frame_key(f))
        if name is not None:
            a.append(name)
        elif f[0] != DEFAULT_FILE:
            a.append(f"file={f[0]}")
        if f[3] is not None and name is None:
            a.append(f"fn={f[3]}")
            if f[4] != prev:
                a.append("inlined_at=(" + ", ".join(map(str, f[4])) + ")")
        out.append(f"{head}({', '.join(a)})")
        prev = f[:3]
    return ".".join(out)


def _chain(stmts, k, node_of, out, commented=None, typed=_typed):
    """Fold `.loc` k.. (a chain of inlined frames, or one inlined frame) and the instruction
    after it; the index after, else 0. `commented(k)`: whether .loc k carries its derived
    comment in the next statement (under `srcmap`); None when locs have no comments."""
    n = len(stmts)
    step = 1 if commented is None else 2
    depth = stmts[k].depth
    frames = [_frame(stmts[k])]
    if frames[0] is None or (commented is not None and not commented(k)):
        return 0
    starts = [k]
    e = k
    while e + step < n and e + step in node_of and stmts[e + step].depth == depth:
        f = _frame(stmts[e + step])
        if f is None or f[3] is None or f[4] != frames[-1][:3] or (commented is not None and not commented(e + step)):
            break
        frames.append(f)
        e += step
        starts.append(e)
    j = e + step
    if (len(frames) == 1 and frames[0][3] is None) or j >= n or not is_insn(stmts[j]) or stmts[j].depth != depth \
            or _has_at(stmts[j]):
        return 0  # a lone plain `.loc` is folded by the caller
    ins = stmts[j]
    h = ins.expr.head
    rest = h[4:] if h.startswith("ptx.") else h
    best = None  # (lines, m): the fewest lines, then the longest prefix
    for m in range(len(frames)):
        pre = typed(frames[m:])
        if 4 * depth + len(pre) + len(rest) + 2 <= 88:
            lines = sum(layout_lines(x.expr, depth) for x in stmts[k:starts[m]:step]) + layout_lines(
                Call(pre + "." + rest, ins.expr.items), depth)
            best = min(best or (lines, m), (lines, m))
    if best is not None and (_bracketed(stmts, k) or best[0] <= len(frames) + layout_lines(ins.expr, depth)):
        m = best[1]
        out.extend(stmts[k:starts[m]])
        out.append(stmt(Call(typed(frames[m:]) + "." + rest, ins.expr.items), depth))
        return j + 1
    kw = with_at(stmts[k:j], ins, typed(frames))
    if kw is not None:
        out.append(kw)
        return j + 1
    return 0


def _has_at(ins) -> bool:
    """Whether the instruction already carries `at=`: its `.loc` lines come first, so an
    `at(...)` prefix put on it now would emit before them (the order would flip)."""
    return any(i.__class__ is Kw and i.name == "at" for i in ins.expr.items)


def with_at(locs, ins, text):
    """`ins` with `at=at(...)` standing for the `.loc` statements before it (a head too long
    for the `at(...)` prefix), when that takes fewer lines; else None. (Under `asm.` the
    keyword's `.loc` comes before the inline-asm markers, as `at(...).asm.` writes it.)"""
    e = ins.expr
    if e.head.startswith(_AT_HEADS) or _has_at(ins):
        return None
    if not at_fits(text, ins.depth):
        return None
    call = Call(e.head, [*e.items, Kw("at", text)])
    before = sum(layout_lines(s.expr, s.depth) for s in locs) + layout_lines(e, ins.depth)
    return stmt(call, ins.depth) if layout_lines(call, ins.depth) < before else None


def at_fits(text, depth) -> bool:
    """Whether `at=<text>,` fits on its own argument line (black splits a longer chain)."""
    return 4 * (depth + 1) + len("at=") + len(text) + 1 <= 88


_AT_HEADS = ("at(", "ptx.at(", "asm.at(", "nvasm.at(")  # a `.loc` prefix of its own already


def locs_before(stmts, j):
    """(first index, `at=` text) of the plain `ptx.loc(...)` statements just before stmts[j]
    at its depth (nvcc's, with no derived comment), else None."""
    k = j
    while k > 0 and stmts[k - 1].depth == stmts[j].depth and is_call(stmts[k - 1], "ptx.loc") \
            and _frame(stmts[k - 1]) is not None:
        k -= 1
    return (k, _typed([_frame(s) for s in stmts[k:j]])) if k < j else None
