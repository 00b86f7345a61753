"""The Lark transformer: one method per grammar rule, each makes one tree node.

Every token reaching a method carries the trivia written before it (set by
``parser.TriviaPostLex``); a node's ``trivia`` is the tuple of those strings for
its own tokens, in the order its ``_parts()`` yields them.

The builder runs in two modes. Plain mode makes ordinary ``str`` fields. Span
mode keeps Lark tokens (``str`` subclasses with positions) in the fields, so
that ``shapes.py`` can turn the tree of one statement into a builder function
for every later statement of the same shape.
"""

from __future__ import annotations

from lark import Token, Transformer

from .isa.special_registers import is_special_register
from .markers import MARKER_CLASSES, BlockClose, BlockOpen, FunctionOpen, GrammarCheck, SectionOpen  # noqa: F401
from .tree import (
    Address,
    AddressSize,
    Alias,
    Align,
    Applied,
    Attribute,
    BinaryExpr,
    Block,
    CallPrototype,
    Cast,
    Conditional,
    Declarator,
    File,
    FloatLiteral,
    Function,
    FunctionHead,
    Guard,
    Indexed,
    InitField,
    InitList,
    Instruction,
    IntLiteral,
    Label,
    LabelList,
    Loc,
    Module,
    Negation,
    Param,
    ParamList,
    Paren,
    ParenList,
    PerfDirective,
    Pragma,
    PredPair,
    Register,
    Section,
    SectionData,
    SectionRef,
    Sink,
    SpecialRegister,
    Symbol,
    Target,
    UnaryExpr,
    VarDecl,
    Vector,
    Version,
)


def _no_repeat(seen: list, tok: Token) -> None:
    """ptxas rejects a repeated linkage directive (`.visible .visible`)."""
    if str(tok) in seen:
        raise GrammarCheck(tok, f"repeated linkage directive '{tok}'")


def name_node(value, component=None, trivia=None):
    """Type a name by its spelling: register, special register or symbol."""
    if value[0] == "%":
        cls = SpecialRegister if is_special_register(value) else Register
    else:
        cls = Symbol
    return cls(value, component, trivia)


def as_operand(node):
    """Give an instruction operand its positional type (see the grammar, section 6)."""
    cls = node.__class__
    if cls is UnaryExpr and node.op == "!" and isinstance(node.operand, (Register, Symbol)):
        return Negation(node.operand, node.trivia)
    if cls is BinaryExpr and node.op == "|" and isinstance(node.left, (Register, Symbol)) \
            and isinstance(node.right, (Register, Symbol)):
        return PredPair(node.left, node.right, node.trivia)
    if cls is Paren and isinstance(node.inner, (Register, Symbol, Sink)):
        return ParenList((node.inner,), node.trivia)
    return node


# --- checks for what the grammar's shapes admit but PTX does not (ptx-syntax.md) ---

PERFORMANCE_DIRECTIVES = frozenset(
    ".maxntid .reqntid .minnctapersm .maxnreg .noreturn .explicitcluster .reqnctapercluster "
    ".maxclusterrank .blocksareclusters .abi_preserve .abi_preserve_control .local_maxnreg "
    ".maxnctapersm".split()
)
SECTION_DATA_DIRECTIVES = frozenset((".b8", ".b16", ".b32", ".b64"))


def _is_constant(node) -> bool:
    """True for an expression without names: literals, operators, casts (walked with a stack:
    a long flat sum is as deep as it is long)."""
    todo = [node]
    while todo:
        node = todo.pop()
        if isinstance(node, (IntLiteral, FloatLiteral)):
            continue
        if isinstance(node, (Register, Symbol)):
            if node.name != "WARP_SZ":
                return False
        elif isinstance(node, (BinaryExpr, UnaryExpr, Cast, Paren, Conditional)):
            todo.extend(node.children())
        else:
            return False
    return True


def check_address(token, item) -> None:
    """`[reg]`, `[sym]`, `[imm]`, `[base+const]`, `[base+-const]`; not `[r-4]`, `[r+r]`, `[4+sym]`."""
    base = item
    while isinstance(base, BinaryExpr):
        if base.op != "+" or not _is_constant(base.right):
            raise GrammarCheck(token, "an address is [base], [base+constant] or [base+-constant]")
        base = base.left
    if not isinstance(base, (Register, Symbol, IntLiteral)) or (base is not item and isinstance(base, IntLiteral)):
        raise GrammarCheck(token, "an address base must be a register or a symbol")


