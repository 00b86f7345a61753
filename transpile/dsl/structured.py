"""Readable constructs of `--sugar` Python. Each one records exactly the
statements (and comment lines) the plain DSL would, so the bytes are the same:

    srcmap(38, {1: "k.py"})        # .loc lines carry `// file.py:L:C` at column 38
    at(1, 262, 26).shl.b32(r[63], r[18], 7)   # .loc 1 262 26 then the instruction
    loc(1, 223, 0)                  # a .loc (and its comment) on its own, before a label
    asm.mbarrier.init.shared__cta.b64([r[6]], 1)  # between begin/end inline asm comments
    with inline_asm(): ...          # several instructions in one inline asm block
    with inline_asm(block=True): ...  # nvcc's `{ .reg .pred p; ... }` inside the bracket
    with at(1, 9, 2).inline_asm(): ...  # .loc 1 9 2 (and its comment), then the block
    at(1, 5, 0).asm.bar.sync(0)     # prefixes compose, in order: asm.at(...) puts .loc inside
    at("1:53:3 2:477:5@0").add.s32(r[1], r[2], 1)  # .loc 1 53 3; .loc 2 477 5, function_name
                                    # $L__info_string0, inlined_at 1 53 3; the instruction
    nvasm.mov.u32(r[3], sreg.laneid)  # NVVM's bracket (no blank line before the end comment)
    asm.block.cvt.f32.f16(f[1], rs[1])  # the instruction alone in a `{ }` block, inside the bracket
    asm.mbarrier_wait([r[9]], r[117], form="cutlass")  # a spin-wait block inside the bracket
    data_b8("01 11 00 2508", notes="1: DW_TAG_compile_unit", col=40)  # `.b8` rows
    data_b8("01 Abbreviation Code|11 DW_TAG_compile_unit|01")  # rows with their notes
    banner("nvvm", "CL-36424714", "13.0, V13.0.88", "7.0.1")  # the producer's header comments
    debug_str(L.info_string0, b"_ZN3cub...")  # a .debug_str entry: label, then 40-byte .b8 rows
    debug_strings(b"_ZN3cub...", b"_ZN43...")  # entries $L__info_string0, 1, ... in order

`acc = f[0:64]` (a slice of a register family) is a tuple of registers, i.e. a
`{...}` vector operand.
"""

from __future__ import annotations

import os

from ptxgrammar.tree import IntLiteral, SectionData

from ..style import flatten
from . import recorder
from .directives import ptx
from .errors import DSLError


# --- shared helpers -------------------------------------------------------------------


def line_text(stmt) -> str:
    """The text of a recorded statement's own line (from its indent to its last token)."""
    flat = flatten(stmt, [])
    node, i, _, tok = flat[0]
    parts = [node.trivia[i].rsplit("\n", 1)[-1], tok]
    for node, i, _, tok in flat[1:]:
        parts.append(node.trivia[i])
        parts.append(tok)
    return "".join(parts)


def pad_to(line: str, column: int) -> str:
    """The spaces LLVM puts between a statement and its `//` comment."""
    return " " * (column - len(line)) if len(line) < column else " "


def _state(rec) -> dict:
    st = rec.__dict__.get("_sugar")
    if st is None:
        st = rec.__dict__["_sugar"] = {"srccol": None, "files": None}
    return st


def source_name(path: str) -> str:
    """What LLVM writes for a `.file` path in `// name:line:col`: its base name."""
    return os.path.basename(path)


# --- source locations ---------------------------------------------------------------------


def srcmap(column: int, files: dict) -> None:
    """From here on, `at(...)` also writes LLVM's `// name:line:col` comment at `column`
    (`files`: `.file` index -> the name LLVM writes; the `.file` table comes last)."""
    st = _state(recorder.current())
    st["srccol"] = column
    st["files"] = {str(k): v for k, v in files.items()}


def loc_comment(file: str, line: str, column: str, files: dict):
    name = files.get(str(file))
    return None if name is None else f" {name}:{line}:{column}"


def _record_loc(args, kw):
    stmt = ptx.loc(*args, **kw)
    rec = recorder.current()
    st = _state(rec)
    col = st["srccol"]
    if col is not None:
        text = loc_comment(stmt.file, stmt.line, stmt.column, st["files"])
        if text is None:
            raise DSLError(f"at(): no .file {stmt.file} for the source comment")
        rec.tail += pad_to(line_text(stmt), col) + "//" + text


def _asm_begin():
    ptx.comment(" begin inline asm")


def _asm_end(indent=None):
    ptx.blank()
    ptx.comment(" end inline asm", indent)


def _asm_end_tight(indent=None):
    ptx.comment(" end inline asm", indent)


