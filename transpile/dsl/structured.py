"""Readable constructs of `--sugar` Python. Each one records exactly the
statements (and comment lines) the plain DSL would, so the bytes are the same:

    srcmap(38, {1: "k.py"})        # .loc lines carry `// file.py:L:C` at column 38
    at(262, 26).shl.b32(r[63], r[18], 7)   # .loc 1 262 26 (line, column) then the instruction
    loc(223, 0)            # a .loc (and its comment) on its own, before a label
    asm.mbarrier.init.shared__cta.b64([r[6]], 1)  # between begin/end inline asm comments
    with asm(): ...                 # several instructions in one inline asm bracket
    with asm(block=True): ...       # nvcc's `{ .reg .pred p; ... }` inside the bracket
    with at(9, 2).asm(): ...        # .loc 1 9 2 (and its comment), then the bracket
    asm.here.mma_sync...(...)       # the bracket, the current .loc again inside it, then the instruction
    at(5, 0).asm.bar.sync(0)        # prefixes compose, in order: asm.at(...) puts .loc inside
    at(53, 3).at(477, 5, file=2, fn=0).add.s32(r[1], r[2], 1)
                                    # .loc 1 53 3; .loc 2 477 5, function_name
                                    # $L__info_string0, inlined_at 1 53 3; the instruction
    kernels_215 = inlined(fn=0, at=(1, 215, 9))  # a named inlined frame (module level)
    at(207, 12, kernels_215).max.f32(r[3], r[2], r[1])  # .loc 1 207 12, function_name
                                    # $L__info_string0, inlined_at 1 215 9; the instruction
    label(L.tmp15).at(207, 12, kernels_215).max.f32(r[3], r[2], r[1])
                                    # $L__tmp15: (a debug label, no branch goes there),
                                    # then the .loc, then the instruction
    scope_labels()                  # (a function's first statement) LLVM's `$L__tmpN:` before
                                    # each change of inlined call, written by the DSL
    nvasm.mov.u32(r[3], sreg.laneid)  # NVVM's bracket (no blank line before the end comment)
    with nvasm(): ...               # NVVM's bracket around several statements
    asm.block.cvt.f32.f16(f[1], rs[1])  # the instruction alone in a `{ }` block, inside the bracket
    asm.mbarrier_wait([r[9]], r[117], form="cutlass")  # a spin-wait block inside the bracket
    data_b8("01 11 00 2508", notes="1: DW_TAG_compile_unit", col=40)  # `.b8` rows
    data_b8("01 Abbreviation Code|11 DW_TAG_compile_unit|01")  # rows with their notes
    banner("nvvm", "CL-36424714", "13.0, V13.0.88", "7.0.1")  # the producer's header comments
    debug_str(L.info_string0, b"_ZN3cub...")  # a .debug_str entry: label, then 40-byte .b8 rows
    debug_strings(b"_ZN3cub...", b"_ZN43...")  # entries $L__info_string0, 1, ... in order

`asm` is the one spelling of inline asm, `asm.<insn>(...)` for one statement and `with asm():`
for several; `with inline_asm():` (the bracket's class) is the same bracket, spelled longer.

`acc = f[0:64]` (a slice of a register family) is a tuple of registers, i.e. a
`{...}` vector operand.
"""

from __future__ import annotations

from ptx2py.ptxgrammar.tree import IntLiteral, SectionData

from . import control, recorder
from .directives import ptx
from .errors import DSLError
from .locs import (  # noqa: F401
    Frame,
    LocCall,
    inlined,
    loc,
    loc_again,
    loc_calls,
    loc_chain,
    loc_comment,
    record_loc,
    run_locs,
    source_name,
    srcmap,
)
from .notes import line_text, note_after, pad_to  # noqa: F401  (also used from here by sugar/)
from .ops import reg
from .scopelabels import ScopeRule
from .typed import TYPED


def _asm_begin():
    ptx.comment(" begin inline asm")


def _asm_end(indent=None):
    ptx.blank()
    ptx.comment(" end inline asm", indent)


def _asm_end_tight(indent=None):
    ptx.comment(" end inline asm", indent)


_ASM_ENDS = (_asm_end, _asm_end_tight)


_HERE = object()  # `inside=` not given: the prefix says (`here`: the current `.loc`; else none)


