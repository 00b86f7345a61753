"""ParseError: `file:line:col: error: ...`, the source line and a caret."""

from __future__ import annotations

import re

# Readable names for the grammar's terminals in "expected ..." lists.
TERMINAL_NAMES = {
    "SEMICOLON": "';'", "COMMA": "','", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['",
    "RSQB": "']'", "LPAR": "'('", "RPAR": "')'", "COLON": "':'", "AT": "'@'", "BANG": "'!'",
    "IDENT": "a name", "DOTNAME": "a .modifier", "INT": "an integer", "FLOAT_DEC": "a number",
    "FLOAT_HEX": "a float literal", "STRING": "a string", "SINK": "'_'", "$END": "end of input",
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
        shown, caret = _window(self.source_line.replace("\t", " "), self.column - 1)
        return f"{head}\n{shown}\n{' ' * caret}^"


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
    shown = sorted({TERMINAL_NAMES.get(n, n.lower() if n.isupper() else n) for n in names})
    if len(shown) > 8:
        shown = shown[:8] + ["..."]
    return ", ".join(shown)
