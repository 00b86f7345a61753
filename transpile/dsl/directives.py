"""`ptx`: the namespace of the DSL. Instructions are attribute chains (`ptx.add.s32`);
directives, comments and layout are methods:

    ptx.style(table, newline="\\n")      # the module's inferred formatting (first line, or the trailer)
    ptx.trivia({key: entry})            # layout exceptions by statement (the --sugar trailer)
    ptx.comment(" text")  ptx.blank()  ptx.text("/* raw comment line */")  ptx.tail("  ")
    ptx.version("9.0")  ptx.target("sm_90a")  ptx.address_size(64)
    ptx.file(1, "k.cu")  ptx.loc(1, 5, 0)  ptx.loc(1, 5, 0, "$L__info_string3", (1, 9, 2))
    ptx.pragma("nounroll")  ptx.alias("a", "b")
    with ptx.entry("k", params=[param.u64("k_param_0")], visible=True, maxntid=(128, 1, 1)): ...
    ptx.func("vprintf", params=[...], returns=[...], extern=True, body=False)
    with ptx.block(): ...           with ptx.section(".debug_info"): ...
    ptx.label("$L__BB0_1")  ptx.data.b8(1, 2, 3)  ptx.calltargets("f")
    ptx.callprototype("_", returns=[...], params=[...])
    ptx.end(newline=False)          # the file has no final newline
"""

from __future__ import annotations

from ptx2py.ptxgrammar.tree import (
    AddressSize,
    Alias,
    Block,
    CallPrototype,
    File,
    Function,
    FunctionHead,
    Label,
    LabelList,
    ParamList,
    PerfDirective,
    Pragma,
    Section,
    SectionData,
    Target,
    Version,
)

from ..names import from_python
from ..style import Style
from . import quiet, recorder
from .errors import DSLError
from .locs import loc_directive
from .locs import spelled as _s
from .notes import note_after
from .operands import to_node
from .ops import LINKAGE, insn, opcode
from .trivia_check import check_comment_text, check_trivia
from .trivia_table import same_line_pad


class _Opened:
    """A `with` block: `{` was recorded on entry; `}` is recorded on exit."""

    __slots__ = ("make", "kw")

    def __init__(self, make, kw):
        self.make, self.kw = make, kw

    def __enter__(self):
        stmt, container = self.make()
        kw = self.kw
        recorder.current().open(stmt, container, kw.get("fmt"), kw.get("indent"), kw.get("lead"))
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            recorder.current().close(self.kw.get("close_indent"), self.kw.get("close_lead"))
        return False


def _noted(stmt, col, note):
    note_after(stmt, col, note)
    return stmt


class _Data:
    """`ptx.data.b8(1, 2)` -> `.b8 1,2` inside a section."""

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        directive = from_python(ident)

        def data(*values, note=None, col=40, fmt=None, indent=None, lead=None):
            """One data row; `note=" text"` writes `// text` after it at column `col`."""
            rec = recorder._current[0] or recorder.current()
            key = None
            if fmt is None and lead is None:
                stmt, key = quiet.data(rec, directive, values, indent)
                if stmt is not None:
                    return stmt if note is None else _noted(stmt, col, note)
            nodes = tuple([to_node(v) for v in values])
            stmt = rec.record(SectionData(directive, nodes), fmt, indent, lead)
            if key is not None:
                quiet.remember(rec, key, stmt)
            if note is not None:
                note_after(stmt, col, note)
            return stmt

        def rows(value_lists):
            """`data(*values)` for each of `value_lists`, in order (the run of rows of a
            section that `transpile.fastrun` finds: the quiet ones without a call each)."""
            rec = recorder._current[0] or recorder.current()
            i, n = 0, len(value_lists)
            while i < n:
                i = quiet.data_rows(rec, directive, value_lists, i)
                if i < n:
                    data(*value_lists[i])
                    i += 1

        data.rows = rows
        setattr(self, ident, data)
        return data