class _Bound:
    """An instruction chain (`ptx.add.s32`) that runs the prefix's actions around the call."""

    __slots__ = ("_prefix", "_target")

    def __init__(self, prefix, target):
        self._prefix, self._target = prefix, target

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        return _Bound(self._prefix, getattr(self._target, ident))

    def __call__(self, *args, at=None, inside=_HERE, end_indent=None, **kw):
        """`at=`: the `.loc` chain before everything the prefix writes, as `at(...).` would;
        `inside=`: the `.loc` chain just before the instruction, inside the prefix's brackets,
        as `asm.at(...).` would (`cp_async = asm.cp.async_...; cp_async(..., inside=at(241, 13))`);
        under a `here` prefix (`cp_async = asm.here.cp.async_...`) it says where instead of the
        current `.loc`, and `inside=None` writes no `.loc` there;
        `end_indent="\t"`: the end comment of `asm.`/`nvasm.` at its own indent."""
        if at is not None:
            run_locs(at)
        for f in self._prefix.before:
            if f is not loc_again or inside is _HERE:
                f()
            elif inside is not None:
                run_locs(inside)
        if inside is not _HERE and inside is not None and loc_again not in self._prefix.before:
            run_locs(inside)
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
    def here(self):
        """The current `.loc` (the last one recorded) once more here: `asm.here.mma_sync...`
        is the bracket, then the `.loc` the code before it left, as LLVM repeats it inside
        inline asm. The `.loc` follows the call: moved after another `at(...)`, it repeats
        that one, as Triton would write it there. An `inside=` keyword replaces it."""
        return Prefix(self.before + (loc_again,), self.after)

    @property
    def block(self):
        """The instruction alone in a `{ }` block, as nvcc writes one-instruction inline asm."""
        return Prefix(self.before + (ptx.block_open,), (ptx.block_close,) + self.after)

    def at(self, *args, **kw):
        """`.loc` (and its derived comment under `srcmap`) here: `at(439, 5)` (line, column; or `at(line=439, col=5)`),
        with
        `file=`, `fn=`, `inlined_at=`, `offset=` (see `locs.typed_loc`); `at(...).at(477, 5,
        file=2, fn=0)` is inlined at the frame before it."""
        prev = next((f.frame for f in reversed(self.before) if f.__class__ is LocCall), None)
        return Prefix(self.before + loc_calls(*args, enclosing=prev, **kw), self.after)

    def label(self, name):
        """`label(L.tmp15).at(...).<insn>`: the label `$L__tmp15:` here, then the rest of the
        prefix and the instruction: LLVM's debug labels (`DW_AT_low_pc` of an inlined call),
        which no branch targets, written on the line of the instruction they mark."""
        if name.__class__ is not str or not name:
            raise DSLError(f"label({name!r}): a label name (L.tmp15 or \"$L__tmp15\"), before an instruction")
        return Prefix(self.before + (lambda: ptx.label(name),), self.after)

    def inline_asm(self, blank: bool = True, block: bool = False, end_indent: str | None = None, **block_kw):
        """`with at(...).inline_asm():` the prefix's `.loc` before the inline asm bracket."""
        return inline_asm(blank, self, block, end_indent, **block_kw)

    def __call__(self, **kw):
        """`with asm():`, `with nvasm(block=True):`, `with at(...).asm():`: the bracket this
        prefix ends with (`asm`/`nvasm`) around several statements, the prefix's `.loc` first;
        `with asm.here():` writes the current `.loc` again first inside the bracket."""
        here = self.before[-1:] == (loc_again,)
        before = self.before[:-1] if here else self.before
        if not before or before[-1] is not _asm_begin or not self.after or self.after[0] not in _ASM_ENDS:
            raise DSLError("only `asm(...)`/`nvasm(...)` open a bracket of statements (`with asm():`)")
        kw.setdefault("blank", self.after[0] is _asm_end)
        return inline_asm(prefix=Prefix(before[:-1], self.after[1:]), here=here, **kw)

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        f = PREFIXABLE.get(ident)
        return _Bound(self, f if f is not None else getattr(ptx, ident))


