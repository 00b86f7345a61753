"""DSLError: a mistake in DSL Python, reported at the user's line and column."""

from __future__ import annotations


class DSLError(Exception):
    """`file:line:col: error: message`, the Python line and a caret, like a ParseError;
    `python_to_ptx` fills in the place."""

    def __init__(self, message: str, filename: str | None = None, line: int | None = None,
                 column: int | None = None, source_line: str = "", token: str | None = None):
        super().__init__(message)
        self.message, self.filename, self.line = message, filename, line
        self.column, self.source_line = column, source_line
        self.token = token  # text on the line the caret points at (a modifier), when known

    def __str__(self):
        if self.filename is None:
            return f"error: {self.message}"
        if self.column is None:
            return f"{self.filename}:{self.line}: error: {self.message}"
        head = f"{self.filename}:{self.line}:{self.column}: error: {self.message}"
        if not self.source_line:
            return head
        from ptx2py.ptxgrammar.errors import printable

        shown, caret = printable(self.source_line, self.column - 1)
        return f"{head}\n{shown}\n{' ' * caret}^"
