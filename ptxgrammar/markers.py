"""What the fast path's chunk rules make besides nodes, apart from Lark: the scope markers
that parser.py folds into blocks (stored builders make them by name), and the check a grammar
action raises. A parse whose shapes are all stored runs without loading Lark."""

from __future__ import annotations

from dataclasses import dataclass

from .tree import FunctionHead


# Markers made by the chunk rules of the fast path; parser.py folds them into blocks.
@dataclass(slots=True)
class FunctionOpen:
    head: FunctionHead
    brace: str


@dataclass(slots=True)
class SectionOpen:
    name: str
    trivia: tuple


@dataclass(slots=True)
class BlockOpen:
    brace: str


@dataclass(slots=True)
class BlockClose:
    brace: str


MARKER_CLASSES = {c.__name__: c for c in (FunctionOpen, SectionOpen, BlockOpen, BlockClose)}


class GrammarCheck(Exception):
    """A token the grammar admits but the language does not (raised at that token, a Lark Token)."""

    def __init__(self, token, message: str):
        super().__init__(message)
        self.token = token
        self.message = message
