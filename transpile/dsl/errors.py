"""DSLError: a mistake in DSL Python, reported at the user's line."""

from __future__ import annotations


class DSLError(Exception):
    """`file:line: error: message`; `python_to_ptx` fills in file and line."""

    def __init__(self, message: str, filename: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message, self.filename, self.line = message, filename, line

    def __str__(self):
        if self.filename is None:
            return f"error: {self.message}"
        return f"{self.filename}:{self.line}: error: {self.message}"