class PTX:
    """The `ptx` object of generated and hand-written modules."""

    def __init__(self):
        self.data = _Data()

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        op = opcode(ident)
        setattr(self, ident, op)
        return op

    insn = staticmethod(insn)

    # --- layout -------------------------------------------------------------------

    def style(self, *preset_and_table, newline="\n"):
        """The module's formatting: `ptx.style("nvcc", {key: trivia, ...})` (a producer
        preset, then the entries that differ from it), or just the table."""
        preset, table = None, None
        for a in preset_and_table:
            if a.__class__ is str:
                preset = a
            else:
                table = a
        if newline not in ("\n", "\r\n", "\r"):
            raise DSLError(f"ptx.style(newline=...) is a line end (\\n, \\r\\n or \\r), not {newline!r}")
        rec = recorder.current()
        rec.style = Style(table, newline, preset)
        rec.key_cache = recorder.style_keys(preset, table, newline)

    def trivia(self, entries: dict):
        """The module's layout exceptions, keyed by statement (`transpile.dsl.trivia_table`):
        the trailer of `--sugar` output, which py2ptx runs before the body."""
        from .trivia_table import TriviaTable

        rec = recorder.current()
        if rec.module_items or rec.taken or rec.lines or rec.tail:
            raise DSLError("ptx.trivia(...) runs before the body: keep it after the line "
                           "'# Layout of the PTX text ...' at the end of the module, and run the file with py2ptx")
        rec.trivia = TriviaTable(entries)

    def comment(self, text: str, indent: str | None = None, inline: str | None = None):
        """A `//` comment line (indented like the next statement unless indent=)."""
        check_comment_text(text)
        if indent is not None:
            check_trivia(indent, "indent")
        if inline is not None:
            check_trivia(inline, "inline")
        rec = recorder._current[0] or recorder.current()
        if inline is None and indent is None and rec.trivia is not None:
            inline = same_line_pad(rec, text)   # the table (or LLVM's column) puts it on the line it ends
        if inline is not None:
            rec.tail += inline + "//" + text
        elif indent is None:
            rec.lines.append(("//", text))
        else:
            rec.add_line(indent + "//" + text)

    def blank(self, spaces: str = ""):
        """An empty line (or one holding only `spaces`)."""
        if spaces.__class__ is not str or spaces.strip(" \t\f"):
            raise DSLError(f"blank() takes spaces and tabs only, not {spaces!r}")
        recorder.current().add_line(spaces)

    def text(self, line: str):
        """A line of other trivia: a block-comment line, a `#` line marker."""
        rec = recorder.current()
        pending = "\n".join([rec.tail, *[ln for ln in rec.lines if ln.__class__ is str], line])
        check_trivia(pending, f"ptx.text({line!r}) after the pending lines: the text", open_comment=True)
        rec.add_line(line)

    def tail(self, text: str):
        """Trivia at the end of the previous statement's line (trailing spaces, /* */)."""
        rec = recorder.current()
        check_trivia(rec.tail + text, "ptx.tail", open_comment=True)
        rec.tail += text

    def end(self, newline: bool = True):
        recorder.current().final_newline = newline

    # --- module directives ---------------------------------------------------------

    def _rec(self, stmt, fmt, indent, lead):
        return recorder.current().record(stmt, fmt, indent, lead)

    def version(self, number, fmt=None, indent=None, lead=None):
        return self._rec(Version(_s(number)), fmt, indent, lead)

    def target(self, *targets, fmt=None, indent=None, lead=None):
        return self._rec(Target(tuple(targets)), fmt, indent, lead)

    def address_size(self, size, fmt=None, indent=None, lead=None):
        return self._rec(AddressSize(_s(size)), fmt, indent, lead)

    def file(self, index, path: str, *extra, fmt=None, indent=None, lead=None):
        return self._rec(File(_s(index), f'"{path}"', tuple(_s(e) for e in extra)), fmt, indent, lead)

    def loc(self, file, line, column, function_name=None, inlined_at=None, offset=None,
            fmt=None, indent=None, lead=None):
        """`.loc 1 5 0` and `.loc 1 5 0, function_name $L__info_string3, inlined_at 1 9 2`:
        `ptx.loc(1, 5, 0, "$L__info_string3", (1, 9, 2))` (keywords work too)."""
        return loc_directive(file, line, column, function_name, inlined_at, offset, fmt, indent, lead)

    def pragma(self, *strings, fmt=None, indent=None, lead=None):
        return self._rec(Pragma(tuple(f'"{s}"' for s in strings)), fmt, indent, lead)

    def alias(self, name, target, fmt=None, indent=None, lead=None):
        return self._rec(Alias(name, target), fmt, indent, lead)

    def label(self, name: str, fmt=None, indent=None, lead=None):
        rec = recorder.current()
        key = None
        if fmt is None and lead is None:
            stmt, key = quiet.label(rec, name, indent)
            if stmt is not None:
                return stmt
        stmt = rec.record(Label(name), fmt, indent, lead)
        if key is not None:
            quiet.remember(rec, key, stmt)
        return stmt

    def calltargets(self, *labels, fmt=None, indent=None, lead=None):
        return self._rec(LabelList(".calltargets", labels), fmt, indent, lead)

    def branchtargets(self, *labels, fmt=None, indent=None, lead=None):
        return self._rec(LabelList(".branchtargets", labels), fmt, indent, lead)

    def callprototype(self, name, returns=None, params=None, fmt=None, indent=None, lead=None):
        r = None if returns is None else ParamList(tuple(returns))
        p = None if params is None else ParamList(tuple(params))
        return self._rec(CallPrototype(r, name, p), fmt, indent, lead)

    # --- functions, blocks, sections -----------------------------------------------

    def _function(self, kind, name, params, returns, directives, body, kw):
        fmt, indent, lead = kw.pop("fmt", None), kw.pop("indent", None), kw.pop("lead", None)
        close = {k: kw.pop(k) for k in ("close_indent", "close_lead") if k in kw}
        linkage, dirs = [], []
        for k, v in kw.items():
            if k in LINKAGE and v is True and not dirs:
                linkage.append("." + k)
            elif v is True:
                dirs.append(PerfDirective("." + k))
            elif v.__class__ is tuple:
                dirs.append(PerfDirective("." + k, tuple(_s(x) for x in v)))
            elif v.__class__ in (int, str):
                dirs.append(PerfDirective("." + k, (_s(v),)))
            else:
                raise DSLError(f"{k}= takes True, an int or a tuple of ints")
        if directives is not None:
            dirs.extend(directives)

        def make():
            head = FunctionHead(
                tuple(linkage), kind, None if returns is None else ParamList(tuple(returns)), name,
                None if params is None else ParamList(tuple(params)), tuple(dirs))
            block = Block(())
            return Function(head, block), block

        if not body:
            head_stmt, _ = make()
            return self._rec(Function(head_stmt.head, None), fmt, indent, lead)
        return _Opened(make, {"fmt": fmt, "indent": indent, "lead": lead, **close})

    def entry(self, name, params=None, returns=None, directives=None, body=True, **kw):
        return self._function(".entry", name, params, returns, directives, body, kw)

    def func(self, name, params=None, returns=None, directives=None, body=True, **kw):
        return self._function(".func", name, params, returns, directives, body, kw)

    def perf(self, name, *values):
        return PerfDirective(name, tuple(_s(v) for v in values))

    def head_pragma(self, *strings):
        return Pragma(tuple(f'"{s}"' for s in strings))

    def block(self, **kw):
        def make():
            b = Block(())
            return b, b
        return _Opened(make, kw)

    def section(self, name, **kw):
        def make():
            s = Section(name, ())
            return s, s
        return _Opened(make, kw)

    def empty_section(self, name, **kw):
        """`.section name { }` with nothing inside: `with ptx.section(name): pass` in one line."""
        with self.section(name, **kw):
            pass

    def block_open(self, fmt=None, indent=None, lead=None):
        """A `{` without a `with` (for blocks nested deeper than Python allows)."""
        b = Block(())
        recorder.current().open(b, b, fmt, indent, lead)

    def block_close(self, indent=None, lead=None):
        recorder.current().close(indent, lead)


ptx = PTX()
