"""Default spacing for hand-built nodes (trivia=None). The DSL passes a module's
inferred style; this fallback writes one space between words and none around
punctuation."""

from __future__ import annotations

_TIGHT_BEFORE = {",", ";", ")", "]", "}", ":", "|"}
_TIGHT_AFTER = {"(", "[", "{", "@", "!", "|"}


class SimpleStyle:
    statement_indent = "\t"

    def trivia_for(self, node) -> tuple[str, ...]:
        out, prev = [], None
        for tok in node.tokens():
            if prev is None:
                out.append("")
            elif tok in _TIGHT_BEFORE or prev in _TIGHT_AFTER or tok.startswith(".") and prev[:1].isalpha() and not out[-1:] == [" "]:
                out.append("")
            else:
                out.append(" ")
            prev = tok
        return tuple(out)


DEFAULT_STYLE = SimpleStyle()
