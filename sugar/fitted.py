"""Last touches after every pass: an `at(...)` prefix or `asm.` bracket whose head a later pass
nested too deep to fit its line is spelled as keywords instead, an `at(...)` prefix whose call
a later pass made wrap goes back to `loc(...)` lines where those take fewer lines, and each
`.loc` no pass took is written in the one typed spelling of source locations."""

from __future__ import annotations

from ptx2py.transpile.dsl.families import FAMILIES
from ptx2py.transpile.dsl.locs import DEFAULT_FILE
from ptx2py.transpile.dsl.structured import STATEMENT_CALLS
from ptx2py.transpile.format import LINE

from .aliases import _AT
from .ir import Call, Kw, is_call, layout_lines
from .srcloc import _frame, _typed, at_fits


def run(stmts, ctx):
    named = getattr(ctx, "frame_names", None) or {}  # sugar/frames.py: `at(207, 12, kernels_215)`
    stmts = [x for s in stmts for x in _fitted(s)]
    if not any(is_call(s, "srcmap") for s in stmts):  # nvcc's `.loc`s: no derived comment
        stmts = [_typed_loc(x, named) for s in stmts for x in _unprefixed(s, named)]
    return stmts


def _fitted(s):
    """`at(.., ..).<insn>(...)` whose head no longer fits its line (a later pass nested
    it deeper): `<insn>(..., at=at(...))`, which records the same lines in the same order
    (black would split inside the prefix's brackets, which format.layout does not write)."""
    e = s.expr
    if s.prefix or e.__class__ is not Call or _fits(s):
        return [s]
    bracket = e.head.split(".", 1)[0] if e.head.startswith(("asm.at(", "nvasm.at(")) else None
    if bracket is not None:  # `asm.at(...).x(...)`: `with asm():` then `x(..., at=...)`
        inner = _fitted(type(s)(Call(e.head[len(bracket) + 1:], e.items), s.depth + 1))
        if len(inner) != 1 or not _fits(inner[0]):
            return [s]
        kw = [i for i in e.items if i.__class__ is Kw and i.name == "end_indent"]
        inner[0].expr.items[:] = [i for i in inner[0].expr.items if not (i.__class__ is Kw and i.name == "end_indent")]
        return [type(s)(Call(bracket, kw), s.depth, "with ", ":"), inner[0]]
    if not e.head.startswith("at("):
        return [s]
    m = _AT.match(e.head)
    if m is None or any(i.__class__ is Kw and i.name == "at" for i in e.items) or not at_fits(m.group(1)[:-1], s.depth):
        return [s]
    rest = _plain_head(e.head[m.end():])
    return [type(s)(Call(rest, [*e.items, Kw("at", m.group(1)[:-1])]), s.depth, s.prefix, s.trailer)]


def _plain_head(rest: str) -> str:
    """The call head left when an `at(...).` prefix comes off (`ptx.` again where needed)."""
    first = rest.split(".", 1)[0]
    if first not in ("asm", "nvasm") and first not in FAMILIES and first not in STATEMENT_CALLS:
        return "ptx." + rest
    return rest


def _fits(s) -> bool:
    """Whether the call's `head(` (or `head()`) fits its line."""
    e = s.expr
    return 4 * s.depth + len(e.head) + (1 if e.items else 2) <= LINE


def _typed_loc(s, named):
    """A `.loc` no prefix took, `ptx.loc(2, 477, 5, "$L__info_string0", (1, 53, 3))`, in the one
    spelling of source locations: `loc(477, 5, file=2, fn=0, inlined_at=(1, 53, 3))`
    (without `srcmap`, where `loc(...)` would add LLVM's comment)."""
    if not is_call(s, "ptx.loc"):
        return s
    f = _frame(s)
    return s if f is None else type(s)(_typed([f], "loc", named), s.depth)


def _unprefixed(s, named):
    """`at(81, 43, fn=12, inlined_at=(1, 92, 3)).add.s32(...)` that black splits (a later pass
    rolled it into a loop, its operands grew), or a call whose `at=` keyword black splits ->
    `loc(...)` lines, then the plain call, where they take fewer lines: all record the `.loc`
    lines, then the instruction."""
    e = s.expr
    if s.prefix or s.trailer or e.__class__ is not Call:
        return [s]
    kw = [i for i in e.items if i.__class__ is Kw and i.name == "at"]
    if e.head.startswith("at("):
        m = _AT.match(e.head)
        frames = None if m is None or kw else _frames(m.group(1)[:-1], named)
        plain = None if frames is None else type(s)(Call(_plain_head(e.head[m.end():]), e.items), s.depth)
    else:   # `<insn>(..., at=at(...))`, chosen when the operands were still longer
        frames = _frames(kw[0].value, named) if kw and kw[0].value.__class__ is str else None
        plain = type(s)(Call(e.head, [i for i in e.items if i is not kw[0]]), s.depth) if frames else None
    if not frames:
        return [s]
    locs = [type(s)(_typed([f], "loc", named), s.depth) for f in frames]
    if len(locs) + layout_lines(plain.expr, s.depth) >= layout_lines(e, s.depth):
        return [s]
    return [*locs, plain]


def _frames(chain: str, named):
    """The frames (as `srcloc._frame` gives them) of an `at(...).at(...)` chain that `_typed`
    wrote, each with its `inlined_at` spelled out; None for anything else. `named`: {frame
    key: name} of the module's named inlined frames."""
    import ast

    try:
        calls = ast.parse(chain, mode="eval").body
    except SyntaxError:
        return None
    out = []
    while calls.__class__ is ast.Call and calls.func.__class__ in (ast.Name, ast.Attribute):
        out.append(calls)
        calls = calls.func.value if calls.func.__class__ is ast.Attribute else None
    if calls is not None or out[-1].func.__class__ is not ast.Name or out[-1].func.id != "at":
        return None
    frames, prev = [], None
    for c in reversed(out):
        f = _literal_frame(c, prev, {v: k for k, v in named.items()})
        if f is None:
            return None
        frames.append(f)
        prev = f[:3]
    return frames


def _literal_frame(c, prev, frames):
    """(file, line, col, fn, inlined_at) of one `at(line, col, file=, fn=, inlined_at=)` call
    or `at(line, col, frame)` (`frames`: name -> (file, fn, inlined_at))."""
    import ast

    kw = {k.arg: k.value for k in c.keywords}
    if len(c.args) == 3 and c.args[2].__class__ is ast.Name and c.args[2].id in frames and not kw:
        file, fn, inl = frames[c.args[2].id]
        try:
            line, col = (ast.literal_eval(a) for a in c.args[:2])
        except ValueError:
            return None
        return file, line, col, fn, inl
    if len(c.args) != 2 or not set(kw) <= {"file", "fn", "inlined_at"}:
        return None
    try:
        line, col = (ast.literal_eval(a) for a in c.args)
        file, fn, inl = (ast.literal_eval(kw[k]) if k in kw else None for k in ("file", "fn", "inlined_at"))
    except ValueError:
        return None
    if fn is not None and inl is None:
        inl = prev
    if (fn is None) != (inl is None):
        return None
    return (DEFAULT_FILE if file is None else file, line, col, fn, None if inl is None else tuple(inl))
