"""PTX tree -> DSL Python: one call per statement, comment and blank line.

Trivia that the module's Style predicts is left out; a statement whose tokens
differ gets `fmt={token index: trivia}` (and `indent=`/`lead=` for its first
token). The output is laid out in black's style by `format.layout`.

The Python-generation IR is a list of `PyStmt` records (kind, expression IR
from `transpile.format`, nesting); sugar passes transform that list, never
the bytes (the `passes=` of `transpile.ptx_to_python`).
"""

from __future__ import annotations

import re

from ptx2py.ptxgrammar.isa.spellings import OPCODES, is_modifier
from ptx2py.ptxgrammar.tree import (
    Address,
    Align,
    Applied,
    Attribute,
    BinaryExpr,
    Cast,
    Conditional,
    Declarator,
    FloatLiteral,
    Indexed,
    InitField,
    InitList,
    Instruction,
    IntLiteral,
    Negation,
    Paren,
    ParenList,
    PerfDirective,
    Pragma,
    PredPair,
    Register,
    SectionRef,
    Sink,
    SpecialRegister,
    Symbol,
    UnaryExpr,
    Vector,
)

from .dsl.ops import LINKAGE
from .dsl.trivia_table import END, TRAILER, KeyCounter
from .format import LINE, Call, Display, Kw, Pair, layout
from .layout import place
from .names import py_var, reversible, to_python
from .style import gc_paused, infer_style

_COMMENT = re.compile(r"([ \t]*)//([^\n]*)\Z")
_NUMBERED = re.compile(r"(.*?)([0-9]+)\Z", re.S)
_MAX_WITH_DEPTH = 15

# The fast paths: a statement of the usual form written as one line directly, its text as
# the general path (its expression IR through `format.layout`) writes it. False: the general
# path only (roundtrip_tests/test_transpile_fast_paths.py checks that both agree).
FAST = True


def q(s: str) -> str:
    """A Python string literal the way black writes it (names repeat: each written once)."""
    r = _Q.get(s)
    if r is None:
        r = repr(s)
        if r[0] == "'" and '"' not in s:
            r = '"' + r[1:-1] + '"'
        if len(_Q) < 100_000:
            _Q[s] = r
    return r


_Q: dict = {}


def lit(text: str) -> str:
    """An integer spelling as Python: a plain int when canonical."""
    if text.isdigit() and (text == "0" or text[0] != "0"):
        return text
    return f"imm({q(text)})"


def word(text: str) -> str:
    return text if text.isdigit() and (text == "0" or text[0] != "0") else q(text)


class PyStmt:
    """One line-level unit of generated Python: `expr` laid out at `depth`."""

    __slots__ = ("expr", "depth", "prefix", "trailer", "explicit")

    def __init__(self, expr, depth, prefix="", trailer="", explicit=None):
        self.expr, self.depth, self.prefix, self.trailer, self.explicit = expr, depth, prefix, trailer, explicit


