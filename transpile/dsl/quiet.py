"""The quiet path: a statement of a known shape built with its trivia, without a walk.

With no fmt=/lead=/at=, no trivia table and no checks, `Recorder.record` gives a statement
exactly the trivia its shape (and the recorder's depth, asm state and previous lead) fixes,
and that shape follows from the call's values alone. So the trivia of a key's first
statement (recorded the slow way) are kept under a key made of the values' kinds, and the
next statements of that key are built with their trivia directly. Pending comment lines,
a tail or an `indent=` change only the statement's lead: it is assembled as `record`
assembles it (`_lead`), the rest of its trivia still comes from the key.

Each function returns (the statement built and appended, None) on a known key; else
(None, a miss for `remember` once `record` has given the statement its trivia, or None:
off the quiet path).
"""

from __future__ import annotations

from ptx2py.ptxgrammar.tree import (
    Address,
    Align,
    BinaryExpr,
    Declarator,
    Guard,
    InitList,
    Instruction,
    IntLiteral,
    Label,
    Loc,
    ParenList,
    Register,
    SectionData,
    Sink,
    SpecialRegister,
    Symbol,
    UnaryExpr,
    VarDecl,
    Vector,
)

from ..style import asm_context, prev_tag, token_class
from .operands import _INT_TEXT, Args, Expr, Name, Neg, SinkValue, int_text
from .trivia_check import check_trivia

_INT, _NEG, _SINK = "int", "-int", "_"
_LEAD_WHAT = "the trivia before this statement (ptx.text/tail/comment lines, indent=, lead=)"


# --- keys -------------------------------------------------------------------------

_SHAPES: dict = {}        # (kind, name class, component class) -> a small int: keys hash fast
_NAME_SHAPES: dict = {}   # (kind, name, component) -> its shape (names repeat in every function)


def _name_shape(v: Name):
    s = v.shape
    if s is None:
        c = v.component
        named = (v.kind, v.name, c)
        s = _NAME_SHAPES.get(named)
        if s is None:
            t = (v.kind, token_class(v.name), None if c is None else token_class(c))
            s = _SHAPES.setdefault(t, len(_SHAPES) + 1)   # never 0: `v.shape or ...`
            if len(_NAME_SHAPES) < 1_000_000:
                _NAME_SHAPES[named] = s
        v.shape = s
    return s


def _value_key(v):
    """The shape key of an operand value; None: not keyed (the slow path converts it)."""
    cls = v.__class__
    if cls is Name:
        return v.shape or _name_shape(v)
    if cls is int:
        return _INT if v >= 0 else _NEG
    if cls is tuple or cls is list:
        if len(v) == 1 and v[0].__class__ is Name:   # `[rd[1]]`: the usual address
            return (cls, v[0].shape or _name_shape(v[0]))
        keys = [_value_key(x) for x in v]
        return None if None in keys else (cls, *keys)
    if cls is Expr:
        left, right = _value_key(v.left), _value_key(v.right)
        return None if left is None or right is None else (Expr, v.op, left, right)
    if cls is SinkValue:
        return _SINK
    if cls is Args:
        keys = [_value_key(x) for x in v.items]
        return None if None in keys else (Args, *keys)
    return None


def _shapes(key: list, values) -> bool:
    """Append each value's shape key to `key`; False when one is not keyed."""
    for o in values:
        cls = o.__class__
        if cls is Name:
            key.append(o.shape or _name_shape(o))
        elif cls is int:
            key.append(_INT if o >= 0 else _NEG)
        else:
            k = _value_key(o)
            if k is None:
                return False
            key.append(k)
    return True


# --- the lead -----------------------------------------------------------------------

def _led_asm(rec, indent) -> bool:
    """The asm state a statement led by the pending lines sees (as `record` reads it)."""
    if indent is not None:
        check_trivia(indent, "indent")
    return asm_context(rec.pending_text(), rec.asm) if rec.lines or rec.tail else rec.asm


def _lead(rec, asm: bool, indent, hit, key) -> tuple:
    """The statement's own trivia when its lead is assembled from the pending lines or
    `indent=` (as `record` does it: the lead, then the L value the next statement sees).
    `key`: nothing was pending, so the hit learns the plain lead (it came from a led one)."""
    rec.asm = asm
    lead = rec.lead_for(hit[3] if indent is None else indent)
    check_trivia(lead, _LEAD_WHAT)
    rec.prev_lead = hit[4] + rec.prev_lead
    trivia = (lead, *hit[5])
    if key is not None:
        rec.key_cache[key] = ((trivia, *hit[0][1:]), rec.prev_lead, *hit[2:6], True, hit[7])
    return trivia


