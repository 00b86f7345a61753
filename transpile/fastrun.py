"""Running DSL Python without compiling the whole module in one piece.

`compile()` of a 2 MB generated module costs more than everything else `python_to_ptx`
does, yet such a module is tens of thousands of statements in a few hundred shapes.
Here each logical line's plain literals (decimal ints, unprefixed one-line strings) are
lifted out; what is left -- the line's *template* -- is compiled once, as a function whose
parameters are those literals, and called with each line's values. The functions run in
the module's own namespace, so names, attributes, operators and calls resolve exactly as
in the module; a name the statement binds (`r = reg.b32(...)`, a `for` target, a `with
... as` target) is declared global, as it is at module level. A compound statement with
one clause (`with`, `for`, `while`, `if` without `elif`/`else`) gets its body as a callable.

`plan(source)` returns None -- the caller compiles the module whole -- for anything outside
that subset: a tab in the indentation, a backslash continuation, a string over several
lines, a multi-clause statement, a `def`/`class`/`try`, a name whose meaning depends on the
scope (`locals`, `return`, ...), or a template that does not compile. Nothing has run then.
"""

from __future__ import annotations

import ast
import re
from itertools import accumulate, count, groupby, repeat
from operator import add as _plus
from operator import itemgetter

from .generator import HEADER

