"""The recorder: collects statements as the DSL Python runs and fills in trivia.

Each statement call builds its node with ``trivia=None``; ``record`` then gives
every token the trivia the module's Style predicts for its position (see
``transpile.style``), except positions named in the call's ``fmt={index: text}``
(index into the statement's tokens, in source order). The statement's leading
trivia is assembled from the pending ``tail``/comment/blank lines, the newline
and the indent (``indent=`` overrides the predicted one; ``lead=`` gives the
whole leading text for a statement that shares a line with the previous one).
"""

from __future__ import annotations

import gc

from ptx2py.ptxgrammar.tree import Function, Instruction, Label, Loc, Module, VarDecl

from ..style import (
    SAME_LINE,
    Style,
    apply_plan,
    asm_context,
    close_key,
    flatten,
    position_keys,
    prev_tag,
    shape_nodes,
    trivia_plan,
)
from .scopelabels import ScopeRule
from .trivia_check import check_trivia
from .trivia_table import END, TriviaTable, comment_column, merge_lines

# Formatting predictions per statement shape for the default style, shared by
# every recorder that uses it (programs that build many modules, e.g. kernelir).
_DEFAULT_STYLE_KEYS: dict = {}
_SCOPED = frozenset({Instruction, Label, Loc})   # what ScopeRule reads
# ... and for the styles `ptx.style(...)` set, by the style's arguments: a module run
# again (or a module of the same producer) predicts from the shapes already seen.
_STYLE_KEYS: dict = {}
_MAX_STYLES = 32


def style_keys(preset, table, newline: str) -> dict:
    """The shared shape predictions of a `ptx.style(preset, table, newline=)` style."""
    try:
        key = (preset, newline, tuple((table or {}).items()))
        hash(key)
    except (TypeError, AttributeError):   # an odd table: its own cache (the entries are checked as they are used)
        return {}
    keys = _STYLE_KEYS.get(key)
    if keys is None:
        if len(_STYLE_KEYS) >= _MAX_STYLES:
            del _STYLE_KEYS[next(iter(_STYLE_KEYS))]
        keys = _STYLE_KEYS[key] = {}
    return keys


