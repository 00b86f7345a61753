"""DSLError: a mistake in DSL Python, reported at the user's line."""

from __future__ import annotations


class DSLError(Exception):
    """`file:line: error: message`; `python_to_ptx` fills in file and line."""

    def __init__(self, message: str, filename: str | None = None, line: int | None = None,
                 source_line: str | None = None, token: str | None = None):
        super().__init__(message)
        self.message, self.filename, self.line = message, filename, line
        self.source_line = source_line
        self.token = token  # text on the line the caret points at (a modifier), when known

    def __str__(self):
        if self.filename is None:
            return f"error: {self.message}"
        head = f"{self.filename}:{self.line}: error: {self.message}"
        if not self.source_line or not self.source_line.strip():
            return head
        text = self.source_line.rstrip("\n")
        col = text.find(self.token) if self.token else -1
        if col < 0:
            col = len(text) - len(text.lstrip())
        return f"{head}\n{text}\n{' ' * col}^"