_ASM_ENDS = (_asm_end, _asm_end_tight)


class _Bound:
    """An instruction chain (`ptx.add.s32`) that runs the prefix's actions around the call."""

    __slots__ = ("_prefix", "_target")

    def __init__(self, prefix, target):
        self._prefix, self._target = prefix, target

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        return _Bound(self._prefix, getattr(self._target, ident))

    def __call__(self, *args, at=None, end_indent=None, **kw):
        """`at=`: the `.loc` chain before everything the prefix writes, as `at(...).` would;
        `end_indent="\t"`: the end comment of `asm.`/`nvasm.` at its own indent."""
        if at is not None:
            loc(at)
        for f in self._prefix.before:
            f()
        r = self._target(*args, **kw)
        for f in self._prefix.after:
            if end_indent is not None and f in _ASM_ENDS:
                f(end_indent)
            else:
                f()
        return r


class Prefix:
    """What goes around one instruction: `.loc` (`at`), inline-asm markers (`asm`), in order."""

    __slots__ = ("before", "after")

    def __init__(self, before=(), after=()):
        self.before, self.after = before, after

    @property
    def asm(self):
        return Prefix(self.before + (_asm_begin,), (_asm_end,) + self.after)

    @property
    def nvasm(self):
        """NVVM's bracket: `// begin inline asm`, the instruction, `// end inline asm` (no blank)."""
        return Prefix(self.before + (_asm_begin,), (_asm_end_tight,) + self.after)

    @property
    def block(self):
        """The instruction alone in a `{ }` block, as nvcc writes one-instruction inline asm."""
        return Prefix(self.before + (ptx.block_open,), (ptx.block_close,) + self.after)

    def at(self, file, line=None, column=None, *rest, **kw):
        """`.loc file line column ...` (and its derived comment under `srcmap`) here;
        `at("1:53:3 2:477:5@0 3:151:9@1")` is a chain of inlined `.loc`s (see `loc_chain`)."""
        if file.__class__ is str and line is None:
            chain = loc_chain(file)
            return Prefix(self.before + tuple((lambda a=a: _record_loc(a, {})) for a in chain), self.after)
        return Prefix(self.before + ((lambda: _record_loc((file, line, column, *rest), kw)),), self.after)

    def inline_asm(self, blank: bool = True, block: bool = False, end_indent: str | None = None, **block_kw):
        """`with at(...).inline_asm():` the prefix's `.loc` before the inline asm bracket."""
        return inline_asm(blank, self, block, end_indent, **block_kw)

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        f = _prefixable().get(ident)
        return _Bound(self, f if f is not None else getattr(ptx, ident))


# calls that are not instructions but go inside a prefix's brackets like one (`asm.mbarrier_wait(...)`)
STATEMENT_CALLS = ("mbarrier_wait",)
_PREFIXABLE: dict = {}


def _prefixable() -> dict:
    """The typed families and STATEMENT_CALLS by name (imported once: they import this module)."""
    if not _PREFIXABLE:
        from . import control
        from .typed import TYPED

        _PREFIXABLE.update(TYPED)
        _PREFIXABLE.update({n: getattr(control, n) for n in STATEMENT_CALLS})
    return _PREFIXABLE


def at(file, line=None, column=None, *rest, **kw) -> Prefix:
    """`.loc file line column ...` (and its derived comment under `srcmap`) before the instruction."""
    return Prefix().at(file, line, column, *rest, **kw)


def loc(file, line=None, column=None, *rest, **kw) -> None:
    """A `.loc` line on its own (before a label, say) with its `srcmap` comment;
    `loc("1:53:3 2:477:5@0")` for a chain, as in `at(...)`."""
    for f in at(file, line, column, *rest, **kw).before:
        f()


def loc_chain(chain: str) -> list:
    """The `.loc` argument tuples of an inline chain, one frame per space-separated item:
    `F:L:C` is `.loc F L C`; `F:L:C@N` adds `function_name $L__info_stringN, inlined_at`
    the previous frame; `F:L:C@N^f:l:c` names the `inlined_at` location itself."""
    out, prev = [], None
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


asm = Prefix().asm
nvasm = Prefix().nvasm


