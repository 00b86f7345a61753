"""ptxgrammar: a Lark grammar and a typed, lossless tree for PTX.

    module = ptxgrammar.parse(text, filename="k.ptx")
    assert ptxgrammar.emit(module) == text
"""

from .emitter import emit
from .errors import ParseError
from .parser import decode_ptx, parse, parse_file, parse_full, read_file_bytes, read_ptx
from .tree import *  # noqa: F401,F403  (the node types are part of the API)
from .tree import NODE_CLASSES, Comment, LineMarker, Whitespace, split_trivia

__all__ = ["parse", "parse_file", "parse_full", "read_ptx", "decode_ptx", "read_file_bytes", "emit", "ParseError",
           "split_trivia",
           "Comment", "LineMarker", "Whitespace", *NODE_CLASSES]