def remember(rec, miss, stmt) -> None:
    """Keep under the key of `miss` what its next statements need of `stmt`, just recorded."""
    key, led = miss
    rec.key_cache[key] = keep(stmt, rec, led)


def remember_instruction(rec, miss, stmt) -> None:
    """`remember` for an instruction: operands other than names and ints get a builder
    made for the shapes of its key (`_shape_builder`) instead of `_built_nodes`' walk."""
    remember(rec, miss, stmt)
    key = miss[0]
    hit = rec.key_cache[key]
    if hit[7] is _built_nodes:
        build = _shape_builder(key[4 + (stmt.guard is not None):])
        if build is not None:
            rec.key_cache[key] = (*hit[:7], build)


def keep(stmt, rec, led: bool) -> tuple:
    """What a key keeps of its first statement: (trivia of each node in the order the
    builders here make them, the L value the next statement sees, the operands' trivia
    when every operand is a name or an int >= 0 (else None), the predicted L value, the
    statement's `prev_tag` before its L value, its own trivia after the lead, whether the
    first two hold for a statement with nothing pending: not when `stmt` was led), the
    builder of its operand nodes: (values, the operands' trivia or the whole tuple) -> nodes)."""
    out = [stmt.trivia]
    operands = _CHILDREN[stmt.__class__](stmt)
    for o in operands:
        _node_trivia(o, out)
    if all(o.__class__ in _LEAVES for o in operands):
        leaves = tuple(out[1:])
        build = _LEAF_BUILDERS[len(leaves)] if len(leaves) < len(_LEAF_BUILDERS) else _leaf_nodes
    else:
        leaves, build = None, _built_nodes
    return (tuple(out), rec.prev_lead, leaves, rec.lval, prev_tag(stmt, rec.asm, ""), stmt.trivia[1:], not led,
            build)


_LEAVES = frozenset({Register, SpecialRegister, Symbol, IntLiteral})


def _decl_children(stmt) -> list:
    return [*[a for a in stmt.attrs if a.__class__ is not str], *stmt.declarators]


# the child nodes of each statement class here, in the order its builder makes them
_CHILDREN = {Instruction: lambda s: s.operands, SectionData: lambda s: s.values,
             Loc: lambda s: (), Label: lambda s: (), VarDecl: _decl_children}


def _node_trivia(node, out: list) -> None:
    out.append(node.trivia)
    cls = node.__class__
    if cls is UnaryExpr:
        _node_trivia(node.operand, out)
    elif cls is Vector or cls is Address or cls is ParenList:
        for x in node.items:
            _node_trivia(x, out)
    elif cls is BinaryExpr:
        _node_trivia(node.left, out)
        _node_trivia(node.right, out)
    elif cls is Declarator and node.init is not None:
        _node_trivia(node.init, out)
    elif cls is InitList:
        for x in node.items:
            _node_trivia(x, out)


# --- building nodes -----------------------------------------------------------------

def _leaf_builder(n: int):
    """A function (values, trivia) -> the nodes of n names and ints >= 0, unrolled: the
    common operand lists are built without a loop."""
    if n == 0:
        return lambda values, tv: ()
    vs = [f"v{i}" for i in range(n)]
    ts = [f"t{i}" for i in range(n)]
    nodes = [f"{v}.kind({v}.name, {v}.component, {t}) if {v}.__class__ is Name"
             f" else IntLiteral(text({v}) or int_text({v}), {t})" for v, t in zip(vs, ts)]
    src = (f"def leaves(values, tv):\n {', '.join(vs)}, = values\n {', '.join(ts)}, = tv\n"
           f" return ({', '.join(nodes)},)\n")
    scope = {"Name": Name, "IntLiteral": IntLiteral, "int_text": int_text, "text": _INT_TEXT.get}
    exec(src, scope)
    return scope["leaves"]


_LEAF_BUILDERS = [_leaf_builder(n) for n in range(9)]