class inline_asm:
    """`with inline_asm():` the `// begin inline asm` ... `// end inline asm` bracket
    (`blank=False`: NVVM's, without the blank line before the end comment;
    `block=True`: the body is one `{ }` block inside the bracket, as nvcc writes inline
    asm that declares registers, with that block's layout keywords `fmt=`, `indent=`,
    `lead=`, `close_indent=`, `close_lead=`; `end_indent="\t"`: the end comment's own indent).
    A register type keyword declares the block's registers first and `as` binds them:
    `with inline_asm(block=True, pred="p") as p_2:` is `{ .reg .pred p; ...`
    (`f16=("low", "high")`: one declaration of two names, bound as a tuple)."""

    def __init__(self, blank: bool = True, prefix: Prefix | None = None, block: bool = False,
                 end_indent: str | None = None, fmt=None, indent=None, lead=None, close_indent=None,
                 close_lead=None, **decls):
        self.blank, self.prefix, self.block, self.end_indent = blank, prefix, block, end_indent
        self.open_kw, self.close_kw = (fmt, indent, lead), (close_indent, close_lead)
        if decls and not block:
            raise DSLError(f"inline_asm({', '.join(decls)}=...): register declarations need block=True")
        self.decls = decls

    def __enter__(self):
        for f in self.prefix.before if self.prefix is not None else ():
            f()
        _asm_begin()
        if self.block:
            ptx.block_open(*self.open_kw)
        if not self.decls:
            return self
        from .ops import reg

        bound = []
        for kind, names in self.decls.items():
            bound.append(getattr(reg, kind)(*((names,) if names.__class__ is str else names)))
        return bound[0] if len(bound) == 1 else tuple(bound)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            if self.block:
                ptx.block_close(*self.close_kw)
            (_asm_end if self.blank else _asm_end_tight)(self.end_indent)
            for f in self.prefix.after if self.prefix is not None else ():
                f()
        return False


# --- producer banners ------------------------------------------------------------------------

# The comment block a producer writes at the top of a module; `{}` are its fields.
BANNERS = {
    "nvvm": ["", " Generated by NVIDIA NVVM Compiler", "", " Compiler Build ID: {}",
             " Cuda compilation tools, release {}", " Based on NVVM {}", ""],
    "llvm": ["", " Generated by LLVM NVPTX Back-End", ""],
}


def banner(producer: str, *fields: str) -> None:
    """`banner("nvvm", "CL-36424714", "13.0, V13.0.88", "7.0.1")`: the producer's header
    comment lines (BANNERS) with these fields, in order."""
    lines = BANNERS.get(producer)
    if lines is None:
        raise DSLError(f"banner: no producer {producer!r} (one of {', '.join(BANNERS)})")
    values = iter(fields)
    for line in lines:
        parts = line.split("{}")
        text = parts[0]
        for part in parts[1:]:
            text += next(values) + part
        ptx.comment(text)


# --- section data -------------------------------------------------------------------------


def _parse_notes(notes: str) -> dict:
    out = {}
    if not notes:
        return out
    for item in notes.split("|"):
        k, _, text = item.partition(":")
        out[int(k)] = text
    return out


def _annotated_rows(rows: str):
    """`"01 Abbreviation Code|11 DW_TAG_compile_unit|00"` -> hex groups and {row: " note"}."""
    groups, note = [], {}
    for k, item in enumerate(rows.split("|")):
        group, sep, text = item.partition(" ")
        groups.append(group)
        if sep:
            note[k] = " " + text
    return groups, note


def data_b8(rows: str, notes: str = "", col: int = 40) -> None:
    """Rows of `.b8` byte data: `rows` is hex, one space-separated group per row;
    `notes` is `row:comment|...` (each written at column `col` as `//comment`).
    With `|` in `rows`, each row is `hex` or `hex note` (`//` + space + note)."""
    rec = recorder.current()
    if "|" in rows:
        groups, note = _annotated_rows(rows)
    else:
        groups, note = rows.split(" "), _parse_notes(notes)
    for k, group in enumerate(groups):
        data = bytes.fromhex(group)
        stmt = rec.record(SectionData(".b8", tuple([IntLiteral(str(b)) for b in data])))
        text = note.get(k)
        if text is not None:
            rec.tail += pad_to(line_text(stmt), col) + "//" + text


def debug_str(label, text: bytes, row: int = 40) -> None:
    """A `.debug_str` entry as nvcc writes it: `label:`, then `text` and its terminating 0
    as `.b8` rows of `row` bytes (the last one shorter)."""
    ptx.label(label)
    data = bytes(text) + b"\0"
    rec = recorder.current()
    for k in range(0, len(data), row):
        rec.record(SectionData(".b8", tuple([IntLiteral(str(b)) for b in data[k:k + row]])))


def debug_strings(*texts: bytes, first: int = 0, row: int = 40) -> None:
    """nvcc's `.debug_str` table: `debug_str("$L__info_string<first + i>", text_i, row)` for each."""
    for i, text in enumerate(texts):
        debug_str(f"$L__info_string{first + i}", text, row)


__all__ = ["srcmap", "at", "loc", "asm", "nvasm", "inline_asm", "data_b8", "banner", "debug_str", "debug_strings"]
