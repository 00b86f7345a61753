"""Hypothesis strategies that draw PTX trees (with trivia) for property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from ptxgrammar.build import name_node
from ptxgrammar.tree import (
    AddressSize, Address, BinaryExpr, Block, Declarator, FloatLiteral, Function, FunctionHead,
    Guard, Instruction, IntLiteral, Label, Loc, Module, Negation, Param, ParamList, PerfDirective,
    Sink, Target, UnaryExpr, VarDecl, Vector, Version,
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