# string and bytes literals (an f-string is refused) and plain decimal ints
_STRING = r"""[rRbBuUfF]{0,3}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
_INT = r"(?<![\w.])(?:0|[1-9][0-9]*)(?![\w.])"
# one split finds both (a string first, so digits inside it stay there)
_LITERAL = re.compile(f"({_STRING}|{_INT})")
_INT_LITERAL = re.compile(f"({_INT})")
# the same split of a whole module, faster: every match starts with a quote or a digit (the
# search skips other characters), its kind told by a lookbehind. A prefixed string splits as
# its prefix (code) and a plain string: `_PREFIXED` finds those lines, planned one by one.
_MODULE_LITERAL = re.compile(
    r"""(["'0-9](?:(?<=[1-9])(?<![\w.].)[0-9]*+(?![\w.])"""
    r"""|(?<=")[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|(?<=')[^'\\\n]*+(?:\\.[^'\\\n]*+)*+'"""
    r"""|(?<=0)(?<![\w.]0)(?![\w.])))""")
_HOLE = "\x00"     # a literal's place in a template line (no Python source holds a NUL)
_PREFIXED = re.compile(r"\w\x00")   # an int never follows a word character: a string's prefix
_PREFIX = re.compile(r"(?<!\w)([rRbBuUfF]{1,3})(?=\x00)")
_DIGITS = frozenset("0123456789")
# names whose meaning differs inside a function (`__ptx_` names, this module's, are refused too)
_SCOPED = re.compile(r"\b(?:return|yield|await|nonlocal|global|locals|vars|dir|exec|eval|breakpoint|super)\b")
_COMPOUND = re.compile(r"(with|for|while|if)\b")
_REFUSED = re.compile(r"(?:elif|else|try|except|finally|def|class|async|match|case|lambda|import|from)\b|@")
_PARAMS: list = []
_MAX_PARAMS = 20_000   # a statement with more literals is run the whole-module way


def _param(k: int) -> str:
    """The name of a template's k-th literal parameter."""
    while len(_PARAMS) <= k:
        if len(_PARAMS) >= _MAX_PARAMS:
            raise _Refuse
        _PARAMS.append(f"__ptx_p{len(_PARAMS)}")
    return _PARAMS[k]


HEADER_CODE = compile(HEADER.split("#")[0], "<header>", "exec")


class _Refuse(Exception):
    pass


_CODES: dict = {}            # template -> its function's code object (or _REFUSED_CODE)
_MAX_CODES = 50_000
_REFUSED_CODE = object()


def plan(source: str, namespace: dict):
    """The module as a list of (function, values, body or None), or None (see above)."""
    if not source.startswith(HEADER) or source[len(HEADER):len(HEADER) + 1] not in ("\n", "") or _HOLE in source:
        return None
    try:
        return _Planner(namespace).run(source)
    except _Refuse:
        return None


def run(stmts) -> None:
    for fn, values, body in stmts:
        if body is None:
            fn(*values)
        else:
            fn(lambda b=body: run(b), *values)


def run_module(stmts: list, after) -> None:
    """`run(stmts)`, calling `after()` after each top-level statement; each one's plan is
    dropped once it has run."""
    for i, stmt in enumerate(stmts):
        stmts[i] = None
        run((stmt,))
        after()


_PLAIN, _ROW, _OPENS, _BLANK, _SPREAD, _OUTSIDE = range(6)   # the kinds of a statement's first line
# (_ROW: a plain statement of a data row's template, see `_batch`)


class _Planner:
    def __init__(self, namespace: dict):
        self.namespace = namespace
        self.functions: dict = {}   # template -> function
        self.starts: dict = {}      # a line with holes -> its `start` (as a statement's first line)
        self.parts: dict = {}       # a line with holes -> its `part` (as a line of a statement)
        self.spreads: dict = {}     # a statement's lines -> its `spread_plan`
        self.rows: dict = {}        # the function of a data row's template -> its `_rows`

    def run(self, source: str):
        # Lines repeat (a data row, `ret`, the same register moves): the distinct lines are
        # split once, each into its code with a hole per literal (`holed`: shared by the
        # lines of one shape, planned once by `start`) and its literals, `counts[p]` of them
        # from `values[firsts[p]]` on. A line's entry -- (kind, indent, statement, p) -- is
        # made for every distinct line at once, and a line met again reuses its statement.
        self.lines = lines = source.split("\n")
        fresh = list(dict.fromkeys(lines))
        self.literals, holed = _split_literals("\n".join(fresh))
        self.holed = holed = holed.split("\n")
        self.counts = counts = list(map(str.count, holed, repeat(_HOLE)))
        self.firsts = firsts = list(accumulate(counts, initial=0))
        self.values = values = _values(self.literals)
        starts = self.starts
        for h in set(holed).difference(starts):
            starts[h] = self.start(h)
        hits = list(map(starts.__getitem__, holed))
        vals = map(values.__getitem__, map(slice, firsts, map(_plus, firsts, map(itemgetter(1), hits))))
        stmts = zip(map(itemgetter(0), hits), vals, repeat(None))
        entries = dict(zip(fresh, zip(map(itemgetter(4), hits), map(itemgetter(3), hits), stmts, count())))
        del fresh, hits, vals, stmts
        root: list = []
        stack = [(0, root)]         # (indent, statements) of the open blocks
        top = 0                     # the indent the next statement should have (-1: a new block's)
        body = root                 # the statements of the innermost open block
        blank, opens, spread, row = _BLANK, _OPENS, _SPREAD, _ROW
        with_rows: dict = {}        # the bodies holding data rows
        last = None                 # the last of them
        add = root.append
        numbered = enumerate(lines)
        next(numbered)              # the header
        for i, line in numbered:
            kind, indent, stmt, p = entries[line]
            if kind == blank:
                continue
            if kind >= spread:
                if kind != spread:
                    raise _Refuse       # (_OUTSIDE)
                fn, vals, kind, j = self.spread(entries, i, indent)
                for _ in range(j - i - 1):
                    next(numbered)
                stmt = (fn, vals, None)
                if j == i + 1:      # one line (a prefixed string: `*b"name"`): planned once a text
                    entries[line] = (kind, indent, stmt, p)
            if indent != top:
                if top < 0:         # the first statement of a compound statement's body
                    if indent <= stack[-1][0]:
                        raise _Refuse   # an empty block: Python's IndentationError
                    stack.append((indent, body))
                else:
                    while indent != stack[-1][0]:
                        if indent > stack[-1][0] or len(stack) == 1:
                            raise _Refuse   # an unexpected indent, or a dedent to no open level
                        stack.pop()
                    body = stack[-1][1]
                add = body.append
                top = indent
            if kind == opens:
                opened: list = []
                add((stmt[0], stmt[1], opened))
                body, top, add = opened, -1, opened.append
            else:
                add(stmt)
                if kind == row and body is not last:
                    last = with_rows[id(body)] = body
        if top < 0:
            raise _Refuse
        if _BAD in values and _takes_bad(root):
            raise _Refuse
        for stmts in with_rows.values():
            _batch(stmts, self.rows)
        return root

    def start(self, line: str):
        """(function, literals it takes, holes in the line, indent, kind) of a line with
        holes as the first line of a statement: _BLANK for a blank or comment line, _SPREAD
        for a statement over several lines or one whose strings the holes do not read (see
        `spread`), _OUTSIDE for one outside the subset (every distinct line is planned: one
        that only continues a statement is never run as this)."""
        code = line.lstrip(" ")
        indent = len(line) - len(code)
        if not code or code[0] == "#" or not code.strip(" \t\f\r"):
            return None, 0, line.count(_HOLE), indent, _BLANK
        try:
            if code[0] in "\t\f":
                raise _Refuse
            cut, used, holes, depth, clean, prefixed = self.part(code)
            if depth or not clean or prefixed:
                return None, 0, holes, indent, _SPREAD
            template = self.named(cut, used)
            compound = template.endswith(":")
            fn = self.function(template, used, compound)
            return fn, used, holes, indent, _OPENS if compound else _ROW if fn in self.rows else _PLAIN
        except _Refuse:
            return None, 0, 0, indent, _OUTSIDE

    def part(self, line: str):
        """(code, literals it takes, holes, bracket depth change, clean, prefixed) of a line
        with holes: the code up to a comment, string prefixes taken out; clean: no quote,
        backslash or other word before a hole left in it; prefixed: (k, prefix) of each
        string whose k-th hole of the line had a prefix (`b"..."`, `r"..."`)."""
        hit = self.parts.get(line)
        if hit is None:
            h = line.find("#")
            code = line if h < 0 else line[:h]   # strings are holes: a `#` starts a comment
            if "__ptx_" in code:
                raise _Refuse
            prefixed = ()
            if _PREFIXED.search(code):
                pieces = _PREFIX.split(code)     # [code, prefix, code, prefix, ..., code]
                prefixed = tuple(("".join(pieces[:m]).count(_HOLE), pieces[m].lower())
                                 for m in range(1, len(pieces), 2))
                code = "".join(pieces[0::2])
            clean = not ("\\" in code or '"' in code or "'" in code or _PREFIXED.search(code)
                         or any("f" in p for _, p in prefixed))
            depth = (code.count("(") + code.count("[") + code.count("{")
                     - code.count(")") - code.count("]") - code.count("}"))
            hit = self.parts[line] = (code, code.count(_HOLE), line.count(_HOLE), depth, clean, prefixed)
        return hit

    @staticmethod
    def named(code: str, used: int) -> str:
        """The template of code with holes: the k-th hole is the parameter `_param(k)`."""
        pieces = code.rstrip(" \t\r\f").split(_HOLE)
        if used:
            _param(used - 1)
        out = [pieces[0]]
        for name, piece in zip(_PARAMS, pieces[1:]):
            out += (name, piece)
        return "".join(out)

    def spread(self, entries: dict, i: int, indent: int):
        """(function, values, kind, next line) of the statement starting at line i that
        spans several lines or holds a prefixed string (`b"..."`): planned once per text
        (`spread_plan`); or lifted from its source lines (`logical_line`: a word before a
        string, say)."""
        lines, parts, part = self.lines, self.parts, self.part
        depth, j, n = 0, i, len(lines)
        at = []                     # the lines' indexes in `holed`
        while True:
            p = entries[lines[j]][3]
            at.append(p)
            line = self.holed[p] if j > i else self.holed[p][indent:]
            hit = parts.get(line)
            depth += (hit or part(line))[3]
            j += 1
            if depth <= 0 or j >= n:
                break
        if depth != 0:
            raise _Refuse
        key = tuple([self.holed[p] for p in at])
        hit = self.spreads.get(key)
        if hit is None:
            hit = self.spreads[key] = self.spread_plan(key, indent)
        if hit is False:
            template, vals, j = self.logical_line(lines, i, lines[i][indent:])
            compound = template.endswith(":")
            fn = self.function(template, len(vals), compound)
            return fn, vals, _OPENS if compound else _PLAIN, j
        fn, kind, picks, prefixed, holes = hit
        firsts, counts = self.firsts, self.counts
        values: list = []           # the statement's literals' values, line by line
        for p in at:
            values += self.values[firsts[p]:firsts[p] + counts[p]]
        if prefixed:
            literals: list = []
            for p in at:
                literals += self.literals[firsts[p]:firsts[p] + counts[p]]
            for m, prefix in prefixed:
                values[m] = _prefixed(prefix, literals[m])
        if picks is None:
            return fn, values, kind, j
        vals: list = []
        for m, used in picks:
            vals += values[m:m + used]
        return fn, vals, kind, j

    def spread_plan(self, lines: tuple, indent: int):
        """(function, kind, picks, prefixed, holes) of a statement's lines (see `spread`):
        picks (first hole, holes it takes) of each line, or None when it takes every hole;
        prefixed (hole, prefix) of its prefixed strings. False: its lines are not clean."""
        codes, picks, prefixed = [], [], []
        holes = 0
        for j, line in enumerate(lines):
            code, used, n, _, clean, pre = self.part(line[indent:] if j == 0 else line)
            if not clean:
                return False
            codes.append(code)
            picks.append((holes, used))
            prefixed += [(holes + m, p) for m, p in pre]
            holes += n
        used = sum([u for _, u in picks])
        template = self.named("\n".join(codes), used)
        compound = template.endswith(":")
        return (self.function(template, used, compound), _OPENS if compound else _PLAIN,
                None if used == holes else [p for p in picks if p[1]], tuple(prefixed), holes)

    def logical_line(self, lines, i, text):
        """(template, literal values, index of the next line) of the statement starting at line i."""
        pieces: list = []
        values: list = []
        depth = 0
        while True:
            if "__ptx_" in text:
                raise _Refuse
            # [code, literal, code, literal, ..., code]; most lines have no string: ints alone
            parts = (_LITERAL if '"' in text or "'" in text else _INT_LITERAL).split(text)
            if len(parts) > 1 or "#" in text:
                text = self.lift(parts, values)
            if "\\" in text or '"' in text or "'" in text:
                raise _Refuse               # a continuation, or a string that does not end on its line
            depth += (text.count("(") + text.count("[") + text.count("{")
                      - text.count(")") - text.count("]") - text.count("}"))
            pieces.append(text)
            i += 1
            if depth <= 0 or i >= len(lines):
                break
            pieces.append("\n")
            text = lines[i]
        if depth != 0:
            raise _Refuse
        return "".join(pieces).rstrip(" \t\r\f"), values, i

    @staticmethod
    def lift(parts: list, values: list) -> str:
        """One physical line's code with its literals (`parts` from `_LITERAL.split`) replaced by
        parameter names, their values appended to `values`; a comment is cut off."""
        for k in range(0, len(parts), 2):
            if "#" in parts[k]:             # a comment: the rest of the line
                parts[k] = parts[k][:parts[k].index("#")]
                del parts[k + 1:]
                break
        literals = parts[1::2]
        if not literals:
            return parts[0]
        base = len(values)
        for lit in literals:
            values.append(int(lit) if lit[0] in _DIGITS else _string(lit))
        if len(_PARAMS) < base + len(literals):
            _param(base + len(literals) - 1)
        parts[1::2] = _PARAMS[base:base + len(literals)]
        return "".join(parts)

    def function(self, template: str, nvalues: int, compound: bool):
        fn = self.functions.get(template)   # the template fixes both the count and `compound`
        if fn is None:
            fn = self.functions[template] = self.build(template, nvalues, compound)
            row = _ROW_TEMPLATE.fullmatch(template)
            if row:
                self.rows[fn] = _rows(fn, row.group(1), self.namespace)
        return fn

    def build(self, template: str, nvalues: int, compound: bool):
        code = _CODES.get(template)   # a template compiles the same in every module
        if code is None:
            if len(_CODES) >= _MAX_CODES:
                _CODES.clear()
            code = _CODES[template] = self.code(template, nvalues, compound)
        if code is _REFUSED_CODE:
            raise _Refuse
        import types

        return types.FunctionType(code, self.namespace)

    def code(self, template: str, nvalues: int, compound: bool):
        """The code object of a template's function, or _REFUSED_CODE."""
        try:
            return self.checked_code(template, nvalues, compound)
        except _Refuse:
            return _REFUSED_CODE

    def checked_code(self, template: str, nvalues: int, compound: bool):
        if _SCOPED.search(template) or _REFUSED.match(template):
            raise _Refuse
        if compound and not _COMPOUND.match(template):
            raise _Refuse
        if not compound and template.endswith(":"):
            raise _Refuse
        params = (["__ptx_body"] if compound else []) + [_param(k) for k in range(nvalues)]
        body = template + ("\n  __ptx_body()" if compound else "")
        code = self.compiled(params, [], body)
        bound = _bound(code, params)   # names the statement binds: globals at module level
        if bound:
            code = self.compiled(params, bound, body)
            if _bound(code, params):
                raise _Refuse
        if code.co_freevars:
            raise _Refuse
        if code.co_flags & 0x2A0:   # a generator or coroutine
            raise _Refuse
        return code

    def compiled(self, params, global_names, body):
        src = f"def __ptx_t({', '.join(params)}):\n"
        if global_names:
            src += f" global {', '.join(global_names)}\n"
        src += " " + body + "\n"
        try:
            module = compile(src, "<template>", "exec", dont_inherit=True)
        except SyntaxError:
            raise _Refuse from None
        for const in module.co_consts:
            if hasattr(const, "co_name") and const.co_name == "__ptx_t":
                return const
        raise _Refuse


# A data row `ptx.data.b8(5)`: a section holds runs of thousands of them (`-G` debug data).
_ROW_TEMPLATE = re.compile(r"ptx\.data\.([A-Za-z_][A-Za-z0-9_]*)\(__ptx_p0\)")


def _rows(fn, ident: str, namespace: dict):
    """A function of the values of consecutive rows of `fn`'s template (`ptx.data.<ident>(v)`)
    that runs them: through the DSL's `rows` of that directive when `ptx.data.<ident>` is
    the DSL's, else (another `ptx`, or none) one call of the template each, as written."""
    def rows(*value_lists):
        try:
            many = getattr(namespace["ptx"].data, ident).rows
        except Exception:
            many = None
        if many is None:
            for values in value_lists:
                fn(*values)
        else:
            many(value_lists)
    return rows


def _batch(stmts: list, rows: dict) -> None:
    """Runs of consecutive statements of one data row template become one statement of its
    `_rows` function."""
    out: list = []
    for fn, run in groupby(stmts, itemgetter(0)):
        many = rows.get(fn)
        if many is None:
            out += run
            continue
        run = list(run)
        out.append(run[0] if len(run) == 1 else (many, list(map(itemgetter(1), run)), None))
    stmts[:] = out


def _takes_bad(stmts) -> bool:
    """Whether a statement of the plan takes a string `_values` could not read."""
    return any(any(v is _BAD for v in values) or (body is not None and _takes_bad(body))
               for _, values, body in stmts)


def _bound(code, params) -> list:
    """The local names of a template's function other than its parameters (a cell for a
    parameter, read by a comprehension, is the parameter's value: fine)."""
    names = list(code.co_varnames[code.co_argcount:])
    return names + [c for c in code.co_cellvars if c not in params and c not in names]


_STRINGS: dict = {}


def _split_literals(text: str):
    """(the literals `_MODULE_LITERAL` finds in text, the text with a hole for each): one
    split a chunk of lines at a time (a literal never spans lines), which keeps the
    split's code pieces few at any time."""
    literals: list = []
    out: list = []
    split = _MODULE_LITERAL.split
    i, n = 0, len(text)
    while i < n:
        j = text.find("\n", i + _CHUNK)
        j = n if j < 0 else j + 1
        pieces = split(text[i:j])
        literals += pieces[1::2]
        out.append(_HOLE.join(pieces[0::2]))
        i = j
    return literals, "".join(out)


_CHUNK = 1 << 16


def _values(literals: list) -> list:
    """The values of the literals `_MODULE_LITERAL` split out (each distinct one read once:
    they repeat); _BAD for a string with an escape Python refuses (in a comment, say, or
    after the prefix of a raw string, whose line is planned from its source): a plan that
    takes one is refused."""
    read = {x: int(x) if x[0] in _DIGITS else x[1:-1] if "\\" not in x else _escaped(x) for x in set(literals)}
    return list(map(read.__getitem__, literals))


_BAD = object()


def _prefixed(prefix: str, literal: str):
    """The value of a prefixed string, `literal` without its prefix."""
    if "\\" not in literal and literal.isascii():
        if prefix == "b":
            return literal[1:-1].encode("ascii")
        if prefix in ("r", "u"):
            return literal[1:-1]
    return _string(prefix + literal)


def _escaped(literal: str):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # `"\d"` of `r"\d"`: its line is planned from its source
        try:
            return _string(literal)
        except _Refuse:
            return _BAD



def _string(literal: str):
    """The value of a string or bytes literal (an f-string is an expression: refused)."""
    if literal[0] in "\"'" and "\\" not in literal:
        return literal[1:-1]
    v = _STRINGS.get(literal)
    if v is None:
        q = min(j for j in (literal.find('"'), literal.find("'")) if j >= 0)
        if "f" in literal[:q].lower():
            raise _Refuse
        try:
            v = _STRINGS[literal] = ast.literal_eval(literal)
        except (SyntaxError, ValueError):
            raise _Refuse from None
    return v