# calls that are not instructions but go inside a prefix's brackets like one (`asm.mbarrier_wait(...)`)
STATEMENT_CALLS = ("mbarrier_wait",)
# what a prefix's attribute names besides `ptx.<opcode>`: the typed families and STATEMENT_CALLS
PREFIXABLE = {**TYPED, **{name: getattr(control, name) for name in STATEMENT_CALLS}}


def at(*args, **kw) -> Prefix:
    """`.loc` (and its derived comment under `srcmap`) before the instruction: `at(439, 5)`."""
    return Prefix().at(*args, **kw)


def label(name) -> Prefix:
    """The label `name:` before the instruction: `label(L.tmp15).at(207, 12).max.f32(...)`."""
    return Prefix().label(name)


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
    (`f16=("low", "high")`: one declaration of two names, bound as a tuple);
    `here=True` (`with asm.here():`): the current `.loc` again just after the begin comment."""

    def __init__(self, blank: bool = True, prefix: Prefix | None = None, block: bool = False,
                 end_indent: str | None = None, fmt=None, indent=None, lead=None, close_indent=None,
                 close_lead=None, here: bool = False, **decls):
        self.blank, self.prefix, self.block, self.end_indent = blank, prefix, block, end_indent
        self.here = here
        self.open_kw, self.close_kw = (fmt, indent, lead), (close_indent, close_lead)
        if decls and not block:
            raise DSLError(f"inline_asm({', '.join(decls)}=...): register declarations need block=True")
        self.decls = decls

    def __enter__(self):
        for f in self.prefix.before if self.prefix is not None else ():
            f()
        _asm_begin()
        if self.here:
            loc_again()
        if self.block:
            ptx.block_open(*self.open_kw)
        if not self.decls:
            return self
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
    out: dict = {}
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
            note_after(stmt, col, text)


def debug_str(label, text: bytes, row: int = 40, offset: int | None = None) -> None:
    """A `.debug_str` entry as nvcc writes it: `label:`, then `text` and its terminating 0
    as `.b8` rows of `row` bytes (the last one shorter). `offset=N`: LLVM's note on the first
    row, `// string offset=N ; <text>` at column 40 (Triton writes one byte a row: `row=1`)."""
    ptx.label(label)
    data = bytes(text) + b"\0"
    rec = recorder.current()
    for k in range(0, len(data), row):
        stmt = rec.record(SectionData(".b8", tuple([IntLiteral(str(b)) for b in data[k:k + row]])))
        if k == 0 and offset is not None:
            note_after(stmt, 40, llvm_string_note(offset, text))


def llvm_string_note(offset: int, text: bytes) -> str:
    """LLVM's comment on the first row of a `.debug_str` entry (after the `//`)."""
    return f" string offset={offset} ; {bytes(text).decode('latin-1')}"


def debug_strings(*texts: bytes, first: int = 0, row: int = 40) -> None:
    """nvcc's `.debug_str` table: `debug_str("$L__info_string<first + i>", text_i, row)` for each."""
    for i, text in enumerate(texts):
        debug_str(f"$L__info_string{first + i}", text, row)


def source_files(*paths: str, first: int = 1) -> None:
    """The `.file` table: `ptx.file(first + i, path_i)` for each path, in order."""
    if first.__class__ is not int or first < 0:
        raise DSLError(f"source_files(first=...) is a .file index, not {first!r}")
    for i, path in enumerate(paths):
        if path.__class__ is not str:
            raise DSLError(f"source_files() takes file paths (str), not {type(path).__name__}")
        ptx.file(first + i, path)


def scope_labels(first: int = 0) -> None:
    """From here to the end of the function: LLVM's `$L__tmpN:` labels at each change of debug
    scope are written by the DSL (`transpile/dsl/scopelabels.py`); `first`: N of the first one, where no
    `$L__tmp` label of the function comes before it."""
    rec = recorder.current()
    if len(rec.stack) < 2:
        raise DSLError("scope_labels() belongs in a function body")
    if first.__class__ is not int or first < 0:
        raise DSLError(f"scope_labels(first=...) is a label number (0, 1, ...), not {first!r}")
    rec.scope_rule = ScopeRule(first)


__all__ = ["srcmap", "scope_labels", "at", "loc", "label", "inlined", "asm", "nvasm", "inline_asm", "data_b8",
           "banner", "debug_str", "debug_strings",
           "source_files"]
