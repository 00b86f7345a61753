"""Trivia arguments of the DSL (`ptx.text/tail/comment/blank`, `fmt=`, `lead=`,
`indent=`, the `ptx.style` table) hold whitespace, comments and cpp line markers
only, spelled as the grammar reads them: anything else would be PTX that is not
in the tree (an instruction the checked mode never sees) or text that no longer
parses."""

from __future__ import annotations

import functools
import re

from .errors import DSLError

# The grammar's %ignore'd terminals (ptxgrammar/ptx.lark), ASCII only as ptxas wants.
_WS = r"[ \t\r\n\f]+"
_LINE_COMMENT = r"//[\t\x20-\x7e]*"
_BLOCK_COMMENT = r"/\*(?:[^*\x00-\x08\x0b\x0e-\x1f\x7f-\U0010ffff]|\*(?!/))*\*/"
_MARKER = r'#[ \t]*(?:line[ \t]+)?[0-9]+[ \t]+"[^"\n\r]*"(?:[ \t]+[0-9]+)*'
_ITEM = rf"{_WS}|{_LINE_COMMENT}|{_BLOCK_COMMENT}|{_MARKER}"
# The patterns, compiled when first needed: the block comment's class over all of Unicode
# takes ~30 ms to compile, a sixth of a py2ptx run that may never meet a trivia argument.
_PATTERNS = {
    # Before a token, a line comment or marker must end its line (or it would swallow the token).
    "before_token": rf"(?:{_WS}|{_BLOCK_COMMENT}|(?:{_LINE_COMMENT}|{_MARKER})[ \t]*(?:\r\n|\r|\n))*",
    "line_end": rf"(?:{_ITEM})*",
    # Pending lines of `ptx.text`/`ptx.tail` may end inside a block comment that later lines close.
    "open": rf"(?:{_ITEM})*(?:/\*(?:[^*\x00-\x08\x0b\x0e-\x1f\x7f-\U0010ffff]|\*(?!/))*)?",
}


@functools.cache
def _pattern(name: str) -> re.Pattern:
    return re.compile(_PATTERNS[name])

_OK: dict[tuple[str, bool, bool], bool] = {}
_COMMENT_TEXT = re.compile(r"[\t\x20-\x7e]*\r?")


def check_trivia(value, what: str, *, before_token: bool = True, open_comment: bool = False) -> None:
    """Raise DSLError unless `value` is trivia. `before_token`: a token follows it on
    the same line (fmt=, indent=, lead=); otherwise a line end follows. `open_comment`:
    it may end inside a block comment that text still to come closes (ptx.text lines)."""
    if value.__class__ is not str:
        raise DSLError(f"{what} must be a string of whitespace and comments, not {type(value).__name__}")
    key = (value, before_token, open_comment)
    ok = _OK.get(key)
    if ok is None:
        pattern = _pattern("open" if open_comment else "before_token" if before_token else "line_end")
        ok = _OK[key] = pattern.fullmatch(value) is not None
    if not ok:
        hint = ("; a // comment or # line marker must end with a line break here"
                if before_token and _pattern("line_end").fullmatch(value) else "")
        raise DSLError(f"{what}={value!r} is not trivia (only whitespace, comments and cpp line markers; "
                       f"write PTX statements as DSL calls){hint}")


_TEXT_OK: set = set()   # comment texts already checked (nvcc repeats `begin inline asm` thousands of times)


def check_comment_text(text, what: str = "comment") -> None:
    """The text of a `//` comment: one line, printable ASCII (a final CR is the line end
    of a file with mixed line ends, not text)."""
    if text.__class__ is str and text in _TEXT_OK:
        return
    if text.__class__ is not str or _COMMENT_TEXT.fullmatch(text) is None:
        raise DSLError(f"{what} text {text!r} must be one line of printable ASCII (no line break)")
    if len(_TEXT_OK) < 65536:
        _TEXT_OK.add(text)
