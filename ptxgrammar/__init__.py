"""ptxgrammar: a Lark grammar and a typed, lossless tree for PTX.

    module = ptxgrammar.parse(text, filename="k.ptx")
    assert ptxgrammar.emit(module) == text

The parser (and Lark with it, a fifth of a start-up) loads on the first use of one of its
entry points: py2ptx builds trees and emits them without ever parsing PTX.
"""

from typing import TYPE_CHECKING

from .emitter import emit
from .errors import ParseError
from .files import read_file_bytes
from .tree import *  # noqa: F401,F403  (the node types are part of the API)
from .tree import NODE_CLASSES, Comment, LineMarker, Whitespace, split_trivia

if TYPE_CHECKING:
    from .parser import decode_ptx, parse, parse_file, parse_full, read_ptx

_PARSER_ENTRY_POINTS = ("decode_ptx", "parse", "parse_file", "parse_full", "read_ptx")

__all__ = ["parse", "parse_file", "parse_full", "read_ptx", "decode_ptx", "read_file_bytes", "emit", "ParseError",
           "split_trivia", "Comment", "LineMarker", "Whitespace", *NODE_CLASSES]


def __getattr__(name: str):
    if name not in _PARSER_ENTRY_POINTS:
        raise AttributeError(f"module 'ptx2py.ptxgrammar' has no attribute {name!r}")
    from . import parser

    value = getattr(parser, name)
    globals()[name] = value
    return value