class Recorder:
    def __init__(self, style: Style | None = None):
        self.style = style or Style()
        self.module_items: list = []
        self.stack: list = [self.module_items]
        self.items = self.module_items
        self.tail = ""
        self.lines: list = []
        self.at_start = True
        self.final_newline = True
        self.key_cache: dict = _DEFAULT_STYLE_KEYS if style is None else {}
        self.gc_was_enabled = False  # set by begin(): end() re-enables the GC then
        self.asm = False  # inside `// begin inline asm` ... `// end inline asm`
        self.prev_lead = ""  # the previous statement's L value (see style.position_keys)
        self.checker: InstructionChecker | None = None  # set by begin(check=True)
        self.scope_rule: ScopeRule | None = None  # scope_labels() scope_labels() in the open function (scopelabels.py)
        self.trivia: TriviaTable | None = None  # a TriviaTable (`ptx.trivia`, the trailer of --sugar output)
        self.n_after = 0       # pending lines that are the previous statement's "after" lines
        self.last_key = None   # the trivia key of the statement just recorded
        self.lval = ""         # the L value its shape predicted (for `quiet.keep`)
        self.open_keys: list = []
        self.keep_all = False  # set by mark(): take_finished() then takes nothing
        self.taken = False     # statements were taken out by take_finished()

    # --- leading trivia ------------------------------------------------------------

    def lead(self, indent: str) -> str:
        nl = self.style.newline
        lines = self.lines
        if len(lines) == 1:     # (the usual: one comment line)
            self.lines = []
            line = lines[0]
            body = (line if line.__class__ is str else indent + "//" + line[1]) + nl
        elif lines:
            self.lines = []
            body = nl.join([ln if ln.__class__ is str else indent + "//" + ln[1] for ln in lines]) + nl
        else:
            body = ""
        if self.at_start:
            self.at_start = False
            text = body + indent
        else:
            text = self.tail + (nl + body if body else nl) + indent
        self.tail = ""
        return text

    def lead_for(self, predicted: str) -> str:
        """Leading trivia from a predicted L value: an indent, or SAME_LINE + the text
        of a statement sharing the previous line (only when nothing is pending)."""
        if predicted[:1] == "\n":  # predicted empty lines, then the indent
            indent = predicted.lstrip("\n")
            self.lines.extend([""] * (len(predicted) - len(indent)))
            self.prev_lead = indent
            return self.lead(indent)
        if predicted[:1] != SAME_LINE:
            self.prev_lead = predicted
            return self.lead(predicted)
        if self.at_start or self.lines or self.tail:
            self.prev_lead = ""
            return self.lead("")
        self.prev_lead = predicted
        return predicted[1:]

    def pending_text(self) -> str:
        """The pending tail and comment lines, for finding inline-asm markers."""
        lines = self.lines
        if len(lines) == 1 and not self.tail:   # (the usual: one comment line)
            line = lines[0]
            return "\n" + (line if line.__class__ is str else line[1])
        return "\n".join([self.tail, *[ln if ln.__class__ is str else ln[1] for ln in lines]])

    def add_line(self, line) -> None:
        self.lines.append(line)

    # --- statements ----------------------------------------------------------------

    # --- the trivia table (layout kept out of the body) -------------------------------

    def table_entry(self, key, at_function: bool = False) -> dict:
        """The table's entry for `key`, its lines merged into the pending ones (`at_function`:
        before a function or its `}`, where LLVM puts a comment at its column)."""
        table = self.trivia
        entry = table.entry(key) if key is not None else {}  # type: ignore[union-attr]  # a key comes from the table
        after, body = self.lines[:self.n_after], self.lines[self.n_after:]
        self.n_after = 0
        lines = entry.get("lines")
        if lines or body:
            body = merge_lines(lines, body, comment_column(self.style), at_function)
        self.lines = after + body if after else body
        tail = entry.get("tail")
        if tail:
            self.tail = tail + self.tail
        return entry

    def push_after(self, entry) -> None:
        after = entry.get("after")
        if after:
            self.lines.extend(after)
            self.n_after = len(self.lines)

    def record(self, stmt, fmt=None, indent=None, lead=None, append=True):
        """Give `stmt` its trivia and append it to the open container."""
        if self.scope_rule is not None and append:
            self.scope_label(stmt)
        depth = len(self.stack) - 1
        entry = None
        if self.trivia is not None:
            self.last_key = key = self.trivia.keys.key(stmt)
            entry = self.table_entry(key, depth == 0 and stmt.__class__ is Function)
            if entry:
                if "fmt" in entry:
                    fmt = {**entry["fmt"], **(fmt or {})}
                if indent is None and lead is None:
                    indent, lead = entry.get("indent"), entry.get("lead")
        clean = (not entry and fmt is None and lead is None and indent is None
                 and not (self.lines or self.tail or self.at_start))
        sig = [depth, (self.asm, self.prev_lead)]
        nodes = []
        shape_nodes(stmt, sig, nodes)
        sig = tuple(sig)
        hit = self.key_cache.get(sig)
        if clean and hit is not None and hit[2] is not None:
            # the common case: nothing pending, nothing explicit -- the shape fixes every
            # trivia, the lead included, and the L value the next statement sees
            values, prev = hit[2]
            apply_plan(nodes, hit[1], values)
            self.prev_lead = prev
            self.lval = hit[0][0]
            if self.checker is not None:
                self.checker.see(stmt)
            if append:
                self.items.append(stmt)
            return stmt
        if lead is not None:
            check_trivia(lead, "lead")
            self.asm = asm_context(lead, self.asm)
        elif self.lines or self.tail:
            self.asm = asm_context(self.pending_text(), self.asm)
        if indent is not None:
            check_trivia(indent, "indent")
        if sig[1][0] != self.asm:   # a pending `begin inline asm` changed the shape
            sig = (sig[0], (self.asm, sig[1][1]), *sig[2:])
            hit = self.key_cache.get(sig)
        if hit is None:
            predict = self.style.predict
            hit = [[predict(k) for k in position_keys(flatten(stmt, []), depth, sig[1])],
                   trivia_plan(stmt, nodes), None]
            for v in hit[0][1:]:     # once per shape: the ptx.style table's spacing is trivia
                check_trivia(v, "a ptx.style entry")
            self.key_cache[sig] = hit
        values, plan = hit[0], hit[1]
        self.lval = values[0]
        if lead is None:
            lead = self.lead_for(values[0] if indent is None else indent)
        else:
            self.prev_lead = SAME_LINE + lead
            if self.at_start:
                self.at_start = False
        check_trivia(lead, "the trivia before this statement (ptx.text/tail/comment lines, indent=, lead=)")
        self.prev_lead = prev_tag(stmt, self.asm, self.prev_lead)
        values = values.copy()
        if fmt:
            n = len(values)
            for k, v in fmt.items():
                if k.__class__ is not int or not 0 <= k < n or v.__class__ is not str:
                    from .errors import DSLError

                    raise DSLError(f"fmt= maps token indexes 0..{n - 1} to trivia strings, not {k!r}: {v!r}")
                check_trivia(v, f"fmt[{k}]")
                values[k] = v
        values[0] = lead  # the lead comes from indent=/lead= and the pending lines, not fmt
        if clean and stmt.__class__ is not VarDecl:
            # the shape fixes prev_tag (class, opcode) of every statement but a VarDecl (its space)
            hit[2] = (values, self.prev_lead)
        apply_plan(nodes, plan, values)
        if entry:
            self.push_after(entry)
        if self.checker is not None:
            self.checker.see(stmt)
        if append:
            self.items.append(stmt)
        return stmt

    def scope_label(self, stmt) -> None:
        """The `$L__tmpN:` label scope_labels() writes before `stmt`, if any, recorded as an
        explicit `ptx.label` there would be."""
        if stmt.__class__ in _SCOPED:
            n = self.scope_rule.see(self.items, stmt)  # type: ignore[union-attr]  # callers check it is set
            if n is not None:
                rule, self.scope_rule = self.scope_rule, None
                self.record(Label(f"$L__tmp{n}"))
                self.scope_rule = rule

    # --- building modules from a program (not from generated Python) --------------

    def mark(self) -> int:
        """A position in the open block, for `move_to_top`."""
        self.keep_all = True   # positions count from the module's start: nothing is taken out
        return len(self.items)

    def take_finished(self) -> list:
        """The top-level statements recorded so far, taken out of the module (every block
        closed), so that a caller can emit them and drop them: [] inside a block, or once
        `mark()` was used. `finish()` then returns the module of the rest."""
        if len(self.stack) != 1 or self.keep_all or not self.module_items:
            return []
        done = self.module_items
        self.module_items = self.items = []
        self.stack = [self.module_items]
        self.taken = True
        return done

    def move_to_top(self, start: int) -> None:
        """Move the statements recorded since `mark()` returned `start` to the top of
        the open block (e.g. register declarations known only after the body)."""
        items = self.items
        items[:] = items[start:] + items[:start]

    def open(self, stmt, container, fmt=None, indent=None, lead=None):
        """Record a statement that opens `{` (function, block, section) and enter it."""
        self.record(stmt, fmt, indent, lead)
        self.open_keys.append(self.last_key)
        self.stack.append((container, []))
        self.items = self.stack[-1][1]

    def close(self, indent=None, lead=None):
        if len(self.stack) == 1:
            from .errors import DSLError

            raise DSLError("block_close() without an open block")
        container, items = self.stack.pop()
        self.items = self.stack[-1] if len(self.stack) == 1 else self.stack[-1][1]
        depth = len(self.stack) - 1
        opener = self.open_keys.pop() if self.open_keys else None
        entry = None
        if self.trivia is not None:
            fn = self.items[-1] if depth == 0 and self.items else None   # the function whose body closes
            entry = self.table_entry(None if opener is None else "}" + opener,
                                     fn.__class__ is Function and fn.body is container)
            self.last_key = None if opener is None else "}" + opener  # a comment after it ends its line
            if indent is None and lead is None:
                indent, lead = entry.get("indent"), entry.get("lead")
        if depth == 0:   # a function body closes
            self.scope_rule = None
        for value, what in ((lead, "close_lead"), (indent, "close_indent")):
            if value is not None:
                check_trivia(value, what)
        if lead is not None:
            self.asm = asm_context(lead, self.asm)
        elif self.lines or self.tail:
            self.asm = asm_context(self.pending_text(), self.asm)
        if lead is None:
            if indent is None:
                indent = self.style.predict(close_key(container.__class__, not items, depth, self.asm))
            saved = self.prev_lead  # a `}` is not a statement: it leaves prev_lead alone
            lead = self.lead_for(indent)
            self.prev_lead = saved
        elif self.at_start:
            self.at_start = False
        check_trivia(lead, "the trivia before this `}` (ptx.text/tail/comment lines, close_indent=, close_lead=)")
        if entry:
            self.push_after(entry)
        container.items = tuple(items)
        t = container.trivia
        if t.__class__ is list:
            t.append(lead)
            container.trivia = tuple(t)
        else:
            container.trivia = (*t, lead)

    def finish(self) -> Module:
        from .errors import DSLError

        if len(self.stack) != 1:
            raise DSLError("a block is still open at the end of the module")
        if self.trivia is not None:
            self.table_entry(END)
        nl = self.style.newline
        lines = [ln if ln.__class__ is str else "//" + ln[1] for ln in self.lines]
        if self.at_start:
            trailing = nl.join(lines) + (nl if self.final_newline and lines else "")
        else:
            trailing = self.tail + "".join([nl + ln for ln in lines]) + (nl if self.final_newline else "")
        check_trivia(trailing, "the text at the end of the module", before_token=False)
        return Module(tuple(self.module_items), trailing)


