"""Branches -> Python blocks (`transpile.dsl.control`), emitting the same statements:

    natural loops (sugar/loops.py, from the control-flow graph) -> with loop(...): ...
    @p bra L; <body> L:            -> with skip_if(p, to=L): <body>  (never a loop exit)
    @!p bra L; <body> L:           -> with if_(p, to=L): <body>     (no double negative)
    ... <body ending in bra J;> L: <other> J:
                                   -> with if_(p, to=L): <body>  with else_(to=J): <other>
    { .reg .pred complete; waitLoop: mbarrier.try_wait... complete, a, ph;
      @!complete bra.uni waitLoop; }   -> mbarrier_wait(a, ph)
    { .reg .pred P1; LAB_WAIT: mbarrier.try_wait... P1, a, ph; @P1 bra DONE;
      bra LAB_WAIT; DONE: }            -> mbarrier_wait(a, ph, form="cutlass")

A body is a single-entry region: no label a branch targets at its own level (nested
blocks and labels nothing branches to are fine) and no block_open/block_close. Statements are only grouped, never moved,
so no instruction crosses a barrier, fence or mbarrier operation.
"""

from __future__ import annotations

from ptx2py.ptxgrammar.tree import File
from ptx2py.transpile.dsl.control import SPIN_WAITS
from ptx2py.transpile.dsl.structured import line_text, loc_comment, pad_to, source_name
from ptx2py.transpile.generator import q

from . import loops, srcloc
from .ir import Call, Display, Kw, inline_comment, is_call, stmt, taken_names
from .loops import any_branch, any_label, branch, label_atom

NAMES = ("loop", "skip_if", "if_", "else_", "break_if", "break_to", "continue_if", "continue_to", "mbarrier_wait",
         "srcmap")
MAX_DEPTH = 17  # Python allows 20 statically nested blocks
LINE = 88


_label = label_atom
_branch = branch


def _head_room(stmts, k):
    """The widest an instruction's first line may get from later passes (`asm.at(f, l, c).` prefix):
    black splits a call chain that the one-line head layout cannot, so a raise must not push
    such a head past the line length."""
    s = stmts[k]
    e = s.expr
    if e.__class__ is not Call or s.prefix or not e.head.startswith("ptx."):
        return 0
    extra, first = 0, k
    for j in (k - 1, k - 2):
        if j >= 0 and is_call(stmts[j], "ptx.loc"):
            extra += len(Call("at", stmts[j].expr.items).flat()) + 1 - 4
            first = j
            break
    if first == k:
        return 0  # no `at(...)`: a head without brackets is laid out the same way by black
    if first > 0 and is_call(stmts[first - 1],
                             "ptx.comment") and stmts[first - 1].expr.items[0] == '" begin inline asm"':
        extra += 4  # "asm."
    return 4 * s.depth + len(e.head) + extra + 1


def _body_ok(stmts, a, b, d, referenced):
    """stmts[a:b] is a single-entry region at depth d (deeper statements allowed; labels
    nothing branches to are fine)."""
    for k in range(a, b):
        s = stmts[k]
        if _head_room(stmts, k) + 4 > LINE >= _head_room(stmts, k):
            return False
        if s.depth < d:
            return False
        if s.depth == d and ((any_label(s) is not None and any_label(s) in referenced)
                             or is_call(s, "ptx.block_open") or is_call(s, "ptx.block_close")):
            return False
        if s.depth + 1 > MAX_DEPTH:
            return False
    return True


def _wrap(out, head, stmts, a, b, d):
    out.append(head)
    if a == b:
        out.append(stmt("pass", d + 1))
    for s in stmts[a:b]:
        s.depth += 1
        out.append(s)