def _leaf_nodes(values, tv) -> tuple:
    if len(values) < 9:
        return _LEAF_BUILDERS[len(values)](values, tv)
    return tuple([v.kind(v.name, v.component, t) if v.__class__ is Name else IntLiteral(int_text(v), t)
                  for v, t in zip(values, tv)])


def _int_nodes(values, tv) -> tuple:
    """The nodes of ints >= 0 (a row of data: `ptx.data.b8(*b"name")`), without a loop here."""
    texts: list = list(map(_INT_TEXT.get, values))
    if None in texts:
        texts = list(map(int_text, values))
    return tuple(map(IntLiteral, texts, tv))


def _built_nodes(values, tv) -> tuple:
    nodes = []
    i = 1
    for o in values:
        node, i = _build(o, tv, i)
        nodes.append(node)
    return tuple(nodes)


def _build(v, tv: tuple, i: int):
    """(node of a keyed value with its trivia from tv[i:], the next index)."""
    cls = v.__class__
    if cls is Name:
        return v.kind(v.name, v.component, tv[i]), i + 1
    if cls is int:
        if v >= 0:
            return IntLiteral(_INT_TEXT.get(v) or int_text(v), tv[i]), i + 1
        return UnaryExpr("-", IntLiteral(str(-v), tv[i + 1]), tv[i]), i + 2
    if cls is SinkValue:
        return Sink(tv[i]), i + 1
    t = tv[i]
    i += 1
    if cls is Expr:
        left, i = _build(v.left, tv, i)
        right, i = _build(v.right, tv, i)
        return BinaryExpr(left, v.op, right, t), i
    items = []
    for x in (v.items if cls is Args else v):
        node, i = _build(x, tv, i)
        items.append(node)
    if cls is tuple:
        return Vector(tuple(items), t), i
    return (Address(tuple(items), None, t) if cls is list else ParenList(tuple(items), t)), i


_SHAPE_BUILDERS: dict = {}   # operand shape keys -> their builder (None: too large to unroll)
_MAX_SLOTS = 64


def _shape_builder(shapes: tuple):
    """A function (values, trivia) -> nodes for values of these shape keys (see
    `_value_key`), the nodes `_built_nodes` makes, written out: a key fixes every value's
    class, so no dispatch is left. None for more than _MAX_SLOTS nodes."""
    if shapes in _SHAPE_BUILDERS:
        return _SHAPE_BUILDERS[shapes]
    slots = [0]

    def slot() -> str:
        slots[0] += 1
        return f"tv[{slots[0]}]"

    def expr(k, e: str) -> str:
        t = slot()       # a node's trivia first, then its children's (as `_build` reads them)
        if k.__class__ is int:
            return f"{e}.kind({e}.name, {e}.component, {t})"
        if k == _INT:
            return f"IntLiteral(text({e}) or int_text({e}), {t})"
        if k == _NEG:
            return f'UnaryExpr("-", IntLiteral(str(-{e}), {slot()}), {t})'
        if k == _SINK:
            return f"Sink({t})"
        cls = k[0]
        if cls is Expr:
            left = expr(k[2], f"{e}.left")
            return f"BinaryExpr({left}, {e}.op, {expr(k[3], f'{e}.right')}, {t})"
        seq = f"{e}.items" if cls is Args else e
        items = "".join([expr(x, f"{seq}[{j}]") + ", " for j, x in enumerate(k[1:])])
        if cls is tuple:
            return f"Vector(({items}), {t})"
        return f"Address(({items}), None, {t})" if cls is list else f"ParenList(({items}), {t})"

    names = [f"v{j}" for j in range(len(shapes))]
    nodes = "".join([expr(k, v) + ", " for k, v in zip(shapes, names)])
    build = None
    if slots[0] <= _MAX_SLOTS:
        scope = {"IntLiteral": IntLiteral, "int_text": int_text, "text": _INT_TEXT.get, "UnaryExpr": UnaryExpr,
                 "Sink": Sink, "BinaryExpr": BinaryExpr, "Vector": Vector, "Address": Address,
                 "ParenList": ParenList}
        unpack = f" {', '.join(names)}, = values\n" if names else ""
        exec(f"def build(values, tv):\n{unpack} return ({nodes})\n", scope)
        build = scope["build"]
    if len(_SHAPE_BUILDERS) < 4096:
        _SHAPE_BUILDERS[shapes] = build
    return build


# --- statements ---------------------------------------------------------------------