class InstructionChecker:
    """Checks each recorded instruction against the instruction tables for the
    module's `.version` and `.target` so far (the rules `ptx2py lint` applies).
    A violation raises DSLError, which python_to_ptx locates at the calling line."""

    def __init__(self):
        from ptx2py.lint import check_instruction
        from ptx2py.lint.operands import Declarations

        self.check = check_instruction
        self.version = None
        self.targets: tuple = ()
        # declarations may be recorded after the body (move_to_top): register classes are
        # checked for the names seen so far, undeclared names are not reported
        self.registers = Declarations(complete=False)

    def see(self, stmt) -> None:
        cls = stmt.__class__.__name__
        if cls == "Version":
            self.version = stmt.number
        elif cls == "Target":
            self.targets += tuple(stmt.targets)
        elif cls == "VarDecl" and stmt.space == ".reg":
            for d in stmt.declarators:
                self.registers.add_register(d.name, stmt.type, d.count, merge=True)
        elif cls == "Instruction":
            problems = self.check(stmt, self.version, self.targets, self.registers)
            if problems:
                # the caret goes under the first `.modifier` a finding names, when the line spells it
                import re

                from .errors import DSLError

                named = re.search(r"`(\.[\w:]+)`", problems[0])
                raise DSLError(f"{stmt.name}: " + "; ".join(problems), token=named.group(1) if named else None)


_current: list = [None]


def current() -> Recorder:
    rec = _current[0]
    if rec is None:
        rec = _current[0] = Recorder()
    return rec


def begin(style: Style | None = None, check: bool = False) -> Recorder:
    """Start recording (with `check`, every instruction is linted as it is recorded).
    The cyclic GC is paused until `end()` (the recorder builds one large acyclic
    tree; full GC passes over it cost more than building it)."""
    prev = _current[0]
    rec = _current[0] = Recorder(style)
    if check:
        rec.checker = InstructionChecker()
    # a recorder made implicitly by current() never paused the GC: only a begun one passes its state on
    rec.gc_was_enabled = gc.isenabled() or (prev is not None and prev.gc_was_enabled)
    gc.disable()
    return rec


def end() -> Recorder:
    rec = current()
    _current[0] = None
    # drop the recorded statements first: the first collection after the GC is back on
    # would otherwise walk the whole tree (the caller holds the Module it still needs)
    rec.module_items = rec.items = []
    rec.stack = [rec.module_items]
    if rec.gc_was_enabled:
        gc.enable()
    return rec
