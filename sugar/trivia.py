"""Layout out of the body: every `fmt=`, `indent=`, `lead=`, `close_indent=`, `close_lead=`
keyword, blank line, inline-asm marker, long comment and `ptx.tail` text moves into the trivia
table after the body (`ptx.trivia({...})`, transpile/dsl/trivia_table.py), keyed by the PTX
statement it belongs to. The body keeps the program and its short comments.

Keys name statements by their tokens, so a moved statement takes its layout with it; the
`// end inline asm` marker (and the lines before it) is kept as the previous statement's
"after" lines, so an inline-asm statement moves with both its markers. Statements inside a
rolled `for` keep their keywords (one call there stands for several statements).
"""

from __future__ import annotations

from transpile.dsl.families import FAMILIES
from transpile.dsl.structured import STATEMENT_CALLS
from transpile.dsl.trivia_table import END
from transpile.format import LINE
from transpile.generator import q

from transpile.format import Pair

from .aliases import _AT
from .srcloc import _frame, _typed, at_fits
from .ir import Call, Display, Kw, is_call, stmt, unq

NAMES = ()
LONG_COMMENT = 100  # a comment longer than this goes to the table (Triton's `// wait for regs: ...`)
MARKERS = frozenset({"// begin inline asm", "// end inline asm"})
_KW_FIELD = {"indent": "indent", "lead": "lead", "close_indent": "indent", "close_lead": "lead"}


def run(stmts, ctx):
    stmts = [x for s in stmts for x in _fitted(s)]
    if not any(is_call(s, "srcmap") for s in stmts):
        stmts = [_typed_loc(s) for s in stmts]
    gen = ctx.generator
    tags = getattr(gen, "tags", None)
    if tags is None:
        return stmts
    entries: dict = {}
    body_lines: dict = {}   # key -> {line index: indent} of comment lines kept in the body
    moved: dict = {}        # key -> {line index: raw line}
    out = []
    loops: list = []        # depths of the enclosing `for` headers
    for s in stmts:
        while loops and s.depth <= loops[-1]:
            loops.pop()
        if s.prefix.startswith("for "):
            loops.append(s.depth)
            out.append(s)
            continue
        e = s.expr
        t = tags.get(id(e)) if e.__class__ is Call else None
        if t is not None and t[0] is e and not loops:
            key, kind, value = t[1], t[2], t[3]
            if kind == "tail":
                entries.setdefault(key, {})["tail"] = value
                continue
            if kind == "line":
                line = gen.leads[key][1][value]
                if _to_table(line):
                    moved.setdefault(key, {})[value] = line
                    continue
                kw = [i for i in e.items if i.__class__ is Kw and i.name == "indent"]
                if kw:   # a comment at its own indent: the body keeps the text, the table the indent
                    body_lines.setdefault(key, {})[value] = unq(kw[0].value)
                    e = Call(e.head, [i for i in e.items if i is not kw[0]])
                    s = type(s)(e, s.depth, s.prefix, s.trailer)
        if e.__class__ is Call and not loops:
            kept = []
            for i in e.items:
                if i.__class__ is Kw and i.name == "end_indent":  # the table re-indents the marker
                    continue
                t = tags.get(id(i)) if i.__class__ is Kw else None
                if t is not None and t[0] is i:
                    entry = entries.setdefault(t[1], {})
                    if t[2] == "fmt":
                        entry["fmt"] = t[3]
                    else:
                        entry[_KW_FIELD[i.name]] = t[3]
                    continue
                kept.append(i)
            if len(kept) != len(e.items):
                e.items[:] = kept
                e._flat = None
        out.append(s)
    _lines(gen, entries, moved, body_lines)
    # the style and the table go after the body (transpile.generator.render), even when empty
    gen.trivia_table = Display("{", "}", [Pair(q(k), _entry(v)) for k, v in entries.items()])
    return _nonempty_blocks(out)


def _nonempty_blocks(stmts):
    """A block whose every line moved to the table keeps a `pass`: Python needs a body."""
    out = []
    for i, s in enumerate(stmts):
        out.append(s)
        if s.trailer.endswith(":") and (i + 1 == len(stmts) or stmts[i + 1].depth <= s.depth):
            out.append(stmt("pass", s.depth + 1))
    return out


