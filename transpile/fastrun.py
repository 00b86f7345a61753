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

from .generator import HEADER

# string and bytes literals (an f-string is refused) and plain decimal ints
_STRING = r"""[rRbBuUfF]{0,3}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
_INT = r"(?<![\w.])(?:0|[1-9][0-9]*)(?![\w.])"
# one split finds both (a string first, so digits inside it stay there)
_LITERAL = re.compile(f"({_STRING}|{_INT})")
_INT_LITERAL = re.compile(f"({_INT})")
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


def plan(source: str, namespace: dict):
    """The module as a list of (function, values, body or None), or None (see above)."""
    lines = source.split("\n")
    if lines[0] != HEADER:
        return None
    try:
        return _Planner(namespace).run(lines)
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


class _Planner:
    def __init__(self, namespace: dict):
        self.namespace = namespace
        self.functions: dict = {}   # template -> function

    def run(self, lines: list):
        root: list = []
        stack = [("", root)]        # (indent, statements) of the open blocks
        opened = None               # the body of a compound statement just read
        seen: dict = {}             # a line's code -> its (function, values, compound): lines repeat
        i, n = 1, len(lines)
        while i < n:
            line = lines[i]
            code = line.lstrip(" ")
            if not code or code[0] == "#" or not code.strip(" \t\f\r"):
                i += 1              # a blank or comment line
                continue
            if code[0] in "\t\f":
                raise _Refuse
            indent = line[:len(line) - len(code)]
            hit = seen.get(code)
            if hit is None:
                template, values, j = self.logical_line(lines, i, code)
                compound = template.endswith(":")
                fn = self.function(template, len(values), compound)
                if j == i + 1:      # a one-line statement: the same text plans the same way
                    seen[code] = (fn, values, compound)
                i = j
            else:
                fn, values, compound = hit
                i += 1
            if opened is not None:
                if len(indent) <= len(stack[-1][0]):
                    raise _Refuse   # an empty block: Python's IndentationError
                stack.append((indent, opened))
                opened = None
            else:
                while indent != stack[-1][0]:
                    if len(indent) > len(stack[-1][0]) or len(stack) == 1:
                        raise _Refuse   # an unexpected indent, or a dedent to no open level
                    stack.pop()
            if compound:
                opened = []
                stack[-1][1].append((fn, values, opened))
            else:
                stack[-1][1].append((fn, values, None))
        if opened is not None:
            raise _Refuse
        return root

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
        return fn

    def build(self, template: str, nvalues: int, compound: bool):
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
        import types

        return types.FunctionType(code, self.namespace)

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


def _bound(code, params) -> list:
    """The local names of a template's function other than its parameters (a cell for a
    parameter, read by a comprehension, is the parameter's value: fine)."""
    names = list(code.co_varnames[code.co_argcount:])
    return names + [c for c in code.co_cellvars if c not in params and c not in names]


_STRINGS: dict = {}


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