def _raise_once(stmts, referenced, exits):
    """One sweep: raise every conditional whose body is already single-entry (never a loop exit:
    `exits` are the ids of the branches that leave a natural loop)."""
    out = []
    changed = False
    i, n = 0, len(stmts)
    while i < n:
        s = stmts[i]
        d = s.depth
        br = _branch(s)
        if br is not None and br[1] is not None and id(s) not in exits:
            target = br[0]
            j = i + 1
            while j < n and stmts[j].depth >= d and not (stmts[j].depth == d and _label(stmts[j]) == target):
                j += 1
            if j < n and j > i + 1 and stmts[j].depth == d and _label(stmts[j]) == target \
                    and _body_ok(stmts, i + 1, j, d, referenced):
                head, pred = _guard(br[1])
                args = [pred, Kw("to", target)]
                if br[2]:
                    args.append(Kw("uni", "True"))
                _wrap(out, stmt(Call(head, args), d, "with ", ":"), stmts, i + 1, j, d)
                i = j + 1
                changed = True
                continue
        out.append(s)
        i += 1
    return out, changed


def _guard(pred):
    """("if_", p) for a branch taken where `p` does not hold (`@!p bra`: the body runs where p
    does), else ("skip_if", pred): no double negative."""
    if pred.__class__ is str and pred.startswith("~") and "~" not in pred[1:] and " " not in pred:
        return "if_", pred[1:]
    return "skip_if", pred


def _join(stmts, i, d):
    """The label a conditional block at stmts[i] ends by jumping to (its body's last statement, an
    unconditional `ptx.bra[.uni](sym(J))`), and where that body ends; else (None, None)."""
    s = stmts[i]
    if not (s.prefix == "with " and s.expr.__class__ is Call and s.expr.head in ("if_", "skip_if") and s.depth == d):
        return None, None
    j = i + 1
    while j < len(stmts) and stmts[j].depth > d:
        j += 1
    last = stmts[j - 1]
    br = _branch(last) if j > i + 1 and last.depth == d + 1 else None
    return (br[0], j) if br is not None and br[1] is None else (None, None)


def _raise_else(stmts, referenced):
    """One sweep: `with if_(...)` whose body ends in `bra J`, the statements after it up to `J:`
    (a single-entry region) -> `with else_(to=J):` around them."""
    out, changed = [], False
    i, n = 0, len(stmts)
    while i < n:
        d = stmts[i].depth
        target, end = _join(stmts, i, d)
        if target is not None:
            j = end
            while j < n and stmts[j].depth >= d and not (stmts[j].depth == d and _label(stmts[j]) == target):
                j += 1
            if j < n and j > end and stmts[j].depth == d and _label(stmts[j]) == target \
                    and _body_ok(stmts, end, j, d, referenced):
                out += stmts[i:end]
                _wrap(out, stmt(Call("else_", [Kw("to", target)]), d, "with ", ":"), stmts, end, j, d)
                i = j + 1
                changed = True
                continue
        out.append(stmts[i])
        i += 1
    return out, changed


_WAIT = "ptx.mbarrier.try_wait."


def _loc(stmts, k, d, src):
    """(loc tuple atom, statements used) of `ptx.loc(f, l, c)` [+ its derived comment] at k."""
    s = stmts[k] if k < len(stmts) else None
    if s is None or s.depth != d or not is_call(s, "ptx.loc", 3) or any(x.__class__ is not str for x in s.expr.items):
        return None, 0
    node = src.node.get(id(s)) if src is not None else None
    if node is None:
        return None, 0
    c = inline_comment(stmts[k + 1]) if k + 1 < len(stmts) and stmts[k + 1].depth == d else None
    if src.column is None:
        if c is not None:
            return None, 0
        used = 1
    else:
        if c is None or c[0] != loc_comment(node.file, node.line, node.column, src.files) \
                or c[1] != pad_to(line_text(node), src.column):
            return None, 0
        used = 2
    return "(" + ", ".join(s.expr.items) + ")", used


def _spin_wait(stmts, i, src):
    """`with ptx.block(): <pred> = reg.pred(...); [loc] <label>: [loc] try_wait; <branches>` in one
    of the shapes of `control.SPIN_WAITS`."""
    s = stmts[i]
    if not (s.prefix == "with " and s.expr.__class__ is Call and s.expr.head == "ptx.block") or i + 1 >= len(stmts):
        return None
    for form in SPIN_WAITS:
        got = _spin_wait_as(stmts, i, src, form)
        if got is not None:
            return got
    return None


