"""Hypothesis strategies that draw PTX trees (with trivia) for property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from ptx2py.ptxgrammar.build import name_node
from ptx2py.ptxgrammar.tree import (
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

TRIVIA = st.sampled_from([" ", "\t", " \t", "\n\t", "  ", "\r\n\t", " /* c1 */ ", "\t// note 7\n\t", "\n\n  "])
LEADING = st.sampled_from(["\n\t", "\n\n\t", "\r\n  ", "\n\t// comment 3\n\t", "\n", "\n\t/* x */ "])

word = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
register_name = st.from_regex(r"%(r|rd|f|p|rs|t_)[0-9]{1,4}", fullmatch=True)
symbol_name = st.from_regex(r"[a-z][a-z0-9_]{0,8}|\$L__BB[0-9]{1,2}_[0-9]{1,3}", fullmatch=True)
modifier = st.from_regex(r"\.([a-z][a-z0-9_]{0,5}|[0-9]{1,2}[a-z][a-z0-9]{0,3})(::[a-z0-9_]{1,5})?", fullmatch=True)
int_text = st.one_of(
    st.integers(0, 10**12).map(str),
    st.integers(0, 2**32).map(lambda v: hex(v)),
    st.integers(1, 2**16).map(lambda v: f"{v}U"),
)
float_text = st.one_of(
    st.integers(0, 2**32 - 1).map(lambda v: f"0f{v:08X}"),
    st.integers(0, 2**64 - 1).map(lambda v: f"0d{v:016X}"),
    st.floats(0, 1e6, allow_nan=False).map(lambda v: repr(float(v))),
)

register = register_name.map(name_node)
immediate = st.one_of(int_text.map(IntLiteral), float_text.map(FloatLiteral))
source = st.one_of(
    register, immediate, symbol_name.map(name_node),
    register.map(lambda r: Negation(r)),
    int_text.map(lambda t: UnaryExpr("-", IntLiteral(t))),
)
address = st.one_of(
    register.map(lambda r: Address((r,))),
    st.tuples(register, int_text).map(lambda p: Address((BinaryExpr(p[0], "+", IntLiteral(p[1])),))),
    st.tuples(register, int_text).map(
        lambda p: Address((BinaryExpr(p[0], "+", UnaryExpr("-", IntLiteral(p[1]))),))),
)
vector = st.lists(st.one_of(register, st.just(Sink())), min_size=1, max_size=4).map(lambda xs: Vector(tuple(xs)))
result = st.one_of(register, vector, st.just(Sink()))


@st.composite
def instructions(draw):
    guard = draw(st.none() | st.tuples(register_name, st.booleans()).map(lambda g: Guard(*g)))
    operands = [draw(result)] if draw(st.booleans()) else []
    operands += draw(st.lists(st.one_of(source, address, vector.filter(lambda v: Sink() not in v.items)),
                              max_size=4))
    return Instruction(guard, draw(word), tuple(draw(st.lists(modifier, max_size=4))), tuple(operands))


declarations = st.tuples(st.sampled_from([".b32", ".b64", ".pred", ".f32"]), register_name, st.integers(1, 999)).map(
    lambda d: VarDecl((), ".reg", (d[0],), (Declarator(d[1].rstrip("0123456789") or "%r", str(d[2])),)))
labels = symbol_name.map(Label)
locs = st.tuples(st.integers(1, 9), st.integers(0, 9999), st.integers(0, 200)).map(
    lambda t: Loc(str(t[0]), str(t[1]), str(t[2])))
statements = st.one_of(instructions(), instructions(), declarations, labels, locs)


def fill_trivia(node, draw, leading: str) -> None:
    """Give every node of a hand-built tree explicit trivia (first token: `leading`)."""
    first = True
    for n in node.walk():
        count = len(n.tokens())
        if hasattr(n, "trivia") and n.__class__ is not Module:
            values = [draw(TRIVIA) for _ in range(count)]
            if first and values:
                values[0] = leading
                first = False
            n.trivia = tuple(values)


@st.composite
def modules(draw):
    """A module with a header and one kernel whose body holds drawn statements."""
    body = []
    for stmt in draw(st.lists(statements, min_size=1, max_size=12)):
        fill_trivia(stmt, draw, draw(LEADING))
        body.append(stmt)
    maxntid = PerfDirective(".maxntid", tuple(str(draw(st.integers(1, 1024))) for _ in range(draw(st.integers(1, 3)))))
    params = ParamList(tuple(Param(".param", (".u64",), f"k_param_{i}") for i in range(draw(st.integers(0, 3)))))
    head = FunctionHead((".visible",), ".entry", None, draw(word), params, (maxntid,))
    fill_trivia(head, draw, "\n\n")
    block = Block(tuple(body), ("\n", draw(st.sampled_from(["\n", "\n\n", "\r\n"]))))
    header = [Version(draw(st.sampled_from(["8.0", "9.0", "08.70"])), ("", " ")),
              Target((draw(st.sampled_from(["sm_90a", "sm_80", "sm_100a"])),), ("\n", " ")),
              AddressSize("64", ("\n", " "))]
    return Module((*header, Function(head, block, ())), draw(st.sampled_from(["", "\n", "\n\n"])), ())


def without_trivia(node):
    """The same tree with every node's trivia None (compare structure only)."""
    import dataclasses

    if isinstance(node, tuple):
        return tuple(without_trivia(n) for n in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {f.name: without_trivia(getattr(node, f.name)) for f in dataclasses.fields(node)}
    if "trivia" in changes and node.__class__ is not Module:
        changes["trivia"] = None
    return dataclasses.replace(node, **changes)


@st.composite
def bare_modules(draw):
    """A module drawn by `modules()` with all trivia removed (a hand-built tree)."""
    return without_trivia(draw(modules()))



# --- every construct of the grammar --------------------------------------------------------
# The drawn trees are canonical (what the parser builds for their text), so emit -> parse
# gives the same tree; `any_modules()` draws them with trivia or without (hand-built).

name = st.from_regex(r"[a-z][a-z0-9_]{0,6}|\$L__[a-z]{1,4}[0-9]{1,2}|_Z[0-9][a-z]{1,5}", fullmatch=True).filter(
    lambda n: n not in ("_",))
label_name = st.from_regex(r"\$L__BB[0-9]_[0-9]{1,2}|L[a-z]{1,3}[0-9]{1,2}|\$Ltmp[0-9]", fullmatch=True)
small_int = st.integers(0, 4096).map(str)
TYPES = [".b8", ".b16", ".b32", ".b64", ".u32", ".s32", ".u64", ".f32", ".f64", ".pred"]
BINARY_OPS = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||", "<", ">", "<=", ">=", "==", "!="]


def leaf_expr():
    return st.one_of(int_text.map(IntLiteral), float_text.map(FloatLiteral), name.map(Symbol))


def _paren_if_needed(e):
    """A binary or conditional operand of a unary/cast/binary right side is parenthesised, as
    the grammar's precedence requires for the tree to survive (and `-0f3F800000` is refused:
    a hex float takes no sign, so a float under a unary operator is parenthesised too)."""
    return Paren(e) if e.__class__ in (BinaryExpr, Conditional, FloatLiteral) else e


def _paren_if_compound(e):
    return Paren(e) if e.__class__ in (BinaryExpr, Conditional) else e


def expressions(max_leaves: int = 12):
    """Constant expressions of every form (ISA 4.6), canonical for the grammar's precedence."""
    def extend(inner):
        return st.one_of(
            st.tuples(st.sampled_from("-~!"), inner).map(lambda t: UnaryExpr(t[0], _paren_if_needed(t[1]))),
            st.tuples(inner, st.sampled_from(BINARY_OPS), inner).map(
                # both sides of a binary operator parenthesised when compound: `0 << 0 + 0` is
                # `0 << (0 + 0)` by precedence, so a drawn (0 << 0) + 0 needs its brackets
                lambda t: BinaryExpr(_paren_if_compound(t[0]), t[1], _paren_if_compound(t[2]))),
            inner.map(Paren),
            st.tuples(st.sampled_from([".s64", ".u32", ".s32"]),
                      inner).map(lambda t: Cast(t[0], _paren_if_needed(t[1]))),
            st.tuples(inner, inner, inner).map(lambda t: Conditional(_paren_if_needed(t[0]), t[1], t[2])),
        )
    return st.recursive(leaf_expr(), extend, max_leaves=max_leaves)


def long_sum(terms: int, op: str = "+"):
    e = IntLiteral("1")
    for _ in range(terms - 1):
        e = BinaryExpr(e, op, IntLiteral("1"))
    return e


def deep_parens(depth: int):
    e = IntLiteral("7")
    for _ in range(depth):
        e = Paren(e)
    return e


big_expressions = st.one_of(
    st.tuples(st.sampled_from([60, 201, 450]), st.sampled_from(["+", "*", "|"])).map(lambda t: long_sum(*t)),
    st.sampled_from([10, 60, 150]).map(deep_parens),
)

initializers = st.recursive(
    st.one_of(expressions(6), name.map(lambda n: Applied("generic", Symbol(n))),
              name.map(lambda n: Applied("0xFF", Symbol(n))),
              st.tuples(name, small_int).map(lambda t: Indexed(t[0], IntLiteral(t[1])))),
    lambda inner: st.lists(inner, max_size=4).map(lambda xs: InitList(tuple(xs))),
    max_leaves=8,
)
sampler_init = st.lists(st.tuples(st.sampled_from(["filter_mode", "addr_mode_0"]), name), min_size=1,
                        max_size=2).map(lambda fs: InitList(tuple(InitField(f, Symbol(v)) for f, v in fs)))

align = small_int.map(lambda v: Align(str(1 << (int(v) % 8))))
attribute = st.builds(Attribute, st.just(".managed"))  # fresh nodes: fill_trivia edits them in place


@st.composite
def module_variables(draw):
    linkage = draw(st.lists(st.sampled_from([".visible", ".extern", ".weak", ".common"]), max_size=1, unique=True))
    space = draw(st.sampled_from([".global", ".const", ".shared"]))
    attrs = draw(st.lists(st.one_of(align, attribute, st.just(".v4")), max_size=2))
    if draw(st.booleans()) and space == ".global":
        return VarDecl(tuple(linkage), space, (".texref",), (Declarator(draw(name), None, (), draw(sampler_init)),))
    decls = []
    for n in draw(st.lists(name, min_size=1, max_size=3, unique=True)):
        dims = tuple(draw(st.lists(st.one_of(small_int, st.just("")), max_size=2)))
        init = draw(st.none() | initializers | big_expressions)
        decls.append(Declarator(n, None, dims, init))
    return VarDecl(tuple(linkage), space, (*attrs, draw(st.sampled_from(TYPES))), tuple(decls))


@st.composite
def params(draw, names=None):
    attrs = [draw(st.sampled_from(TYPES[:9]))]
    if draw(st.booleans()):
        attrs.insert(0, draw(align))
    if draw(st.booleans()):
        attrs += [".ptr", *draw(st.sampled_from([[], [".global"], [".shared"]])), *draw(st.lists(align, max_size=1))]
    dim = draw(st.none() | small_int | st.just(""))
    return Param(".param", tuple(attrs), draw(name if names is None else names), dim)


def param_lists(names=None):
    return st.lists(params(names), max_size=3).map(lambda ps: ParamList(tuple(ps)))


perf = st.one_of(
    st.tuples(st.sampled_from([".maxntid", ".reqntid"]), st.lists(small_int, min_size=1, max_size=3)).map(
        lambda t: PerfDirective(t[0], tuple(t[1]))),
    small_int.map(lambda v: PerfDirective(".minnctapersm", (v,))),
    st.builds(PerfDirective, st.just(".noreturn"), st.just(())),
    st.builds(Pragma, st.just(('"nounroll"',))),
)

locs_inlined = st.tuples(small_int, small_int, small_int, name, st.none() | small_int).map(
    lambda t: Loc(t[0], t[1], t[2], "$L__info_string" + t[0], t[4], ("1", t[1], t[2])))

call_instructions = st.one_of(
    st.tuples(st.booleans(), name, st.lists(name, max_size=3)).map(lambda t: Instruction(
        None, "call", (".uni",) if t[0] else (),
        (ParenList((Symbol("retval0"),)), Symbol(t[1]), ParenList(tuple(map(Symbol, t[2]))))
        if t[2] else (ParenList((Symbol("retval0"),)), Symbol(t[1]))) if len(t[2]) != 1 else Instruction(
        None, "call", (), (Symbol(t[1]), ParenList((Symbol(t[2][0]),))))),
    st.tuples(register_name, name).map(lambda t: Instruction(
        None, "call", (), (ParenList((Symbol("retval0"),)), name_node(t[0]), ParenList((Symbol("param0"),)),
                           Symbol(t[1])))),
)
special = st.sampled_from(["%tid", "%ntid", "%ctaid"]).flatmap(
    lambda n: st.sampled_from([".x", ".y", ".z"]).map(lambda c: SpecialRegister(n, c)))
def _typed_otherwise_as_operand(e) -> bool:
    """`!a`, `a|b` and `(a)` as a whole operand are a negation, a predicate pair and a
    parenthesised list (grammar section 6), not expressions: drawn by `source` instead."""
    names = (Register, Symbol)
    return ((e.__class__ is UnaryExpr and e.op == "!" and isinstance(e.operand, names))
            or (e.__class__ is BinaryExpr and e.op == "|" and isinstance(e.left, names)
                and isinstance(e.right, names))
            or (e.__class__ is Paren and isinstance(e.inner, names)))


operand_expressions = expressions(5).filter(lambda e: not _typed_otherwise_as_operand(e))
expression_instructions = st.tuples(register_name, st.one_of(operand_expressions, special, big_expressions)).map(
    lambda t: Instruction(None, "mov", (".u32",), (name_node(t[0]), t[1])))


@st.composite
def body_statements(draw, depth: int = 0):
    kind = draw(st.sampled_from(["insn", "insn", "call", "expr", "decl", "local", "label", "loc", "loc2",
                                 "pragma", "proto", "targets", "block"]))
    if kind == "insn":
        return [draw(instructions())]
    if kind == "call":
        return [draw(call_instructions)]
    if kind == "expr":
        return [draw(expression_instructions)]
    if kind == "decl":
        return [draw(declarations)]
    if kind == "local":
        return [VarDecl((), draw(st.sampled_from([".local", ".shared"])), (draw(align), draw(st.sampled_from(TYPES))),
                        (Declarator(draw(name), None, (draw(small_int),), None),))]
    if kind == "label":
        return [Label(draw(label_name))]
    if kind == "loc":
        return [draw(locs)]
    if kind == "loc2":
        return [draw(locs_inlined)]
    if kind == "pragma":
        return [Pragma(('"nounroll"',))]
    if kind == "proto":
        returns = draw(st.none() | param_lists(st.just("_")))
        return [Label(draw(label_name)), CallPrototype(returns, "_", draw(param_lists(st.just("_"))))]
    if kind == "targets":
        return [Label(draw(label_name)), LabelList(draw(st.sampled_from([".calltargets", ".branchtargets"])),
                                                   tuple(draw(st.lists(name, min_size=1, max_size=3))))]
    if depth >= 3:
        return [draw(instructions())]
    inner = [s for _ in range(draw(st.integers(0, 3))) for s in draw(body_statements(depth + 1))]
    return [Block(tuple(inner))]


section_values = st.one_of(
    st.lists(small_int.map(lambda v: IntLiteral(str(int(v) % 256))), min_size=1, max_size=6),
    st.tuples(label_name, label_name).map(lambda t: [BinaryExpr(Symbol(t[0]), "-", Symbol(t[1]))]),
    st.tuples(label_name, small_int).map(lambda t: [BinaryExpr(Symbol(t[0]), "+", IntLiteral(t[1]))]),
    st.tuples(st.sampled_from([".debug_abbrev", ".debug_info", ".debug_loc"]), st.none() | small_int).map(
        lambda t: [SectionRef(t[0], None if t[1] is None else "+", t[1])]),
    label_name.map(lambda n: [Symbol(n)]),
)


@st.composite
def sections(draw):
    items = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            items.append(Label(draw(label_name)))
        items.append(SectionData(draw(st.sampled_from([".b8", ".b16", ".b32", ".b64"])), tuple(draw(section_values))))
    return Section(draw(st.sampled_from([".debug_info", ".debug_abbrev", ".debug_str", ".debug_loc"])), tuple(items))


@st.composite
def functions(draw):
    kind = draw(st.sampled_from([".entry", ".func"]))
    linkage = tuple(draw(st.lists(st.sampled_from([".visible", ".extern", ".weak"]), max_size=1)))
    returns = draw(st.none() | param_lists()) if kind == ".func" else None
    head = FunctionHead(linkage, kind, returns, draw(name), draw(st.none() | param_lists()),
                        tuple(draw(st.lists(perf, max_size=2))))
    if ".extern" in linkage or draw(st.integers(0, 5)) == 0:
        return Function(head, None, None)
    body = [s for _ in range(draw(st.integers(0, 10))) for s in draw(body_statements())]
    return Function(head, Block(tuple(body)), None)


@st.composite
def bare_full_modules(draw):
    """A module of every construct, without trivia (the emitter's default spacing)."""
    items = [Version(draw(st.sampled_from(["8.0", "9.0", "7.8"]))),
             Target(tuple(draw(st.lists(st.sampled_from(["sm_90a", "sm_80", "debug", "texmode_unified"]),
                                        min_size=1, max_size=2, unique=True)))),
             AddressSize(draw(st.sampled_from(["64", "32"])))]
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["var", "var", "func", "func", "func", "file", "alias", "pragma", "section"]))
        if kind == "var":
            items.append(draw(module_variables()))
        elif kind == "func":
            items.append(draw(functions()))
        elif kind == "file":
            items.append(File(draw(small_int), f'"{draw(name)}.cu"', tuple(draw(st.lists(small_int, max_size=2)))))
        elif kind == "alias":
            items.append(Alias(draw(name), draw(name)))
        elif kind == "pragma":
            items.append(Pragma(('"nounroll"',)))
        else:
            items.append(draw(sections()))
    # A fresh copy: leaves drawn by st.just are shared, and full_modules fills trivia in place.
    return without_trivia(Module(tuple(items), draw(st.sampled_from(["", "\n"])), ()))


@st.composite
def full_modules(draw):
    """`bare_full_modules()` with drawn trivia on every token."""
    module = draw(bare_full_modules())
    for item in module.items[1:]:
        fill_trivia(item, draw, draw(LEADING))
    module.items[0].trivia = (draw(st.sampled_from(["", "// head\n", "\n"])), draw(st.sampled_from([" ", "\t"])))
    return module


def any_modules():
    return st.one_of(modules(), bare_modules(), full_modules(), bare_full_modules())