class Generator:
    """Python for a module, one way: its Style and every statement's placement against it
    (`layout.place`) are computed first; generation reads them in order."""

    def __init__(self, module, style=None, tag=False):
        self.module = module
        # with `tag`: id(IR object) -> (object, trivia key, kind, value) for every layout keyword
        # and lead-line call, and key -> its lines, for sugar's trivia table (sugar/trivia.py)
        self.tags: dict | None = {} if tag else None
        self.leads: dict = {}
        self.keys = KeyCounter() if tag else None
        self.key = None
        memo: list = []
        with gc_paused():
            if style is None:
                style = infer_style(module, memo=memo)
            self.placements = iter(place(module, style, memo))
        self.style = style
        self.nl = self.style.newline
        self.out: list[PyStmt] = []
        # the output lines when no pass reads the IR (`generate_python`): each statement is laid
        # out as it is generated, a one-line call of plain atoms written directly (see `call`)
        self.lines: list | None = None
        self.scopes: list[dict] = [{}]
        # each scope's declarations in order, ((name, Python name, count), ...): they fix what
        # the scope holds, so functions that declare the same registers share one name cache
        self.sig: list[tuple] = [()]
        # the scopes' declarations (tuple(sig)) -> {name or (name, component): operand expression}
        self.names: dict = {}
        self.decls = 0
        self.taken: set = set()   # the Python names of the registers in scopes (unique)
        self.cur: dict = self.names.setdefault(((),), {})   # the names of the current state
        self.outer: list = []     # the enclosing scopes' name caches (see pop_scope)
        # spellings -> text, the same for every module (kept between modules, see _PURE)
        self.heads: dict = _PURE["heads"]    # (opcode, modifiers) -> `ptx.x.y` head or None
        self.chains: dict = _PURE["chains"]  # (space, attribute words) -> a declaration's `reg.b32` head
        self.statements = 0
        self.explicit = 0
        self.pydepth = 0
        self.methods: dict = {}  # statement class -> its s_ method
        self.locs: dict = {}     # .loc fields -> its shared Call and its flat text (when no pass edits the IR)
        self.data: dict = _PURE["data"]      # (directive, integer) -> the call of one-integer section data
        if sum(map(len, _PURE.values())) > 200_000:
            for d in _PURE.values():
                d.clear()
        self.line_texts: dict = {}   # (line, indent) -> its call's text (laid out directly)
        self.decl_lines: dict = {}   # a plain non-register declaration's spelling -> its lines

    # --- driver ----------------------------------------------------------------------

    def run(self, sink=None) -> list:
        """The module's PyStmts; with `sink`, each top-level statement's are handed to
        `sink(stmts)` as soon as it is done (a function's `with` gets its closing keywords
        only after its body), so only one top-level statement's IR is held at a time."""
        with gc_paused():
            if sink is None and self.lines is not None:
                lines = self.lines
                for item in self.module.items:
                    start = len(lines)
                    self.statement(item, 0)
                    if len(lines) - start > 1:   # one string per top-level statement: not ~50 B a line
                        lines[start:] = ["\n".join(lines[start:])]
            elif sink is None:
                self.items(self.module.items, 0)
            else:
                for item in self.module.items:
                    self.statement(item, 0)
                    sink(self.out)
                    self.out = []
            self.trailing(self.module.trailing)
        return self.out

    def emit(self, expr, prefix="", trailer="", explicit=None):
        if self.lines is not None:
            layout(expr, _INDENTS[self.pydepth], prefix, trailer, self.lines)
            return
        self.out.append(PyStmt(expr, self.pydepth, prefix, trailer, explicit))

    def call(self, head: str, items: list) -> None:
        """`emit(Call(head, items))`; laid out as `format.layout` would, directly, when no pass
        reads the IR (`atoms_call`; every layout when every item is an atom)."""
        if self.lines is not None and FAST:
            try:   # (the join in atoms_call raises TypeError, before writing, at an IR item)
                done = self.atoms_call(head, items, True)
            except TypeError:
                done = self.atoms_call(head, [i if i.__class__ is str else i.flat() for i in items])
            if done:
                return
        self.emit(Call(head, items))

    def push_scope(self) -> None:
        self.outer.append(self.cur)
        self.scopes.append({})
        self.sig.append(())
        self.scope_changed()

    def pop_scope(self) -> None:
        """Back to the enclosing scope; its name cache is still right (the names declared
        inside went into the popped scope only), so lookups after a block that declared
        registers do not all miss."""
        self.taken.difference_update([v[0] for v in self.scopes.pop().values()])
        self.sig.pop()
        self.cur = self.outer.pop()

    def scope_changed(self) -> None:
        """The name cache for the new state (every open scope's declarations so far)."""
        self.cur = self.names.setdefault(tuple(self.sig), {})

    def items(self, items, depth):
        """Generate each statement of `items` (the loop is the hot path: written inline)."""
        placements, methods = self.placements, self.methods
        tagless = self.tags is None and self.keys is None
        direct = tagless and FAST and self.lines is not None   # (insn_line: laid out as generated)
        insn_line = self.insn_line
        stmt = None
        n = 0
        try:
            for stmt in items:
                lead, fmt, plain = next(placements)
                n += 1
                if plain and tagless:   # the usual statement: nothing before it, its lead as predicted
                    extra = []
                else:
                    if self.keys is not None:
                        self.key = self.keys.key(stmt)
                    if lead.tail or lead.lines or lead.keyword is not None or self.tags is not None:
                        extra = self.lead(lead, self.key)
                    else:
                        extra = []
                    if fmt:
                        kw = Kw("fmt", Display("{", "}", [f"{k}: {q(v)}" for k, v in fmt]))
                        self.tag(kw, self.key, "fmt", dict(fmt))
                        extra.append(kw)
                    if extra:
                        self.explicit += 1
                if plain and direct and stmt.__class__ is Instruction:
                    if not insn_line(stmt):   # (s_Instruction, from here: most statements)
                        self.instruction(stmt, extra)
                    continue
                method = methods.get(stmt.__class__)
                if method is None:   # the class's function, not a bound method: no reference cycle
                    method = methods[stmt.__class__] = getattr(type(self), "s_" + stmt.__class__.__name__)
                method(self, stmt, depth, extra)
        except _Unsupported as e:
            if e.node is None:    # the innermost statement: where the error is reported
                e.node = stmt
            raise
        finally:
            self.statements += n

    def statement(self, stmt, depth):
        self.items((stmt,), depth)

    def tag(self, obj, key, kind, value) -> None:
        if self.tags is not None:
            self.tags[id(obj)] = (obj, key, kind, value)

    def lead(self, lead, key=None) -> list:
        """The calls for the lines before a statement (or `}`); its explicit keyword, if any."""
        if lead.tail or lead.lines or self.tags is not None:
            self.layout_calls(lead.tail, lead.lines, lead.indent, key)
        if lead.keyword is None:
            return []
        kw = Kw(lead.keyword, q(lead.value))
        self.tag(kw, key, "kw", lead.value)
        return [kw]

    def layout_calls(self, tail, lines, indent, key=None):
        if self.tags is not None:
            self.leads[key] = (tail, tuple(lines), indent)
        if tail:
            m = _COMMENT.match(tail)
            if m:
                self.emit(Call("ptx.comment", [q(m.group(2)), Kw("inline", q(m.group(1)))]))
            elif self.tags is None:
                self.call("ptx.tail", [q(tail)])
            else:
                self.emit(Call("ptx.tail", [q(tail)]))
                self.tag(self.out[-1].expr, key, "tail", tail)
        if self.lines is not None:
            # laid out directly: lines repeat (`// begin inline asm` ...), each one's call text once
            texts = self.line_texts
            for line in lines:
                text = texts.get((line, indent))
                if text is None:
                    text = texts[(line, indent)] = Call(*_line_call(line, indent)).flat()
                out = _INDENTS[self.pydepth] + text
                if len(out) <= LINE:
                    self.lines.append(out)
                else:
                    self.emit(Call(*_line_call(line, indent)))
            return
        for n, line in enumerate(lines):
            self.emit(Call(*_line_call(line, indent)))
            self.tag(self.out[-1].expr, key, "line", n)

    def trailing(self, text):
        nl = self.nl
        if not self.module.items:
            if not text:
                return
            segs = text.split(nl)
            tail = ""
            lines = segs[:-1] if segs[-1] == "" else segs
            final = segs[-1] == ""
        else:
            segs = text.split(nl)
            tail = segs[0]
            if len(segs) == 1:
                lines, final = [], False
            elif segs[-1] == "":
                lines, final = segs[1:-1], True
            else:
                lines, final = segs[1:], False
        self.layout_calls(tail, lines, "", END)
        if not final:
            self.emit(Call("ptx.end", [Kw("newline", "False")]))

    def nested(self, call: Call, container, depth, extra):
        """`with call:` around the container's items (or block_open/close when deep)."""
        if self.pydepth >= _MAX_WITH_DEPTH and call.head == "ptx.block":
            self.emit(Call("ptx.block_open", extra))
            self.push_scope()
            opener = self.key
            self.items(container.items, depth + 1)
            self.pop_scope()
            self.emit(Call("ptx.block_close", self._close_kw(container, depth, opener)))
            return
        opener = self.key
        lines = self.lines
        if lines is None:
            self.out.append(PyStmt(call, self.pydepth, "with ", ":"))
            out = self.out
        else:   # the `with` line gets its closing keywords after the body: a slot for it
            lines.append(None)
            out = lines
        slot = len(out) - 1
        call.items.extend(extra)
        self.pydepth += 1
        self.push_scope()
        start = len(out)
        self.items(container.items, depth + 1)
        close_kw = self._close_kw(container, depth, opener)
        self.pop_scope()
        if len(out) == start:
            self.emit("pass")
        self.pydepth -= 1
        call.items.extend(close_kw)
        if lines is not None:
            head: list = []
            layout(call, _INDENTS[self.pydepth], "with ", ":", head)
            lines[slot] = "\n".join(head)

    def _close_kw(self, container, depth, opener=None):
        return self.lead(next(self.placements).lead, None if opener is None else "}" + opener)

    # --- statements --------------------------------------------------------------------

    def s_Instruction(self, s, depth, extra):
        if FAST and not extra and self.lines is not None and self.insn_line(s):
            return
        self.instruction(s, extra)

    def instruction(self, s, extra):
        """The general path: the call's expression IR, laid out by `emit`."""
        ops = []
        cur = self.cur
        plain = True   # every item a str (an atom)
        for o in s.operands:   # the usual operands inline: a plain register, an integer
            c = o.__class__
            if (c is Register or c is Symbol) and o.component is None:   # (as `operand` writes it)
                e = cur.get(o.name)
                if e is None:   # `name_expr`, inline
                    e = cur[o.name] = self._name_expr(o.name, None)
                if e.__class__ is not str:   # a Call: a fresh copy for passes
                    if self.lines is None:
                        e = Call(e.head, list(e.items))
                    plain = False
            elif c is IntLiteral:
                e = _LITS.get(o.text) or lit(o.text)
            else:
                e = self.operand(o)
                plain = plain and e.__class__ is str
            ops.append(e)
        if s.guard is not None:
            g = self.name_expr(s.guard.predicate, None)
            if s.guard.negated:
                g = "~" + g if g.__class__ is str else Call("neg", [g])
            ops.append(Kw("pred", g))
            plain = False
        if extra:
            ops.extend(extra)
            plain = False
        hk = (s.opcode, s.modifiers)
        head = self.heads.get(hk, 0)
        if head == 0:
            head = None
            if s.opcode in OPCODES and reversible(s.opcode, dot=False) and all(
                    is_modifier(m) and reversible(m) for m in s.modifiers):
                head = "ptx." + ".".join([to_python(s.opcode), *[to_python(m) for m in s.modifiers]])
            self.heads[hk] = head
        if head is not None:
            lines = self.lines
            if lines is not None:   # `call`, inline: most statements are instructions
                line = _INDENTS[self.pydepth] + head + "(" + (", ".join(ops) if plain else _flat_items(ops)) + ")"
                if len(line) <= LINE:
                    lines.append(line)
                    return
            self.emit(Call(head, ops))
        else:
            mods = Display("(", ")", [q(m) for m in s.modifiers])
            self.emit(Call("ptx.insn", [q(s.opcode), mods, *ops]))

    def insn_line(self, s) -> bool:
        """The fast path: write an instruction's call as the general path below would (from
        the flat text of each operand's expression); False when it is left to that path --
        its head not known yet or not an attribute chain, or a layout of more than one line
        of arguments."""
        head = self.heads.get((s.opcode, s.modifiers))
        if head is None:
            return False
        cur = self.cur
        texts = []
        for o in s.operands:
            c = o.__class__
            if (c is Register or c is Symbol) and o.component is None:
                e = cur.get(o.name)
                if e is None:
                    e = cur[o.name] = self._name_expr(o.name, None)
                if e.__class__ is not str:
                    e = e.flat()
            elif c is IntLiteral:
                e = _LITS.get(o.text) or lit(o.text)
            elif c is Address and o.suffix is None and len(o.items) == 1:
                e = self.addr_text(o.items[0])
                if e is None:
                    e = self.operand(o).flat()
            elif (c is ParenList or c is Vector) and o.items:   # `args(...)` of a call, `(r[1], r[2])`
                e = self.leaf_texts(o.items)
                if e is None:
                    e = self.operand(o).flat()
                elif c is ParenList:
                    e = "args(" + e + ")"
                else:
                    e = "(" + e + (",)" if len(o.items) == 1 else ")")
            else:
                e = self.operand(o)
                if e.__class__ is not str:
                    e = e.flat()
            texts.append(e)
        g = s.guard
        if g is not None:
            p = cur.get(g.predicate)
            if p is None:
                p = cur[g.predicate] = self._name_expr(g.predicate, None)
            if g.negated:
                p = "~" + p if p.__class__ is str else "neg(" + p.flat() + ")"
            elif p.__class__ is not str:
                p = p.flat()
            texts.append("pred=" + p)
        line = _INDENTS[self.pydepth] + head + "(" + ", ".join(texts) + ")"
        if len(line) <= LINE:   # (atoms_call's first case, inline: most instructions)
            self.lines.append(line)
            return True
        return self.atoms_call(head, texts)

    def atoms_call(self, head: str, texts: list, atoms: bool = False) -> bool:
        """`format.layout` of `Call(head, items)` at this depth, written from the items' flat
        `texts`: the call on one line, or split after `head(` with the arguments on one line.
        or one item a line. With `atoms` (every item is that text itself: layout never splits
        inside one) every layout is written; else False (nothing written) where layout would
        split an item."""
        indent = _INDENTS[self.pydepth]
        args = ", ".join(texts)
        line = indent + head + "(" + args + ")"
        if len(line) <= LINE or not texts:
            self.lines.append(line)
            return True
        inner = indent + "    "
        if len(inner) + len(args) <= LINE:
            self.lines += (indent + head + "(", inner + args, indent + ")")
            return True
        if not atoms and (len(texts) == 1 or any(len(inner) + len(t) + 1 > LINE for t in texts)):
            return False   # (layout would split an item: written by it)
        if len(texts) == 1:
            self.lines += (indent + head + "(", inner + args, indent + ")")
        else:
            self.lines.append(indent + head + "(")
            self.lines += [inner + t + "," for t in texts]
            self.lines.append(indent + ")")
        return True

    def leaf_texts(self, items):
        """The flat texts of plain names and integers, joined by ", " (as `operand` writes
        each); None when an item is anything else."""
        cur = self.cur
        texts = []
        for o in items:
            c = o.__class__
            if (c is Register or c is Symbol) and o.component is None:
                e = cur.get(o.name)
                if e is None:
                    e = cur[o.name] = self._name_expr(o.name, None)
                texts.append(e if e.__class__ is str else e.flat())
            elif c is IntLiteral:
                texts.append(_LITS.get(o.text) or lit(o.text))
            else:
                return None
        return ", ".join(texts)

    def addr_text(self, i):
        """`[%rd1]` -> `[rd[1]]`, `[%rd1+8]` -> `[rd[1] + 8]` (as `operand` and `addr_item`
        write them) for a plain name and a plain int offset; None for anything else."""
        c = i.__class__
        if c is BinaryExpr:
            left, right = i.left, i.right
            c = left.__class__
            if not ((i.op == "+" or i.op == "-") and (c is Register or c is Symbol) and left.component is None
                    and right.__class__ is IntLiteral):
                return None
            t = right.text
            if not (t.isdigit() and (t == "0" or t[0] != "0")):
                return None
            e = self.cur.get(left.name)
            if e is None:
                e = self.cur[left.name] = self._name_expr(left.name, None)
            if e.__class__ is str:
                return "[" + e + " " + i.op + " " + t + "]"
            return "[expr(" + e.flat() + ", " + q(i.op) + ", " + t + ")]"   # (addr_item: `operand(i)`)
        if (c is Register or c is Symbol) and i.component is None:
            e = self.cur.get(i.name)
            if e is None:
                e = self.cur[i.name] = self._name_expr(i.name, None)
            return "[" + (e if e.__class__ is str else e.flat()) + "]"
        return None

    def s_Label(self, s, depth, extra):
        self.call("ptx.label", [q(s.name), *extra])

    def s_Version(self, s, depth, extra):
        self.emit(Call("ptx.version", [q(s.number), *extra]))

    def s_Target(self, s, depth, extra):
        self.emit(Call("ptx.target", [*[q(t) for t in s.targets], *extra]))

    def s_AddressSize(self, s, depth, extra):
        self.emit(Call("ptx.address_size", [word(s.size), *extra]))

    def s_File(self, s, depth, extra):
        self.call("ptx.file", [word(s.index), q(s.path[1:-1]), *[word(e) for e in s.extra], *extra])

    def s_Loc(self, s, depth, extra):
        if extra or self.tags is not None:   # passes may edit the IR they get: a fresh call
            self.emit(self.loc_call(s, extra))
            return
        # locs repeat (most of a -lineinfo module): one shared call per distinct .loc, and
        # its flat text when laid out directly
        key = (s.file, s.line, s.column, s.function_name, s.function_offset, s.inlined_at)
        hit = self.locs.get(key)
        if hit is None:
            call = self.loc_call(s, extra)
            hit = self.locs[key] = (call, call.flat())
        call, text = hit
        if self.lines is not None:
            line = _INDENTS[self.pydepth] + text
            if len(line) <= LINE:
                self.lines.append(line)
                return
        self.emit(call)

    def loc_call(self, s, extra):
        a = [word(s.file), word(s.line), word(s.column)]
        if s.function_name is not None:  # positional: locs are most of a -lineinfo module
            a.append(q(s.function_name))
            a.append(Display("(", ")", [word(x) for x in s.inlined_at]))
            if s.function_offset is not None:
                a.append(Kw("offset", word(s.function_offset)))
        return Call("ptx.loc", a + extra)

    def s_Pragma(self, s, depth, extra):
        self.call("ptx.pragma", [*[q(x[1:-1]) for x in s.strings], *extra])

    def s_Alias(self, s, depth, extra):
        self.emit(Call("ptx.alias", [q(s.name), q(s.target), *extra]))

    def s_LabelList(self, s, depth, extra):
        self.call("ptx." + s.directive[1:], [*[q(x) for x in s.labels], *extra])

    def s_CallPrototype(self, s, depth, extra):
        a = [q(s.name)]
        if s.returns is not None:
            a.append(Kw("returns", self.param_list(s.returns)))
        if s.params is not None:
            a.append(Kw("params", self.param_list(s.params)))
        self.emit(Call("ptx.callprototype", a + extra))

    def s_SectionData(self, s, depth, extra):
        if self.lines is not None and not extra and len(s.values) == 1 and s.values[0].__class__ is IntLiteral:
            # one integer (most debug-section data, `.b8 0`): its line cached by spelling
            key = (s.directive, s.values[0].text)
            flat = self.data.get(key)
            if flat is None:
                flat = self.data[key] = _data_head(s.directive) + "(" + lit(key[1]) + ")"
            line = _INDENTS[self.pydepth] + flat
            if len(line) <= LINE:
                self.lines.append(line)
                return
        values = _byte_run(s) if s.directive == ".b8" else None
        if values is None:
            values = [self.operand(v) for v in s.values]
        self.call(_data_head(s.directive), [*values, *extra])

    def s_Block(self, s, depth, extra):
        self.nested(Call("ptx.block", []), s, depth, extra)

    def s_Section(self, s, depth, extra):
        self.nested(Call("ptx.section", [q(s.name)]), s, depth, extra)

    def s_Function(self, s, depth, extra):
        h = s.head
        a = [q(h.name)]
        if h.params is not None:
            a.append(Kw("params", self.param_list(h.params)))
        if h.returns is not None:
            a.append(Kw("returns", self.param_list(h.returns)))
        kws = [Kw(link[1:], "True") for link in h.linkage]
        plain = all(link[1:] in LINKAGE for link in h.linkage) and len(set(h.linkage)) == len(h.linkage)
        dirs = []
        for dnode in h.directives:
            if dnode.__class__ is PerfDirective and dnode.name[1:].isidentifier() and dnode.name[1:] not in _FUNC_KW:
                v = dnode.values
                value = "True" if not v else (word(v[0]) if len(v) == 1 else Display("(", ")", [word(x) for x in v]))
                dirs.append(Kw(dnode.name[1:], value))
            else:
                plain = False
        names = [k.name for k in kws + dirs]
        if not (all(link[1:] in LINKAGE for link in h.linkage) and len(set(h.linkage)) == len(h.linkage)):
            raise _Unsupported("function linkage")
        if not plain or len(set(names)) != len(names) or any(k.name in LINKAGE for k in dirs):
            a.append(Kw("directives", Display("[", "]", [self.head_directive(x) for x in h.directives])))
        else:
            kws += dirs
        a += kws
        call = Call("ptx.entry" if h.kind == ".entry" else "ptx.func", a)
        if s.body is None:
            call.items.append(Kw("body", "False"))
            call.items.extend(extra)
            self.emit(call)
            return
        self.nested(call, s.body, depth, extra)

    def head_directive(self, d):
        if d.__class__ is PerfDirective:
            return Call("ptx.perf", [q(d.name), *[word(v) for v in d.values]])
        if d.__class__ is Pragma:
            return Call("ptx.head_pragma", [q(x[1:-1]) for x in d.strings])
        raise _Unsupported(type(d).__name__)

    def param_list(self, pl):
        return Display("[", "]", [self.param(p) for p in pl.params])

    def param(self, p):
        chain = self.attr_chain("param" if p.space == ".param" else "regparam", p.attrs)
        a = [q(p.name)]
        if p.dim == "":
            a.append(Kw("unsized", "True"))
        elif p.dim is not None:
            a.append(Kw("dim", word(p.dim)))
        return Call(chain, a)

    def attr_chain(self, head, attrs):
        out = head
        for at in attrs:
            if at.__class__ is str:
                if not reversible(at) or at in ("align", "attribute"):
                    raise _Unsupported(at)
                out += "." + to_python(at)
            elif at.__class__ is Align:
                out += f".align({word(at.value)})"
            elif at.__class__ is Attribute:
                out += f".attribute({', '.join([q(at.name), *[q(x) for x in (at.args or ())]])})"
        return out

    def s_VarDecl(self, s, depth, extra):
        decls = s.declarators
        if s.space != ".reg" and len(decls) == 1 and not extra and FAST and self.lines is not None:
            d = decls[0]   # `.param .b64 param0;` ... (a -G module's call blocks): lines by spelling
            if d.__class__ is Declarator and not d.dims and d.init is None and all(
                    x.__class__ is str for x in s.attrs):
                key = (self.pydepth, s.space, s.attrs, s.linkage, d.name, d.count)
                lines = self.lines
                hit = self.decl_lines.get(key)
                if hit is None:
                    start = len(lines)
                    self.var_decl(s, decls, extra)
                    self.decl_lines[key] = lines[start:]
                else:
                    lines += hit
                return
        self.var_decl(s, decls, extra)

    def var_decl(self, s, decls, extra):
        attrs = s.attrs
        words = True   # every attribute a dot-word (no `.align`, `.attribute(...)`)
        for x in attrs:
            if x.__class__ is not str:
                words = False
                break
        simple_reg = words and s.space == ".reg" and not s.linkage and all(
            d.__class__ is Declarator and not d.dims and d.init is None
            and (d.count is None or lit(d.count) == d.count) for d in decls)
        space = "reg" if s.space == ".reg" else "var." + to_python(s.space)
        if not reversible(s.space):
            raise _Unsupported(s.space)
        if words:   # a chain per distinct spelling (declarations repeat)
            chain = self.chains.get((space, attrs))
            if chain is None:
                chain = self.chains[(space, attrs)] = self.attr_chain(space, attrs)
        else:
            chain = self.attr_chain(space, attrs)
        a = []
        if simple_reg:
            targets = []
            scope = self.scopes[-1]
            taken = self.taken
            gone = []   # the names of redeclared registers: taken until the statement is done
            declared = []
            for d in decls:
                a.append(q(d.name))
                if d.count is not None:
                    a.append(d.count)
                pyname = py_var(d.name, taken)
                taken.add(pyname)
                targets.append(pyname)
                old = scope.get(d.name)
                if old is not None:
                    gone.append(old[0])
                entry = scope[d.name] = (pyname, None if d.count is None else int(d.count))
                declared.append((d.name, *entry))
                self.decls += 1
            self.sig[-1] += tuple(declared)   # name_expr's cache keys on the declarations so far
            taken.difference_update(gone)
            self.scope_changed()
            prefix = ", ".join(targets) + " = "
            if self.lines is not None and not extra and FAST:   # `emit`'s one-line layout, written out
                line = _INDENTS[self.pydepth] + prefix + chain + "(" + ", ".join(a) + ")"
                if len(line) <= LINE:
                    self.lines.append(line)
                    return
            self.emit(Call(chain, a + extra), prefix=prefix)
            return
        kw = [Kw(link[1:], "True") for link in s.linkage]
        if any(link[1:] not in LINKAGE for link in s.linkage):
            raise _Unsupported("linkage")
        if len(decls) == 1 and (decls[0].count is None or word(decls[0].count) == decls[0].count):
            d = decls[0]     # (a count spelled `<007>` takes the d(name, count=...) form below)
            a.append(q(d.name))
            if d.count is not None:
                a.append(word(d.count))
            if d.dims:
                a.append(Kw("dims", Display("(", ")", ["None" if x == "" else word(x) for x in d.dims])))
            if d.init is not None:
                a.append(Kw("init", self.init(d.init)))
        else:
            for d in decls:
                b = [q(d.name)]
                if d.count is not None:
                    b.append(Kw("count", word(d.count)))
                if d.dims:
                    b.append(Kw("dims", Display("(", ")", ["None" if x == "" else word(x) for x in d.dims])))
                if d.init is not None:
                    b.append(Kw("init", self.init(d.init)))
                a.append(Call("d", b))
        self.call(chain, a + kw + extra)

    def init(self, n):
        if n.__class__ is InitList:   # (integers inline, as `operand` writes them: data tables)
            return Display("[", "]", [(_LITS.get(i.text) or lit(i.text)) if i.__class__ is IntLiteral
                                      else self.init(i) for i in n.items])
        return self.operand(n)

    # --- operands -------------------------------------------------------------------------

    def name_expr(self, name, component):
        key = name if component is None else (name, component)
        hit = self.cur.get(key)
        if hit is None:
            hit = self.cur[key] = self._name_expr(name, component)
        if hit.__class__ is not str and self.lines is None:  # a fresh Call: passes may edit the IR they get
            return Call(hit.head, list(hit.items))
        return hit

    def _name_expr(self, name, component, level=None):
        """A name's expression as scopes[:level + 1] resolve it (default: all of them): the
        declaration in scopes[level], else what the enclosing scopes give, from their state's
        cache (a block's lookups do not walk the function's scope again)."""
        if level is None:
            level = len(self.scopes) - 1
        numbered = _SPLIT.get(name, 0)
        if numbered == 0:
            numbered = _numbered(name)
        suffix = "" if component is None else "." + component[1:]
        scope = self.scopes[level]
        hit = scope.get(name)
        if hit is not None and hit[1] is None:
            return hit[0] + suffix
        if numbered is not None:
            hit = scope.get(numbered[0])
            n = numbered[2]
            if hit is not None and hit[1] is not None and n is not None and n < hit[1]:
                if FAST and level == len(self.scopes) - 1:
                    self._fill(numbered[0], hit, scope)
                return hit[0] + "[" + numbered[1] + "]" + suffix
        if level:
            cache = self.outer[level - 1]   # the names of the state scopes[:level] (unchanged since)
            key = name if component is None else (name, component)
            hit = cache.get(key)
            if hit is None:
                hit = cache[key] = self._name_expr(name, component, level - 1)
            return hit
        comp = [] if component is None else [q(component)]
        if name[:1] == "%":
            return Call("regn", [q(name), *comp])
        return Call("sym", [q(name), *comp])

    def _fill(self, base: str, entry, scope) -> None:
        """Put every register of the family `base<count>` into the current state's cache the
        first time one of them is looked up (a function uses most of the registers it
        declares): one dict merge instead of a `_name_expr` per register. A plain
        declaration of one of those names in the scope wins, as `_name_expr` resolves it."""
        cur = self.cur
        mark = (base, None)   # (no lookup key is a pair with a None component)
        if mark in cur:
            return
        cur[mark] = True
        pyname, count = entry
        if count > 4096:
            return
        cur.update(zip(_spellings(_REG_NAMES, base, "", count), _spellings(_REG_TEXTS, pyname + "[", "]", count)))
        for k, v in scope.items():
            if v[1] is None:
                cur.pop(k, None)   # (resolved again, by `_name_expr`)

    def operand(self, o):
        cls = o.__class__
        if cls is Register:
            if o.component is not None and o.component[1:] not in _COMPONENTS:
                return Call("regn", [q(o.name), q(o.component)]).flat()
            return self.name_expr(o.name, o.component)
        if cls is IntLiteral:
            return lit(o.text)
        if cls is Symbol:
            if o.component is not None and o.component[1:] not in _COMPONENTS:
                return Call("sym", [q(o.name), q(o.component)]).flat()
            return self.name_expr(o.name, o.component)
        if cls is SpecialRegister:
            n = o.name[1:]
            if n.isidentifier() and (o.component is None or o.component[1:] in _COMPONENTS):
                return "sreg." + n + ("" if o.component is None else o.component)
            return Call("regn", [q(o.name)] + ([] if o.component is None else [q(o.component)])).flat()
        if cls is Address:
            d = Display("[", "]", [self.addr_item(i) for i in o.items])
            return d if o.suffix is None else Call("addr", [d, q(o.suffix)])
        if cls is Vector:
            return Display("(", ")", [self.operand(i) for i in o.items])
        if cls is FloatLiteral:
            return f"fimm({q(o.text)})"
        if cls is UnaryExpr:
            if (o.op == "-" and o.operand.__class__ is IntLiteral and lit(o.operand.text) == o.operand.text
                    and o.operand.text != "0" and o.operand.trivia == ("",)):   # Python's -0 is 0
                return "-" + o.operand.text
            return Call("unary", [q(o.op), self.operand(o.operand)])
        if cls is Negation:
            inner = self.operand(o.operand)
            if inner.__class__ is str and (inner.isidentifier() or _SIMPLE_REG.match(inner)):
                return "~" + inner
            return Call("neg", [inner])
        if cls is Sink:
            return "sink"
        if cls is PredPair:
            return Call("pair", [self.operand(o.first), self.operand(o.second)])
        if cls is ParenList:
            return Call("args", [self.operand(i) for i in o.items])
        if cls is BinaryExpr:
            links = []               # a left-leaning chain becomes one flat expr(...) call
            while o.__class__ is BinaryExpr:
                links.append(o)
                o = o.left
            items = [self.operand(o)]
            for link in reversed(links):
                items += [q(link.op), self.operand(link.right)]
            return Call("expr", items)
        if cls is Paren:
            return Call("paren", [self.operand(o.inner)])
        if cls is Cast:
            return Call("cast", [q(o.type), self.operand(o.operand)])
        if cls is Conditional:
            return Call("cond", [self.operand(o.condition), self.operand(o.then), self.operand(o.otherwise)])
        if cls is Indexed:
            return Call("index", [q(o.name), self.operand(o.index)])
        if cls is Applied:
            return Call("apply", [q(o.function), self.operand(o.argument)])
        if cls is InitField:
            return Call("field", [q(o.name), self.operand(o.value)])
        if cls is SectionRef:
            return Call("secref", [q(o.name)] + ([] if o.op is None else [q(o.op), word(o.offset)]))
        if cls is InitList:
            return self.init(o)
        raise _Unsupported(cls.__name__)

    def addr_item(self, i):
        """`[%rd1+8]` -> `[rd[1] + 8]` when the offset is a plain (negated) int."""
        if i.__class__ is BinaryExpr and i.op in ("+", "-") and i.left.__class__ in (Register, Symbol):
            left = self.operand(i.left)
            r = i.right
            right = None
            if r.__class__ is IntLiteral and lit(r.text) == r.text:
                right = r.text
            elif (i.op == "+" and r.__class__ is UnaryExpr and r.op == "-" and r.operand.__class__ is IntLiteral
                  and lit(r.operand.text) == r.operand.text and r.operand.text != "0" and r.operand.trivia == ("",)):
                right = "-" + r.operand.text
            if right is not None and left.__class__ is str:
                return f"{left} {i.op} {right}"
        return self.operand(i)