def _spin_wait_as(stmts, i, src, form):
    s = stmts[i]
    d = s.depth + 1
    k = i + 1
    decl = stmts[k]
    pred, top, done, uni = SPIN_WAITS[form]
    if not (decl.depth == d and decl.prefix == pred + " = " and decl.expr.__class__ is Call
            and decl.expr.head == "reg.pred" and decl.expr.items == [q(pred)]):
        return None
    k += 1
    loc, used = _loc(stmts, k, d, src)
    k += used
    if k >= len(stmts) or stmts[k].depth != d or _label(stmts[k]) != q(top):
        return None
    k += 1
    at, used = _loc(stmts, k, d, src)
    k += used
    if k >= len(stmts):
        return None
    wait = stmts[k]
    w = wait.expr
    if wait.depth != d or wait.prefix or wait.trailer or w.__class__ is not Call or not w.head.startswith(_WAIT) \
            or len(w.items) < 3 or w.items[0] != pred or any(x.__class__ is Kw for x in w.items[:3]) \
            or any(x.__class__ is not Kw or x.name != "fmt" for x in w.items[3:]):
        return None
    k += 1
    want = [(q(top), "~" + pred)] if done is None else [(q(done), pred), (q(top), None)]
    for target, guard in want:
        br = _branch(stmts[k]) if k < len(stmts) and stmts[k].depth == d else None
        if br is None or br[:2] != (target, guard) or br[2] != uni:
            return None
        k += 1
    if done is not None:
        if k >= len(stmts) or stmts[k].depth != d or _label(stmts[k]) != q(done):
            return None
        k += 1
    if k < len(stmts) and stmts[k].depth >= d:
        return None
    kind = w.head[len(_WAIT):]
    args = list(w.items[1:3])
    if len(w.items) > 3:
        args.append(Kw("wait_fmt", w.items[3].value))
    if kind != "parity.shared__cta.b64":
        args.append(Kw("kind", q(kind)))
    if loc is not None:
        args.append(Kw("loc", loc))
    if at is not None:
        args.append(Kw("at", at))
    if form != "triton":
        args.append(Kw("form", q(form)))
    args.extend(s.expr.items)  # the block's own fmt/indent/close_* keywords
    return stmt(Call("mbarrier_wait", args), s.depth), k - i, (loc is not None or at is not None)


class _Src:
    """The `.loc` comment column the srcloc pass will use (computed the same way, shared via ctx)."""

    def __init__(self, stmts, ctx):
        self.node = ctx.node
        self.column = None
        self.files = {}
        if ctx.module is None:
            return
        self.files = {f.index: source_name(f.path[1:-1]) for f in ctx.module.walk() if f.__class__ is File}
        idx = [k for k, s in enumerate(stmts) if is_call(s, "ptx.loc") and id(s) in ctx.node]
        srcloc.source_map(stmts, ctx, idx, self.files)
        self.column = ctx.srccol
        self.srcfiles = ctx.srcfiles


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    src = _Src(stmts, ctx) if ctx is not None and ctx.module is not None else None
    out = []
    with_loc = False
    i, n = 0, len(stmts)
    while i < n:
        w = _spin_wait(stmts, i, src)
        if w is not None and (not w[2] or src is not None):
            out.append(w[0])
            with_loc |= w[2]
            i += w[1]
            continue
        out.append(stmts[i])
        i += 1
    if with_loc and src.column is not None and not any(is_call(s, "srcmap") for s in out[:2]):
        table = Display("{", "}", [f"{f}: {q(src.files[f])}" for f in src.srcfiles])
        out.insert(0, stmt(Call("srcmap", [str(src.column), table]), 0))
    referenced = {b[0] for b in map(any_branch, out) if b is not None}
    stmts, exits = loops.run(out, _head_room)
    changed = True
    while changed:
        stmts, changed = _raise_once(stmts, referenced, exits)
        stmts, other = _raise_else(stmts, referenced)
        changed |= other
    return stmts