def instruction(rec, op, operands: tuple, pred, indent=None):
    """`op(*operands, pred=pred, indent=indent)` (see the module's docstring)."""
    if rec.trivia is not None or rec.checker is not None or rec.scope_rule is not None:
        return None, None
    led = indent is not None or rec.lines or rec.tail or rec.at_start
    asm = _led_asm(rec, indent) if led else rec.asm
    key = [op, len(rec.stack), asm, rec.prev_lead]
    guard = None
    if pred is not None:   # a predicate register or its negation (else the plain path reports it)
        g = pred.value if pred.__class__ is Neg else pred
        if g.__class__ is not Name or g.component is not None:
            return None, None
        guard = Guard(g.name, pred is not g)
        key.append((pred is not g, g.shape or _name_shape(g)))
    if not _shapes(key, operands):
        return None, None
    key = tuple(key)  # type: ignore[assignment]  # the cache's key: the list, frozen
    hit = rec.key_cache.get(key)
    if hit is None:
        return None, (key, led)
    nodes = hit[7](operands, hit[2] or hit[0])
    if led or not hit[6]:
        stmt = Instruction(guard, op._opcode, op._modifiers, nodes, _lead(rec, asm, indent, hit, None if led else key))
    else:
        stmt = Instruction(guard, op._opcode, op._modifiers, nodes, hit[0][0])
        rec.prev_lead = hit[1]
    rec.items.append(stmt)
    return stmt, None


def data(rec, directive: str, values: tuple, indent=None):
    """A data row `directive values` (names, ints and the like as in instructions)."""
    if not values or rec.trivia is not None or rec.checker is not None:
        return None, None
    led = indent is not None or rec.lines or rec.tail or rec.at_start
    asm = _led_asm(rec, indent) if led else rec.asm
    v = values[0]
    one = len(values) == 1 and v.__class__ is int and v >= 0   # most rows of a debug section
    if one or (set(map(type, values)) == _INT_ONLY and min(values) >= 0):
        key: tuple = (SectionData, directive, len(values), len(rec.stack), asm, rec.prev_lead)   # ints >= 0: by length
    else:
        shapes: list = []
        if not _shapes(shapes, values):
            return None, None
        key = (SectionData, directive, tuple(shapes), len(rec.stack), asm, rec.prev_lead)
    hit = rec.key_cache.get(key)
    if hit is None:
        return None, (key, led)
    leaves = hit[2]
    if one:
        nodes = (IntLiteral(_INT_TEXT.get(v) or int_text(v), leaves[0]),)
    elif key[2].__class__ is int:
        nodes = _int_nodes(values, leaves)
    else:
        nodes = hit[7](values, leaves or hit[0])
    if led or not hit[6]:
        stmt = SectionData(directive, nodes, _lead(rec, asm, indent, hit, None if led else key))
    else:
        stmt = SectionData(directive, nodes, hit[0][0])
        rec.prev_lead = hit[1]
    rec.items.append(stmt)
    return stmt, None


_INT_ONLY = {int}


def data_rows(rec, directive: str, rows, i: int) -> int:
    """Record rows[i:] (each a tuple of values) as `data` does, while they are quiet; the
    index of the first row not recorded. A row of one int >= 0 that leaves the recorder
    as it found it (a run of them in a section) fixes the key of the next such row, so
    those are built without a key each."""
    n = len(rows)
    while i < n:
        stmt, _ = data(rec, directive, rows[i])
        if stmt is None:
            return i
        i += 1
        prev = rec.prev_lead
        if len(stmt.values) != 1 or stmt.values[0].__class__ is not IntLiteral:
            continue
        hit = rec.key_cache.get((SectionData, directive, 1, len(rec.stack), rec.asm, prev))
        if hit is None or not hit[6] or hit[1] != prev:
            continue
        trivia, leaf, text, items = hit[0][0], hit[2][0], _INT_TEXT.get, rec.items
        while i < n:
            values = rows[i]
            if len(values) != 1:
                break
            v = values[0]
            if v.__class__ is not int or v < 0:
                break
            items.append(SectionData(directive, (IntLiteral(text(v) or int_text(v), leaf),), trivia))
            i += 1
    return i