_SPLIT: dict = {}
# `Generator._fill`: a family's spellings by number, `%r0 %r1 ...` and `r[0] r[1] ...`, kept
# between modules (one list per base and per Python name, as long as its largest count)
_REG_NAMES: dict = {}
_REG_TEXTS: dict = {}


def _spellings(table: dict, head: str, tail: str, count: int) -> list:
    """[head + "0" + tail, ..., head + str(count - 1) + tail] (cached in `table`)."""
    have = table.get((head, tail))
    if have is None:
        if len(table) > 1000:
            table.clear()
        have = table[(head, tail)] = []
    if len(have) < count:
        have += [head + str(i) + tail for i in range(len(have), count)]
    return have[:count]
_PURE: dict = {"heads": {}, "chains": {}, "data": {}}   # Generator's caches of pure functions of spellings
_LITS = {str(i): str(i) for i in range(1024)}   # `lit` of the usual small integers


def _line_call(line: str, indent: str):
    """(head, arguments) of the call that writes one whole line before a statement: a blank
    line, a `//` comment (its indent when not the statement's) or other text."""
    if not line.strip(" \t"):
        return "ptx.blank", [q(line)] if line else []
    m = _COMMENT.match(line)
    if m:
        args = [q(m.group(2))]
        if m.group(1) != indent:
            args.append(Kw("indent", q(m.group(1))))
        return "ptx.comment", args
    return "ptx.text", [q(line)]