def check_operands(opcode, operands) -> None:
    for op in operands[1:]:
        if op.__class__ is Sink:
            raise GrammarCheck(opcode, "'_' may only stand for a result (the first operand)")


def check_section_data(directive, values) -> None:
    if directive not in SECTION_DATA_DIRECTIVES:
        raise GrammarCheck(directive, f"section data is .b8, .b16, .b32 or .b64, not '{directive}'")
    numbers = all(_is_int(v) for v in values)
    if not numbers and len(values) != 1:
        raise GrammarCheck(directive, "a section data line is a list of integers or one symbolic value")
    if not numbers and not _is_section_symbol(values[0]):
        raise GrammarCheck(directive, "a symbolic section value is label, label+imm, label-label or a section name")


def _is_int(v) -> bool:
    return isinstance(v, IntLiteral) or (isinstance(v, UnaryExpr) and v.op == "-" and isinstance(v.operand, IntLiteral))


def _is_section_symbol(v) -> bool:
    if isinstance(v, (Symbol, SectionRef)):
        return True
    if isinstance(v, BinaryExpr) and isinstance(v.left, Symbol):
        return (v.op == "+" and isinstance(v.right, IntLiteral)) or (v.op == "-" and isinstance(v.right, Symbol))
    return False


PARAMETER_SPACES = frozenset((".param", ".reg"))


def check_pointer_tail(c) -> None:
    """A parameter is `.param` or `.reg` (ptxas: "illegal state space"); a later state space
    is a pointer's, right after `.ptr`; then `.ptr [.space] [.align N]`, in that order."""
    if str(c[0]) not in PARAMETER_SPACES:
        raise GrammarCheck(c[0], f"a parameter is .param or .reg, not '{c[0]}'")
    for prev, part in zip(c, c[1:]):
        if isinstance(part, Token) and part.type == "STATE_SPACE" and not (
                isinstance(prev, Token) and prev.type == "PTR"):
            raise GrammarCheck(part, f"a state space inside a parameter follows .ptr, not '{prev}'")
    words = [p if isinstance(p, Token) else ".align" for p in c
             if not isinstance(p, Token) or p.type in ("PTR", "STATE_SPACE")]
    if ".ptr" in words:
        tail = words[words.index(".ptr") + 1:]
        if ".align" in tail and tail[-1] != ".align":
            raise GrammarCheck(c[0], "after .ptr the state space comes before .align")