def label(rec, name, indent=None):
    """`name:`."""
    if name.__class__ is not str or rec.trivia is not None or rec.checker is not None or rec.scope_rule is not None:
        return None, None
    led = indent is not None or rec.lines or rec.tail or rec.at_start
    asm = _led_asm(rec, indent) if led else rec.asm
    key = (Label, len(rec.stack), asm, rec.prev_lead, token_class(name))
    hit = rec.key_cache.get(key)
    if hit is None:
        return None, (key, led)
    if led or not hit[6]:
        stmt = Label(name, _lead(rec, asm, indent, hit, None if led else key))
    else:
        stmt = Label(name, hit[0][0])
        rec.prev_lead = hit[1]
    rec.items.append(stmt)
    return stmt, None


def loc(rec, file, line, column, function_name, inlined_at, offset, indent=None):
    """The `.loc` of these int arguments (and function name, inlined_at triple of ints,
    int offset)."""
    if (file.__class__ is not int or line.__class__ is not int or column.__class__ is not int
            or rec.trivia is not None or rec.checker is not None or rec.scope_rule is not None):
        return None, None
    led = indent is not None or rec.lines or rec.tail or rec.at_start
    if function_name is None:
        if inlined_at is not None or offset is not None:
            return None, None
        asm = _led_asm(rec, indent) if led else rec.asm
        key = (Loc, len(rec.stack), asm, rec.prev_lead)
        inl = None
    else:
        if (function_name.__class__ is not str or inlined_at.__class__ is not tuple or len(inlined_at) != 3
                or not (offset is None or offset.__class__ is int)):
            return None, None
        f, ln, c = inlined_at
        if f.__class__ is not int or ln.__class__ is not int or c.__class__ is not int:
            return None, None
        asm = _led_asm(rec, indent) if led else rec.asm
        key = (Loc, len(rec.stack), asm, rec.prev_lead, token_class(function_name), offset is None)
        inl = (int_text(f), int_text(ln), int_text(c))
    hit = rec.key_cache.get(key)
    if hit is None:
        return None, (key, led)
    off = None if offset is None else str(offset)
    if led or not hit[6]:
        trivia = _lead(rec, asm, indent, hit, None if led else key)
    else:
        trivia = hit[0][0]
        rec.prev_lead = hit[1]
    stmt = Loc(int_text(file), int_text(line), int_text(column), function_name, off, inl, trivia)
    rec.items.append(stmt)
    return stmt, None


def declaration(rec, stmt, indent=None):
    """The declaration given its trivia and appended. `stmt`: a VarDecl built from names,
    counts, dims and initializers, nothing of it recorded yet."""
    if rec.trivia is not None or rec.checker is not None:
        return None, None
    led = indent is not None or rec.lines or rec.tail or rec.at_start
    asm = _led_asm(rec, indent) if led else rec.asm
    key = [VarDecl, stmt.linkage, stmt.space, len(rec.stack), asm, rec.prev_lead]
    for a in stmt.attrs:
        if a.__class__ is str:
            key.append(a)
        elif a.__class__ is Align and a.trivia is None:
            key.append((Align, token_class(a.value)))
        else:
            return None, None
    for d in stmt.declarators:
        init = d.init
        if init is not None and (init.__class__ is not InitList or not all(
                [x.__class__ is IntLiteral and x.text[:1] in _DIGITS for x in init.items])):
            return None, None
        key.append((token_class(d.name), d.count is None, tuple([x and token_class(x) for x in d.dims]),
                    None if init is None else len(init.items)))
    key = tuple(key)
    hit = rec.key_cache.get(key)
    if hit is None:
        return None, (key, led)
    tv = hit[0]
    if led or not hit[6]:
        stmt.trivia = _lead(rec, asm, indent, hit, None if led else key)
    else:
        stmt.trivia = tv[0]
        rec.prev_lead = hit[1]
    i = 1
    for node in _decl_children(stmt):
        i = _assign(node, tv, i)
    rec.items.append(stmt)
    return stmt, None


_DIGITS = frozenset("0123456789")


def _assign(node, tv: tuple, i: int) -> int:
    """Give a declaration's node (and its initializer's) the trivia tv[i:]; the next index."""
    node.trivia = tv[i]
    i += 1
    if node.__class__ is Declarator and node.init is not None:
        node.init.trivia = tv[i]  # type: ignore[misc]  # the quiet path's initializers are InitLists
        i += 1
        for x in node.init.items:  # type: ignore[attr-defined]
            x.trivia = tv[i]
            i += 1
    return i