def _fitted(s):
    """`at(.., ..).<insn>(...)` whose head no longer fits its line (a later pass nested
    it deeper): `<insn>(..., at=at(...))`, which records the same lines in the same order
    (black would split inside the prefix's brackets, which format.layout does not write)."""
    e = s.expr
    if s.prefix or e.__class__ is not Call or _fits(s):
        return [s]
    bracket = e.head.split(".", 1)[0] if e.head.startswith(("asm.at(", "nvasm.at(")) else None
    if bracket is not None:  # `asm.at(...).x(...)`: `with inline_asm():` then `x(..., at=...)`
        inner = _fitted(type(s)(Call(e.head[len(bracket) + 1:], e.items), s.depth + 1))
        if len(inner) != 1 or not _fits(inner[0]):
            return [s]
        kw = [Kw("blank", "False")] if bracket == "nvasm" else []
        kw += [i for i in e.items if i.__class__ is Kw and i.name == "end_indent"]
        inner[0].expr.items[:] = [i for i in inner[0].expr.items if not (i.__class__ is Kw and i.name == "end_indent")]
        return [type(s)(Call("inline_asm", kw), s.depth, "with ", ":"), inner[0]]
    if not e.head.startswith("at("):
        return [s]
    m = _AT.match(e.head)
    if m is None or any(i.__class__ is Kw and i.name == "at" for i in e.items) or not at_fits(m.group(1)[:-1], s.depth):
        return [s]
    rest = e.head[m.end():]
    first = rest.split(".", 1)[0]
    if first not in ("asm", "nvasm") and first not in FAMILIES and first not in STATEMENT_CALLS:
        rest = "ptx." + rest
    return [type(s)(Call(rest, [*e.items, Kw("at", m.group(1)[:-1])]), s.depth, s.prefix, s.trailer)]


def _fits(s) -> bool:
    """Whether the call's `head(` (or `head()`) fits its line."""
    e = s.expr
    return 4 * s.depth + len(e.head) + (1 if e.items else 2) <= LINE


def _typed_loc(s):
    """A `.loc` no prefix took, `ptx.loc(2, 477, 5, "$L__info_string0", (1, 53, 3))`, in the one
    spelling of source locations: `loc(477, 5, file=2, fn=0, inlined_at=(1, 53, 3))`
    (without `srcmap`, where `loc(...)` would add LLVM's comment)."""
    if not is_call(s, "ptx.loc"):
        return s
    f = _frame(s)
    return s if f is None else type(s)(_typed([f], "loc"), s.depth)


def _to_table(line: str) -> bool:
    text = line.strip(" \t")
    return not text or not text.startswith("//") or text in MARKERS or len(text) > LONG_COMMENT


def _lines(gen, entries, moved, body_lines) -> None:
    """The `lines` (and `after`) field of every key whose lead lost a line to the table."""
    prev = None
    for key, (tail, lines, indent) in gen.leads.items():
        gone = moved.get(key, {})
        kept = body_lines.get(key, {})
        template = [gone[n] if n in gone else [kept[n]] if n in kept else _body_marker(line, indent)
                    for n, line in enumerate(lines)]
        end = _after_end(lines, gone)
        if end and prev is not None:
            entries.setdefault(prev, {})["after"] = template[:end]
            template = template[end:]
        if any(x is not None for x in template):
            entries.setdefault(key, {})["lines"] = _trim(template)
        prev = key


def _body_marker(line, indent):
    """The slot of a line the body writes itself: [its indent] for an `// end inline asm`
    marker at another indent than the statement's (the sugar writes it at the default), else None."""
    text = line.lstrip(" \t")
    own = line[:len(line) - len(text)]
    return [own] if text == "// end inline asm" and own != indent else None


def _after_end(lines, gone) -> int:
    """The number of leading lines (through the last `// end inline asm`) that belong after
    the previous statement: all of them moved to the table; else 0."""
    end = 0
    for n, line in enumerate(lines):
        if line.strip(" \t") == "// end inline asm":
            end = n + 1
    return end if end and all(n in gone for n in range(end)) else 0


def _trim(template):
    while template and template[-1] is None:
        template.pop()
    return template


def _entry(e: dict) -> Display:
    items = []
    for field in ("indent", "lead", "tail", "lines", "after", "fmt"):
        if field not in e:
            continue
        v = e[field]
        if field == "fmt":
            val = Display("{", "}", [f"{k}: {q(x)}" for k, x in v.items()])
        elif field in ("lines", "after"):
            val = Display("[", "]", ["None" if x is None else Display("[", "]", [q(x[0])]) if x.__class__ is list
                                     else q(x) for x in v])
        else:
            val = q(v)
        items.append(Pair(q(field), val))
    return Display("{", "}", items)


__all__ = ["run", "END"]