def _flat_items(items) -> str:
    """A call's arguments on one line (as `format.Call.flat` writes them)."""
    return ", ".join([i if i.__class__ is str else i.flat() for i in items])
_INDENTS = ["    " * n for n in range(200)]   # Python indents by nesting depth (deeper: see nested)
_DATA_HEADS: dict = {}


def _data_head(directive: str) -> str:
    """`.b8` -> `ptx.data.b8` (cached: section data is most of a -G module's statements)."""
    h = _DATA_HEADS.get(directive)
    if h is None:
        h = _DATA_HEADS[directive] = "ptx.data." + to_python(directive)
    return h


def _numbered(name: str):
    """`%r12` -> ("%r", "12", 12); None for a name without a trailing number (cached). The
    number is None when spelled with a leading zero (`%r012` is not `r[12]`)."""
    hit = _SPLIT.get(name, 0)
    if hit == 0:
        m = _NUMBERED.match(name)
        if m:
            idx = m.group(2)
            hit = (m.group(1), idx, int(idx) if idx == "0" or idx[0] != "0" else None)
        else:
            hit = None
        if len(_SPLIT) < 1_000_000:
            _SPLIT[name] = hit
    return hit


def _byte_run(s):
    """`.b8 95,90,78` -> `[*b"_ZN"]`: a run of plain decimal bytes as one bytes literal
    (unpacked into the call's int arguments); None when a value is anything else."""
    vals = s.values
    if len(vals) < 4:
        return None
    try:
        data = bytes([_BYTE[v.text] for v in vals if v.__class__ is IntLiteral])
    except KeyError:   # not a plain decimal byte
        return None
    if len(data) != len(vals):   # a value is not an integer
        return None
    if b"'" in data or b'"' in data:
        return None
    return ["*b\"" + repr(data)[2:-1] + "\""]


