"""Operand values of the DSL and their conversion to tree nodes.

    r = reg.b32("%r", 8)      # .reg .b32 %r<8>;   r[3] is %r3
    r[3]                      # a register            -> %r3
    v[1].x                    # a vector component    -> %v1.x
    ~p[1]                     # a negated predicate   -> !%p1
    p[1] | p[2]               # a predicate pair      -> %p1|%p2
    (r[1], r[2])              # a vector              -> {%r1, %r2}
    [rd[1] + 8]               # an address            -> [%rd1+8]
    5, -5                     # integers              -> 5, -5
    imm("0x1F"), fimm("0f3F800000")   # literals spelled exactly
    sreg.tid.x                # special registers     -> %tid.x
    sym("kernel_param_0")     # labels, variables, params, functions
    sink                      # the `_` result

Values are plain Python objects; every use makes fresh nodes, so one value can
appear in many statements.
"""

from __future__ import annotations

from ptx2py.ptxgrammar.isa.special_registers import is_special_register
from ptx2py.ptxgrammar.tree import (
    Address,
    Applied,
    BinaryExpr,
    Cast,
    Conditional,
    FloatLiteral,
    Indexed,
    InitField,
    InitList,
    IntLiteral,
    Negation,
    Paren,
    ParenList,
    PredPair,
    Register,
    SectionRef,
    Sink,
    SpecialRegister,
    Symbol,
    UnaryExpr,
    Vector,
)

from .errors import DSLError

COMPONENTS = ("x", "y", "z", "w", "r", "g", "b", "a")


class Value:
    """Base of DSL operand values: `_node()` makes a fresh tree node."""

    __slots__ = ()

    def _node(self):
        raise NotImplementedError

    def __invert__(self):
        return Neg(self)

    def __or__(self, other):
        return Pair(self, other)

    def __ror__(self, other):
        return Pair(other, self)

    def __add__(self, other):
        return Expr(self, "+", other)

    def __sub__(self, other):
        return Expr(self, "-", other)


class Name(Value):
    """A register (`%r5`), special register or symbol (`%`-less register, label, variable)."""

    __slots__ = ("name", "component", "kind", "shape")

    def __init__(self, name: str, component: str | None = None, kind=None):
        self.name = name
        self.component = component
        self.shape = None   # its part of a statement's shape (see quiet._name_shape)
        if kind is None:
            if name[:1] != "%":
                kind = Symbol
            elif is_special_register(name):
                kind = SpecialRegister
            else:
                kind = Register
        self.kind = kind

    def _node(self):
        return self.kind(self.name, self.component)

    def __repr__(self):
        return f"<{self.name}{self.component or ''}>"


def _component(attr: str):
    """`v[1].x`: the component `attr` of a name that has none yet (a property, not a
    `__getattr__`: attribute reads of names stay plain slot reads)."""
    def get(self):
        if self.component is None:
            return Name(self.name, "." + attr, self.kind)
        raise AttributeError(attr)
    return property(get)


for _c in COMPONENTS:
    setattr(Name, _c, _component(_c))
del _c


class RegFile:
    """`.reg .b32 %r<N>`: `r[i]` is `%r{i}` for 0 <= i < N."""

    __slots__ = ("base", "count", "names")

    def __init__(self, base: str, count: int):
        self.base, self.count = base, count
        names = _POOL.get(base)
        if names is None:
            if len(_POOL) >= 4096:
                _POOL.clear()
            names = _POOL[base] = _Names(base)
        self.names = names

    def __getitem__(self, i):
        try:
            v = self.names[i]
        except TypeError:  # a slice (unhashable before 3.12)
            return self.other(i)
        if v is not None and i.__class__ is int and i < self.count:
            return v
        return self.other(i)

    def other(self, i):
        """`r[i]` for anything but an int in range: r[0:4] is the vector (r[0], r[1], r[2],
        r[3]); the rest is an error."""
        if i.__class__ is slice:
            return tuple([self[j] for j in range(*i.indices(1 << 62))])
        if i.__class__ is not int:
            raise DSLError(f"register index for {self.base}<{self.count}> must be an int, not {type(i).__name__}")
        raise DSLError(f"register {self.base}{i} is out of range: declared {self.base}<{self.count}>")

    def __repr__(self):
        return f"<{self.base}<{self.count}>>"


class _Names(dict):
    """The registers `base0`, `base1`, ... made so far, shared by every family of that base
    (every function declares `%r<N>` again; a name is immutable but for its cached shape).
    A miss makes the name of an int >= 0 (no KeyError raised), else gives None."""

    __slots__ = ("base",)

    def __init__(self, base: str):
        super().__init__()
        self.base = base

    def __missing__(self, i):
        if i.__class__ is not int or i < 0:
            return None
        v = self[i] = Name(f"{self.base}{i}")
        return v


_POOL: dict = {}   # base -> its _Names


class SpecialRegisters:
    """`sreg.tid.x` -> %tid.x, `sreg.laneid`, `sreg.envreg3`."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        name = "%" + attr
        if not is_special_register(name):
            raise DSLError(f"unknown special register %{attr}")
        v = Name(name, None, SpecialRegister)
        setattr(self, attr, v)
        return v


class Lit(Value):
    __slots__ = ("text", "cls")

    def __init__(self, text: str, cls):
        self.text, self.cls = text, cls

    def _node(self):
        return self.cls(self.text)


class Neg(Value):
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def _node(self):
        return Negation(to_node(self.value))


class Pair(Value):
    __slots__ = ("first", "second")

    def __init__(self, first, second):
        self.first, self.second = first, second

    def _node(self):
        return PredPair(to_node(self.first), to_node(self.second))


class Expr(Value):
    __slots__ = ("left", "op", "right")

    def __init__(self, left, op, right):
        self.left, self.op, self.right = left, op, right

    def _node(self):
        chain = []                   # a left-leaning chain, converted without recursion
        e = self
        while e.__class__ is Expr:
            chain.append(e)
            e = e.left
        node = to_node(e)
        for link in reversed(chain):
            node = BinaryExpr(node, link.op, to_node(link.right))
        return node


class Node(Value):
    """A generic operand: a node class and its arguments (converted on use)."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make

    def _node(self):
        return self.make()


