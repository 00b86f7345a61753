"""Black-style layout of generated statements, without running black.

The generator builds each statement as a small expression IR (`Call`,
`Display`, `Kw`, atoms as str). `layout` writes it the way black's default
`Mode()` would: one line when it fits in 88 columns; else split at the
statement's last bracket with the arguments on one indented line; else one
argument per line with a magic trailing comma, recursively. `black_format`
is the one call to black (fixed Mode), used by tests and as a fallback.
"""

from __future__ import annotations

LINE = 88


class Call:
    __slots__ = ("head", "items", "_flat")

    def __init__(self, head: str, items: list):
        self.head, self.items, self._flat = head, items, None

    def flat(self) -> str:
        if self._flat is None:
            self._flat = self.head + "(" + ", ".join([i if i.__class__ is str else i.flat() for i in self.items]) + ")"
        return self._flat


class Display:
    """A list, tuple or dict display (black always explodes these when split)."""

    __slots__ = ("open", "close", "items", "_flat")

    def __init__(self, open_: str, close: str, items: list):
        self.open, self.close, self.items, self._flat = open_, close, items, None

    def flat(self) -> str:
        if self._flat is None:
            inner = ", ".join([i if i.__class__ is str else i.flat() for i in self.items])
            if self.open == "(" and len(self.items) == 1:
                inner += ","
            self._flat = self.open + inner + self.close
        return self._flat


class Kw:
    __slots__ = ("name", "value")

    def __init__(self, name: str, value):
        self.name, self.value = name, value

    def flat(self) -> str:
        v = self.value
        return self.name + "=" + (v if v.__class__ is str else v.flat())


class Pair:
    """A dict display entry `key: value`; a key that does not fit is split like black does
    (a value that is itself a display is split instead, when the key is a plain atom)."""

    __slots__ = ("key", "value")

    def __init__(self, key, value):
        self.key, self.value = key, value

    def flat(self) -> str:
        return flat(self.key) + ": " + flat(self.value)


def flat(item) -> str:
    return item if item.__class__ is str else item.flat()


def layout(item, indent: str, prefix: str, trailer: str, out: list) -> None:
    """Append the black-style lines of `prefix + item + trailer` at `indent`."""
    s = flat(item)
    if len(indent) + len(prefix) + len(s) + len(trailer) <= LINE or item.__class__ is str:
        out.append(indent + prefix + s + trailer)
        return
    if item.__class__ is Kw:
        layout(item.value, indent, prefix + item.name + "=", trailer, out)
        return
    if item.__class__ is Pair:
        if item.value.__class__ is not str and item.key.__class__ is str:
            layout(item.value, indent, prefix + item.key + ": ", trailer, out)
        else:
            layout(item.key, indent, prefix, ": " + flat(item.value) + trailer, out)
        return
    if item.__class__ is Call:
        head, open_, close, items, display = item.head, "(", ")", item.items, False
    else:
        head, open_, close, items, display = "", item.open, item.close, item.items, True
    if not items:
        out.append(indent + prefix + s + trailer)
        return
    inner = indent + "    "
    out.append(indent + prefix + head + open_)
    if len(items) == 1 and not (display and open_ == "("):
        layout(items[0], inner, "", "", out)
    elif not display and len(inner) + len(s) - len(head) - 2 <= LINE:
        out.append(inner + s[len(head) + 1:-1])   # the arguments: the flat call less `head(` and `)`
    else:
        for i in items:   # (an atom is one line: written here, not by a call per item)
            if i.__class__ is str:
                out.append(inner + i + ",")
            else:
                layout(i, inner, "", ",", out)
    out.append(indent + close + trailer)


def black_format(source: str) -> str:
    import black

    return black.format_str(source, mode=black.Mode())