_BYTE = {str(i): i for i in range(256)}
_COMPONENTS = frozenset("xyzwrgba")
_SIMPLE_REG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[0-9]+\]\Z")
_FUNC_KW = frozenset({"params", "returns", "directives", "body", "fmt", "indent", "lead", "close_indent",
                      "close_lead", "name"})


class _Unsupported(Exception):
    """A tree the DSL cannot write; ``node`` is the statement, for the location."""

    node = None


def unsupported_error(e: _Unsupported, module, text: str, filename: str):
    """A located ParseError for a statement the generator cannot write as Python."""
    from ptx2py.ptxgrammar.emitter import offset_of
    from ptx2py.ptxgrammar.errors import error_at

    pos = offset_of(module, e.node) if e.node is not None else None
    return error_at(text, pos or 0, f"ptx2py cannot write this {type(e.node).__name__} as Python "
                                    f"(unsupported {e}); no output written", filename)


HEADER = "from ptx2py.dsl import *  # noqa: F401,F403"


def render(stmts: list, style, trailer=None) -> str:
    """The module's Python: its `ptx.style(...)` first, or, with `trailer` (a Display of the
    trivia table, sugar/trivia.py), the style and the table after the body, after TRAILER
    (each table as `style = {...}` / `trivia = {...}` before its call where that is shorter)."""
    lines, st = _render_head(style, trailer is None)
    layout_stmts(stmts, lines)
    if trailer is not None:
        lines += ["", TRAILER]
        if st:
            _trailer_call("ptx.style", st, "style", lines)
        if trailer.items:
            _trailer_call("ptx.trivia", [trailer], "trivia", lines)
    lines.append("")
    return "\n".join(lines)


