"""Source locations: the `.loc` directive, inline `.loc` chains and, under `srcmap`, LLVM's
`// name:line:col` comment after each one. Instructions (`at=`), `ptx.loc` and the `--sugar`
prefixes (`at(...)`, `loc(...)`) all record through here.

    srcmap(38, {1: "k.py"})   # from here on, .loc lines carry `// k.py:L:C` at column 38
    loc(223, 0)               # one .loc line (`.loc 1 223 0`) and its comment
    loc("1:53:3 2:477:5@0")   # a chain of inlined .loc lines (see loc_chain)
    kernels_215 = inlined(fn=0, at=(1, 215, 9))   # an inlined frame, named once per module
    at(207, 12, kernels_215)  # .loc 1 207 12, function_name $L__info_string0, inlined_at 1 215 9
"""

from __future__ import annotations

import os

from ptx2py.ptxgrammar.tree import Loc

from . import quiet, recorder
from .errors import DSLError
from .notes import note_after


def spelled(v) -> str:
    """A directive argument as PTX spells it (ints are written as Python prints them)."""
    return v if v.__class__ is str else str(v)


def loc_directive(file, line, column, function_name=None, inlined_at=None, offset=None,
                  fmt=None, indent=None, lead=None):
    """Record `.loc file line column[, function_name F, inlined_at f l c]` and return it."""
    rec = recorder.current()
    _state(rec)["loc"] = (file, line, column, function_name, inlined_at, offset)
    key = None
    if fmt is None and lead is None:
        stmt, key = quiet.loc(rec, file, line, column, function_name, inlined_at, offset, indent)
        if stmt is not None:
            return stmt
    inl = None if inlined_at is None else tuple(spelled(x) for x in inlined_at)
    off = None if offset is None else spelled(offset)
    stmt = rec.record(Loc(spelled(file), spelled(line), spelled(column), function_name, off, inl), fmt, indent, lead)
    if key is not None:
        quiet.remember(rec, key, stmt)
    return stmt


def _state(rec) -> dict:
    st = rec.__dict__.get("_sugar")
    if st is None:
        st = rec.__dict__["_sugar"] = {"srccol": None, "files": None, "loc": None}
    return st


def source_name(path: str) -> str:
    """What LLVM writes for a `.file` path in `// name:line:col`: its base name."""
    return os.path.basename(path)


def srcmap(column: int, files: dict) -> None:
    """From here on, `at(...)` also writes LLVM's `// name:line:col` comment at `column`
    (`files`: `.file` index -> the name LLVM writes; the `.file` table comes last)."""
    st = _state(recorder.current())
    st["srccol"] = column
    st["files"] = {str(k): v for k, v in files.items()}


def loc_comment(file: str, line: str, column: str, files: dict):
    name = files.get(str(file))
    return None if name is None else f" {name}:{line}:{column}"


def record_loc(args, kw) -> None:
    """One `.loc` line, with its `srcmap` comment when a source map is on."""
    stmt = loc_directive(*args, **kw)
    st = _state(recorder.current())
    col = st["srccol"]
    if col is not None:
        text = loc_comment(stmt.file, stmt.line, stmt.column, st["files"])
        if text is None:
            raise DSLError(f"at(): no .file {stmt.file} for the source comment")
        note_after(stmt, col, text)


def loc_again() -> None:
    """The current `.loc` (the last one recorded, whatever wrote it) once more, with its
    `srcmap` comment: what LLVM writes inside an inline-asm bracket (`asm.here.<insn>`)."""
    args = _state(recorder.current())["loc"]
    if args is None:
        raise DSLError("asm.here: no .loc before it to repeat (give the location: asm.at(line, col).<insn>)")
    file, line, column, function_name, inlined_at, offset = args
    record_loc((file, line, column, function_name, inlined_at), {} if offset is None else {"offset": offset})


def loc_chain(chain: str) -> list:
    """The `.loc` argument tuples of an inline chain, one frame per space-separated item:
    `F:L:C` is `.loc F L C`; `F:L:C@N` adds `function_name $L__info_stringN, inlined_at`
    the previous frame; `F:L:C@N^f:l:c` names the `inlined_at` location itself."""
    out: list[tuple] = []
    prev: tuple | None = None
    for frame in chain.split(" "):
        here, _, fn = frame.partition("@")
        loc = tuple(int(x) for x in here.split(":"))
        if not fn:
            out.append(loc)
        else:
            n, _, via = fn.partition("^")
            inl = tuple(int(x) for x in via.split(":")) if via else prev
            if inl is None:
                raise DSLError(f"at({chain!r}): {frame} is inlined at nothing")
            out.append(loc + (f"$L__info_string{int(n)}", inl))
        prev = loc
    return out


class LocCall:
    """One `.loc` line to record (a prefix's action); `frame`: its (file, line, column)."""

    __slots__ = ("args", "kw", "frame")

    def __init__(self, args, kw):
        self.args, self.kw = args, kw
        self.frame = tuple(args[:3])

    def __call__(self):
        record_loc(self.args, self.kw)