class TreeBuilder(Transformer):
    """Grammar rule -> tree node. ``prefix`` maps a token to its trivia."""

    def __init__(self, prefix, value):
        super().__init__(visit_tokens=False)
        self.prefix = prefix    # token -> trivia string before it
        self.value = value      # token -> field value (str or the token itself)

    # -- helpers -----------------------------------------------------------
    def _trivia(self, children):
        pre = self.prefix
        return tuple(pre(c) for c in children if isinstance(c, Token))

    def _nodes(self, children):
        return tuple(c for c in children if not isinstance(c, Token))

    def _values(self, children, *types):
        v = self.value
        return tuple(v(c) for c in children if isinstance(c, Token) and c.type in types)

    # -- 0. start rules ------------------------------------------------------
    def module(self, children):
        return Module(tuple(children), "", ())

    def module_chunk(self, children):
        return list(children)

    body_chunk = module_chunk
    section_chunk = module_chunk

    def function_open(self, children):
        return FunctionOpen(children[0], self.prefix(children[1]))

    def section_open(self, children):
        return SectionOpen(self.value(children[1]), self._trivia(children))

    def block_open(self, children):
        return BlockOpen(self.prefix(children[0]))

    def block_close(self, children):
        return BlockClose(self.prefix(children[0]))

    # -- 1. module directives -----------------------------------------------
    def version(self, c):
        trivia = self._trivia(c)
        if trivia[1].strip():
            raise GrammarCheck(c[1], "ptxas reads `.version M.m` as plain text: no comment inside it")
        return Version(self.value(c[1]), trivia)

    def target(self, c):
        return Target(self._values(c, "IDENT"), self._trivia(c))

    def address_size(self, c):
        return AddressSize(self.value(c[1]), self._trivia(c))

    def alias(self, c):
        return Alias(self.value(c[1]), self.value(c[3]), self._trivia(c))

    def pragma(self, c):
        return Pragma(self._values(c, "STRING"), self._trivia(c))

    # -- 2. debug directives --------------------------------------------------
    def file(self, c):
        v = self.value
        return File(v(c[1]), v(c[2]), tuple(v(t) for t in c[4::2]), self._trivia(c))

    def loc(self, c):
        v = self.value
        fname = offset = inlined = None
        if len(c) > 4:
            self._keyword(c[5], "function_name")
            fname = v(c[6])
            rest = c[7:]
            if rest[0] == "+":
                offset = v(rest[1])
                rest = rest[2:]
            self._keyword(rest[1], "inlined_at")
            inlined = (v(rest[2]), v(rest[3]), v(rest[4]))
        return Loc(v(c[1]), v(c[2]), v(c[3]), fname, offset, inlined, self._trivia(c))

    @staticmethod
    def _keyword(token, word):
        if token != word:
            raise GrammarCheck(token, f"expected '{word}' in .loc, found '{token}'")

    def section(self, c):
        return Section(self.value(c[1]), self._nodes(c), self._trivia(c))

    def section_data(self, c):
        values = self._nodes(c)
        check_section_data(c[0], values)
        return SectionData(self.value(c[0]), values, self._trivia(c))

    def section_ref(self, c):
        v = self.value
        if len(c) == 1:
            return SectionRef(v(c[0]), None, None, self._trivia(c))
        return SectionRef(v(c[0]), v(c[1]), v(c[2]), self._trivia(c))

    # -- 3. variables ----------------------------------------------------------
    def variable(self, c):
        v = self.value
        i = 0
        linkage = []
        while c[i].type == "LINKAGE":
            _no_repeat(linkage, c[i])
            linkage.append(v(c[i]))
            i += 1
        space = v(c[i])
        attrs, declarators = [], []
        for part in c[i + 1:]:
            if isinstance(part, Declarator):
                declarators.append(part)
            elif isinstance(part, Token):
                if part.type == "DOTNAME":
                    attrs.append(v(part))
            else:
                attrs.append(part)
        return VarDecl(tuple(linkage), space, tuple(attrs), tuple(declarators), self._trivia(c))

    def align(self, c):
        return Align(self.value(c[1]), self._trivia(c))

    def attribute(self, c):
        return Attribute(self.value(c[2]), self._values(c, "INT") or None, self._trivia(c))

    def declarator(self, c):
        v = self.value
        count, dims, init = None, [], None
        i = 1
        while i < len(c):
            tok = c[i]
            if tok == "<":
                count = v(c[i + 1])
                i += 3
            elif tok == "[":
                if c[i + 1] == "]":
                    dims.append("")
                    i += 2
                else:
                    dims.append(v(c[i + 1]))
                    i += 3
            else:               # "=" initializer
                init = c[i + 1]
                i += 2
        return Declarator(v(c[0]), count, tuple(dims), init, self._trivia(c))

    def init_list(self, c):
        return InitList(self._nodes(c), self._trivia(c))

    def init_field(self, c):
        return InitField(self.value(c[0]), c[2], self._trivia(c))

    # -- 4. functions ------------------------------------------------------------
    def function(self, c):
        body = c[1] if isinstance(c[1], Block) else None
        return Function(c[0], body, self._trivia(c))

    def function_head(self, c):
        v = self.value
        linkage, returns, name, params, directives = [], None, None, None, []
        for part in c:
            if isinstance(part, Token):
                if part.type == "LINKAGE":
                    _no_repeat(linkage, part)
                    linkage.append(v(part))
                elif part.type == "FUNCTION_KIND":
                    kind = v(part)
                else:
                    name = v(part)
            elif isinstance(part, ParamList):
                if name is None:
                    returns = part
                else:
                    params = part
            else:
                directives.append(part)
        return FunctionHead(tuple(linkage), kind, returns, name, params, tuple(directives), self._trivia(c))

    def param_list(self, c):
        return ParamList(self._nodes(c), self._trivia(c))

    def param(self, c):
        check_pointer_tail(c)
        v = self.value
        attrs, name, dim = [], None, None
        for i, part in enumerate(c[1:], 1):
            if not isinstance(part, Token):
                attrs.append(part)
            elif part.type in ("IDENT", "SINK") and name is None:
                name = v(part)
                tail = c[i + 1:]
                if tail:
                    dim = v(tail[1]) if len(tail) == 3 else ""
                break
            else:
                attrs.append(v(part))
        return Param(v(c[0]), tuple(attrs), name, dim, self._trivia(c))

    def perf_directive(self, c):
        if c[0] not in PERFORMANCE_DIRECTIVES:
            raise GrammarCheck(c[0], f"unknown performance directive '{c[0]}'")
        return PerfDirective(self.value(c[0]), self._values(c, "INT"), self._trivia(c))

    # -- 5. bodies -----------------------------------------------------------------
    def block(self, c):
        return Block(self._nodes(c), self._trivia(c))

    def label(self, c):
        return Label(self.value(c[0]), self._trivia(c))

    def callprototype(self, c):
        v = self.value
        returns = params = None
        name = None
        for part in c[1:-1]:
            if isinstance(part, Token):
                name = v(part)
            elif name is None:
                returns = part
            else:
                params = part
        return CallPrototype(returns, name, params, self._trivia(c))

    def label_list(self, c):
        return LabelList(self.value(c[0]), self._values(c, "IDENT"), self._trivia(c))

    # -- 6. instructions ---------------------------------------------------------------
    def instruction(self, c):
        v = self.value
        guard = None
        i = 0
        if c[0] == "@":
            negated = c[1] == "!"
            i = 3 if negated else 2
            guard = Guard(v(c[i - 1]), negated)
        opcode = v(c[i])
        modifiers, operands = [], []
        for part in c[i + 1:]:
            if isinstance(part, Token):
                if part.type == "DOTNAME":
                    modifiers.append(v(part))
            else:
                operands.append(as_operand(part))
        check_operands(c[i], operands)
        return Instruction(guard, opcode, tuple(modifiers), tuple(operands), self._trivia(c))

    def suffixed(self, c):
        base, suffix = c
        tr = self._trivia(c)
        if isinstance(base, Address):
            return Address(base.items, self.value(suffix), base.trivia + tr)
        return name_node(self.value(base), self.value(suffix), self._trivia(c))

    def pred_pair(self, c):
        return PredPair(c[0], c[2], self._trivia(c))

    def vector(self, c):
        return Vector(self._nodes(c), self._trivia(c))

    def address(self, c):
        items = self._nodes(c)
        if len(items) == 1:
            check_address(c[0], items[0])
        return Address(items, None, self._trivia(c))

    def paren_list(self, c):
        return ParenList(tuple(as_operand(n) for n in self._nodes(c)), self._trivia(c))

    def sink(self, c):
        return Sink(self._trivia(c))

    # -- 7. expressions --------------------------------------------------------------------
    def conditional(self, c):
        return Conditional(c[0], c[2], c[4], self._trivia(c))

    def binary(self, c):
        return BinaryExpr(c[0], self.value(c[1]), c[2], self._trivia(c))

    def unary(self, c):
        if c[0] == "-" and isinstance(c[1], FloatLiteral) and c[1].text[:2].lower() in ("0f", "0d"):
            raise GrammarCheck(c[0], "a hex float literal takes no sign (write the negative bit pattern)")
        return UnaryExpr(self.value(c[0]), c[1], self._trivia(c))

    def cast(self, c):
        return Cast(self.value(c[1]), c[3], self._trivia(c))

    def int_literal(self, c):
        return IntLiteral(self.value(c[0]), self._trivia(c))

    def float_literal(self, c):
        return FloatLiteral(self.value(c[0]), self._trivia(c))

    def name(self, c):
        return name_node(self.value(c[0]), None, self._trivia(c))

    def paren(self, c):
        return Paren(c[1], self._trivia(c))

    def indexed(self, c):
        return Indexed(self.value(c[0]), c[2], self._trivia(c))

    def applied(self, c):
        return Applied(self.value(c[0]), c[2], self._trivia(c))