def _trailer_call(head: str, args: list, name: str, lines: list) -> None:
    """`head(*args)`, or, where that takes fewer lines, its table first as `name = {...}`
    and then `head(..., name)` (black gives a call's table four lines of brackets)."""
    call, inline = [], []
    layout(Call(head, args), "", "", "", inline)
    tables = [a for a in args if a.__class__ is Display]
    if tables:
        layout(tables[0], "", name + " = ", "", call)
        layout(Call(head, [name if a is tables[0] else a for a in args]), "", "", "", call)
    lines += call if tables and len(call) < len(inline) else inline


def generate_python(gen: "Generator") -> str:
    """`render(gen.run(), gen.style)`, laying out each statement as it is generated (no sugar
    pass reads the IR, so none is kept: a one-line call of atoms is written directly)."""
    lines, _ = _render_head(gen.style, True)
    gen.lines = lines
    try:
        layout_stmts(gen.run(), lines)   # nothing left: every statement went to `lines`
    finally:
        gen.lines = None
    lines.append("")
    return "\n".join(lines)


def _render_head(style, with_style: bool):
    """The header lines (and `ptx.style(...)` when `with_style`); the style call's arguments."""
    lines = [HEADER, ""]
    table = style.overrides()
    st = [q(style.preset)] if style.preset else []
    if table:
        st.append(Display("{", "}", [Pair(_tuple(k), q(v)) for k, v in sorted(table.items(), key=repr)]))
    if style.newline != "\n":
        st.append(Kw("newline", q(style.newline)))
    if with_style:
        layout(Call("ptx.style", st), "", "", "", lines)
    return lines, st


def layout_stmts(stmts: list, lines: list) -> None:
    for s in stmts:
        layout(s.expr, "    " * s.depth, s.prefix, s.trailer, lines)


def _tuple(k) -> Display:
    return Display("(", ")", [q(x) if x.__class__ is str else str(x) for x in k])


def generate(module) -> tuple[str, Generator]:
    gen = Generator(module)
    return generate_python(gen), gen


def format_statistics(module) -> dict:
    """{"statements": N, "explicit_format": M}: statements needing explicit trivia."""
    gen = Generator(module)
    gen.run()
    return {"statements": gen.statements, "explicit_format": gen.explicit}