class SinkValue(Value):
    __slots__ = ()

    def _node(self):
        return Sink()


sink = SinkValue()
sreg = SpecialRegisters()


def sym(name: str, component: str | None = None) -> Name:
    """A `%`-less name: label, variable, parameter, function, or register."""
    return Name(name, component, Symbol)


def regn(name: str, component: str | None = None) -> Name:
    """A `%`-register by its full name (one not declared with a `<N>` count)."""
    return Name(name, component)


def imm(text: str) -> Lit:
    """An integer literal spelled exactly: `imm("0x1F")`, `imm("10U")`."""
    return Lit(text, IntLiteral)


def fimm(text: str) -> Lit:
    """A float literal spelled exactly: `fimm("0f3F800000")`, `fimm("1.5")`."""
    return Lit(text, FloatLiteral)


def expr(left, op: str, right, *more) -> Expr:
    """`a op b`; `expr(a, "+", b, "+", c)` is the left-leaning chain `(a + b) + c`
    (flat in Python, so a 5000-term PTX sum is one call, not 5000 nested ones)."""
    if len(more) % 2:
        from .errors import DSLError

        raise DSLError("expr() takes operands and operators in turn: expr(a, op, b, op, c, ...)")
    e = Expr(left, op, right)
    for i in range(0, len(more), 2):
        e = Expr(e, more[i], more[i + 1])
    return e


def unary(op: str, value) -> Value:
    return Node(lambda: UnaryExpr(op, to_node(value)))


def neg(value) -> Neg:
    return Neg(value)


def pair(first, second) -> Pair:
    return Pair(first, second)


def paren(value) -> Value:
    return Node(lambda: Paren(to_node(value)))


def cast(type_: str, value) -> Value:
    return Node(lambda: Cast(type_, to_node(value)))


def cond(condition, then, otherwise) -> Value:
    return Node(lambda: Conditional(to_node(condition), to_node(then), to_node(otherwise)))


def index(name: str, i) -> Value:
    return Node(lambda: Indexed(name, to_node(i)))


def apply(function: str, value) -> Value:
    return Node(lambda: Applied(function, to_node(value)))


def addr(items, suffix: str | None = None) -> Value:
    """An address with a suffix: `addr([rd[1]], ".unified")`."""
    return Node(lambda: Address(tuple(to_node(i) for i in items), suffix))


class Args(Value):
    """A call's parenthesised list (its items are keyed by the quiet path, see `quiet`)."""

    __slots__ = ("items",)

    def __init__(self, items: tuple):
        self.items = items

    def _node(self):
        return ParenList(tuple([to_node(i) for i in self.items]))


def args(*items) -> Value:
    """A call's parenthesised list: `args(retval0)`, `args()`."""
    return Args(items)


def field(name: str, value) -> Value:
    """`name = value` in a texture/sampler initializer."""
    return Node(lambda: InitField(name, to_node(value)))


def secref(name: str, op: str | None = None, offset=None) -> Value:
    """A section used as a data value: `secref(".debug_loc", "+", 197)`."""
    off = None if offset is None else str(offset)
    return Node(lambda: SectionRef(name, op, off))


# one spelling object per value: a debug section has ~100k ints (bytes, most of them)
_INT_TEXT: dict[int, str] = {v: str(v) for v in range(256)}


def int_text(v: int) -> str:
    """The spelling of an int >= 0 (one string object per value)."""
    text = _INT_TEXT.get(v)
    if text is None:
        if len(_INT_TEXT) > 65536:
            _INT_TEXT.clear()
        text = _INT_TEXT[v] = str(v)
    return text


def _int_node(v: int):
    if v >= 0:
        return IntLiteral(int_text(v))
    return UnaryExpr("-", IntLiteral(str(-v)))


def _vector_node(v: tuple):
    return Vector(tuple([to_node(i) for i in v]))


def _address_node(v: list):
    return Address(tuple([to_node(i) for i in v]))


_CONVERT = {int: _int_node, tuple: _vector_node, list: _address_node}


def to_node(v):
    """A DSL value -> a fresh operand node; a wrong kind is a DSLError."""
    cls = v.__class__
    if cls is Name:   # the hot case: a register
        return v.kind(v.name, v.component)
    f = _CONVERT.get(cls)
    if f is not None:
        return f(v)
    if isinstance(v, Value):
        return v._node()
    if isinstance(v, RegFile):
        raise DSLError(f"{v.base}<{v.count}> is a register family, not a register: "
                       f"index it, e.g. {v.base.lstrip('%')}[0]")
    hint = " (spell literals with imm()/fimm(), names with sym())" if isinstance(v, (str, float)) else ""
    raise DSLError(f"a {type(v).__name__} is not a PTX operand{hint}")


def init_node(v):
    """An initializer value: lists are `{...}` lists here, not addresses; bytes
    (`b"text"`, `bytes.fromhex("46d2b02c ...")`) are lists of their decimal values."""
    if v.__class__ is list:
        return InitList(tuple([init_node(i) for i in v]))
    if v.__class__ is bytes:
        return InitList(tuple([IntLiteral(str(b)) for b in v]))
    return to_node(v)