DEFAULT_FILE = 1  # `at(line=, col=)` without `file=`: `.file 1`, the kernel's own source


class Frame:
    """An inlined frame: the `.file`, the `function_name` string index and the `inlined_at`
    location that the `.loc`s of one inlined call share (`inlined(fn=0, at=(1, 215, 9))`)."""

    __slots__ = ("file", "fn", "inlined_at")

    def __init__(self, file, fn, inlined_at):
        self.file, self.fn, self.inlined_at = file, fn, inlined_at

    def __repr__(self):
        file = "" if self.file == DEFAULT_FILE else f", file={self.file}"
        return f"inlined(fn={self.fn}, at={self.inlined_at}{file})"


def inlined(*, fn, at, file=DEFAULT_FILE) -> Frame:
    """`kernels_215 = inlined(fn=0, at=(1, 215, 9))`: the frame of a function inlined at
    `.loc 1 215 9` (`at`: file, line, column), its name `$L__info_string0` (`fn`), its own
    `.loc`s in `.file 1` (`file=`); `at(207, 12, kernels_215)` is then `.loc 1 207 12,
    function_name $L__info_string0, inlined_at 1 215 9`. Records nothing itself."""
    if fn.__class__ is not int or fn < 0:
        raise DSLError(f"inlined(fn={fn!r}): fn is the index N of $L__info_stringN")
    if at.__class__ is not tuple or len(at) != 3 or not all(x.__class__ is int for x in at):
        raise DSLError(f"inlined(at={at!r}): at is the call site (file, line, column)")
    if file.__class__ is not int:
        raise DSLError(f"inlined(file={file!r}): file is a .file index")
    return Frame(file, fn, at)


def _framed(line, col, frame, kw) -> LocCall:
    """`at(207, 12, kernels_215)`: a `.loc` in the named inlined frame `frame`."""
    if set(kw) - {"offset"}:
        raise DSLError(f"at({line}, {col}, {frame!r}): the frame gives file, fn and inlined_at "
                       f"(not {', '.join(sorted(set(kw) - {'offset'}))}=)")
    return typed_loc(line=line, col=col, file=frame.file, fn=frame.fn, inlined_at=frame.inlined_at, **kw)


def typed_loc(enclosing=None, *, line, col, file=DEFAULT_FILE, fn=None, inlined_at=None, offset=None) -> LocCall:
    """`at(439, 5)` (or `at(line=439, col=5)`): `.loc 1 439 5`; `file=2` another `.file`; `fn=0`: inlined,
    `function_name $L__info_string0, inlined_at` the enclosing frame (the previous `.at(...)`
    of the chain) or `inlined_at=(file, line, col)`; `offset=`: `function_offset`."""
    args = [file, line, col]
    if fn is not None:
        if inlined_at is None:
            inlined_at = enclosing
        if inlined_at is None:
            raise DSLError(f"at(line={line}, col={col}, fn={fn}): inlined at nothing: "
                           "give inlined_at=(file, line, col)")
        args += [f"$L__info_string{int(fn)}", tuple(inlined_at)]
    elif inlined_at is not None:
        raise DSLError("at(inlined_at=...) needs fn= (the inlined function's name string)")
    return LocCall(tuple(args), {} if offset is None else {"offset": offset})


def loc_calls(*args, enclosing=None, **kw) -> tuple:
    """What `at(...)` records, as zero-argument calls, one per `.loc` line: `at(5, 0)` (line,
    column) or `at(line=5, col=0)` is one (see `typed_loc`); the older forms `at(1, 5, 0)`
    (file, line, column) and `at("1:53:3 2:477:5@0")` too; `at(207, 12, frame)` is a `.loc` in a
    named inlined frame (`inlined`)."""
    if len(args) == 2:
        return (typed_loc(enclosing, line=args[0], col=args[1], **kw),)
    if len(args) == 3 and args[2].__class__ is Frame:
        return (_framed(*args, kw),)
    if not args:
        return (typed_loc(enclosing, **kw),)
    file, line, column, *rest = (*args, None, None)[:max(3, len(args))]
    if file.__class__ is str and line is None:
        return tuple(LocCall(a, {}) for a in loc_chain(file))
    return (LocCall((file, line, column, *rest), kw),)


def loc(*args, **kw) -> None:
    """A `.loc` line on its own (before a label, say) with its `srcmap` comment:
    `loc(97, 5)`, as in `at(...)`."""
    for record in loc_calls(*args, **kw):
        record()


def run_locs(at) -> None:
    """An instruction's `at=` keyword: a prefix (`at=at(18, 7).at(...)`), the arguments of
    one `at(...)` as a tuple (`inside=(176, 15)`, as short as fits a line) or the older string."""
    before = getattr(at, "before", None)
    if before is not None:
        for f in before:
            f()
    elif at.__class__ is tuple:
        loc(*at)
    else:
        loc(at)
