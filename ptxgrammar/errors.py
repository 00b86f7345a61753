"""ParseError: `file:line:col: error: ...`, the source line and a caret."""

from __future__ import annotations

import re

# Readable names for the grammar's terminals in "expected ..." lists (every terminal of
# ptx.lark has one; a test checks that none is shown by its grammar-internal name).
TERMINAL_NAMES = {
    "SEMICOLON": "';'", "COMMA": "','", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['",
    "RSQB": "']'", "LPAR": "'('", "RPAR": "')'", "COLON": "':'", "AT": "'@'", "BANG": "'!'",
    "PLUS": "'+'", "EQUAL": "'='", "LESSTHAN": "'<'", "MORETHAN": "'>'", "VBAR": "'|'", "QMARK": "'?'",
    "CIRCUMFLEX": "'^'", "AMPERSAND": "'&'",
    "IDENT": "a name", "DOTNAME": "a .modifier", "INT": "an integer", "FLOAT_DEC": "a number",
    "FLOAT_HEX": "a float literal", "STRING": "a string", "SINK": "'_'", "$END": "end of input",
    "UNARYOP": "'-', '+', '!' or '~'", "ADDOP": "'+' or '-'", "MULOP": "'*', '/' or '%'",
    "SHIFTOP": "'<<' or '>>'", "RELOP": "'<', '>', '<=' or '>='", "EQOP": "'==' or '!='",
    "OROR": "'||'", "ANDAND": "'&&'",
    "VERSION": "'.version'", "TARGET": "'.target'", "ADDRESS_SIZE": "'.address_size'", "FILE": "'.file'",
    "LOC": "'.loc'", "SECTION": "'.section'", "ALIAS": "'.alias'", "PRAGMA": "'.pragma'",
    "LINKAGE": "a linkage (.visible, .extern, .weak, .common)", "FUNCTION_KIND": "'.entry' or '.func'",
    "STATE_SPACE": "a state space (.reg, .global, .shared, ...)", "ALIGN": "'.align'",
    "ATTRIBUTE": "'.attribute'", "PTR": "'.ptr'", "CALLPROTOTYPE": "'.callprototype'",
    "LABEL_LIST": "'.calltargets' or '.branchtargets'",
}


class ParseError(Exception):
    """Bad PTX input, located. ``str()`` gives the full compiler-style message."""

    def __init__(self, message: str, *, filename: str, line: int, column: int, source_line: str = ""):
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self.render())

    def render(self) -> str:
        head = f"{self.filename}:{self.line}:{self.column}: error: {self.message}"
        if not self.source_line:
            return head
        line, col = printable(self.source_line, self.column - 1)
        shown, caret = _window(line, col)
        return f"{head}\n{shown}\n{' ' * caret}^"


def printable(line: str, col: int) -> tuple[str, int]:
    """The line with tabs as spaces and every other unprintable or non-ASCII character
    escaped (`\\x00`, `\\u00e9`), so a binary file never reaches the terminal raw;
    the column moves with the escapes."""
    out, shift = [], 0
    for i, ch in enumerate(line):
        if ch == "\t":
            text = " "
        elif " " <= ch <= "~":
            text = ch
        else:
            text = ascii(ch)[1:-1]
        if i < col:
            shift += len(text) - 1
        out.append(text)
    return "".join(out), col + shift


def _window(line: str, col: int, width: int = 160) -> tuple[str, int]:
    """A long line cut to `width` characters around the column (a 1 MB line stays readable)."""
    if len(line) <= width:
        return line, col
    start = max(0, min(col - width // 2, len(line) - width))
    shown = line[start: start + width]
    prefix = "..." if start else ""
    return prefix + shown + ("..." if start + width < len(line) else ""), col - start + len(prefix)


def locate(text: str, pos: int) -> tuple[int, int, str]:
    """(line, column, line text) of a character offset; CR, LF and CRLF end lines."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text[:pos])]
    line_start = starts[-1]
    end = re.compile(r"\r|\n").search(text, pos)
    line_text = text[line_start: end.start() if end else len(text)]
    return len(starts), pos - line_start + 1, line_text


def error_at(text: str, pos: int, message: str, filename: str) -> ParseError:
    line, col, src = locate(text, pos)
    return ParseError(message, filename=filename, line=line, column=col, source_line=src)


def describe_expected(names) -> str:
    """`';', ',' or ']'`: the readable names, sorted, at most 8."""
    shown = sorted({TERMINAL_NAMES.get(n, n) for n in names})
    if len(shown) > 8:
        return ", ".join(shown[:8]) + " or ..."
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
