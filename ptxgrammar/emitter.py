"""The one printer: a tree back to PTX text, from structure alone.

`_emit_into` walks `_parts()` and writes each token after its trivia. The hot
node classes (instructions, plain operands, addresses, vectors, section data)
have specialised writers that append the same tokens in the same order
without building the parts tuple; every other class, and any node without
trivia, takes the generic walk.
"""

from __future__ import annotations

import functools

from .tree import (
    Address,
    Align,
    BinaryExpr,
    Block,
    Declarator,
    FloatLiteral,
    InitList,
    Instruction,
    IntLiteral,
    Label,
    Loc,
    ParenList,
    PredPair,
    Register,
    Section,
    SectionData,
    SpecialRegister,
    Symbol,
    UnaryExpr,
    VarDecl,
    Vector,
)
from .tree.base import Node
from .tree.statements import Statement


def emit(node: Node) -> str:
    """PTX text of a module or of any node (with the node's own trivia)."""
    out: list[str] = []
    _emit_into(node, out)
    if hasattr(node, "trailing"):
        out.append(node.trailing)
    return "".join(out)


def _emit_into(root, out: list, fast: bool = True) -> None:
    """Write `root` after what `out` holds. An explicit stack, not recursion: a
    5000-term constant sum is a tree 5000 levels deep."""
    style = _default_style()
    stack: list = [root]
    line_start = glue = False
    while stack:
        item = stack.pop()
        if item.__class__ is tuple:             # (node, index of its own token, token)
            node, i, tok = item
            t = node.trivia
            if t is not None:
                out.append(t[i])
            elif glue:
                out.append("")
            else:
                out.append(style.space(out[-1] if out else None, node, i, tok, line_start))
            out.append(tok)
            line_start = False
            glue = t is None and style.glues_next(node, i)
            continue
        writer = _FAST.get(item.__class__) if fast or item is not root else None
        if writer is not None and item.trivia is not None:
            writer(item, out)
            line_start = glue = False
            continue
        if item.trivia is None and isinstance(item, Statement) and out:
            line_start = True
        parts = item._parts()
        i = sum(1 for p in parts if p.__class__ is str)
        for part in reversed(parts):
            if part.__class__ is str:
                i -= 1
                stack.append((item, i, part))
            else:
                stack.append(part)


@functools.lru_cache(maxsize=1)
def _default_style():
    from .style import DEFAULT_STYLE  # style imports the tree; imported on first use

    return DEFAULT_STYLE


def _name(node, out: list) -> None:
    t = node.trivia
    if node.component is None:
        out += (t[0], node.name)
    else:
        out += (t[0], node.name, t[1], node.component)


def _literal(node, out: list) -> None:
    out += (node.trivia[0], node.text)


def _instruction(node, out: list) -> None:
    t = node.trivia
    g = node.guard
    mods = node.modifiers
    if g is None:
        if len(mods) == 1:              # `add.s32`: the opcode and its modifier in one step
            out += (t[0], node.opcode, t[1], mods[0])
            i = 2
            mods = ()
        else:
            out += (t[0], node.opcode)
            i = 1
    elif g.negated:
        out += (t[0], "@", t[1], "!", t[2], g.predicate, t[3], node.opcode)
        i = 4
    else:
        out += (t[0], "@", t[1], g.predicate, t[2], node.opcode)
        i = 3
    for m in mods:
        out += (t[i], m)
        i += 1
    operands = node.operands
    if operands:
        i = _comma_list(operands, t, i, out)
    out += (t[i], ";")


def _comma_list(items, t, i: int, out: list) -> int:
    """Operands with the owner's trivia before each `,` (t[i] onward); the next index.
    The plain leaves are written here, each with the `,` before it in one step (most
    items are leaves: data values, registers); the other nodes by their writers."""
    first = True
    for o in items:
        c = o.__class__
        ot = o.trivia
        if ot is not None:
            if c is IntLiteral or c is FloatLiteral:
                text = o.text
            elif (c is Register or c is Symbol or c is SpecialRegister) and o.component is None:
                text = o.name
            else:
                text = None
            if text is not None:    # a leaf: its lead and its spelling
                if first:
                    out += (ot[0], text)
                    first = False
                else:
                    out += (t[i], ",", ot[0], text)
                    i += 1
                continue
        if first:
            first = False
        else:
            out += (t[i], ",")
            i += 1
        if ot is None:
            _emit_into(o, out)
        elif c is Register or c is Symbol or c is SpecialRegister:
            out += (ot[0], o.name, ot[1], o.component)
        else:
            writer = _FAST.get(c)
            if writer is not None:
                writer(o, out)
            else:
                writer = _LEAF_PAIRS.get(c)
                if writer is None or not writer(o, out):
                    _emit_into(o, out)
    return i


def _leaf(o, out: list) -> None:
    """A name or literal that has trivia (the caller checked: `_is_leaf`)."""
    c = o.__class__
    ot = o.trivia
    if c is IntLiteral or c is FloatLiteral:
        out += (ot[0], o.text)
    elif o.component is None:
        out += (ot[0], o.name)
    else:
        out += (ot[0], o.name, ot[1], o.component)


def _is_leaf(o) -> bool:
    return o.__class__ in _LEAVES and o.trivia is not None


# Expressions of leaves, the common operands that are not leaves themselves (`%rd1+4` in
# an address, `-1`, `%p|%q`). Each writes only when its children are leaves with trivia
# and says so; anything deeper takes the generic walk, whose explicit stack serves
# expressions thousands of levels deep (these writers never recurse).
def _binary(node, out: list) -> bool:
    left, right = node.left, node.right
    if not (_is_leaf(left) and _is_leaf(right)):
        return False
    _leaf(left, out)
    out += (node.trivia[0], node.op)
    _leaf(right, out)
    return True


def _unary(node, out: list) -> bool:
    operand = node.operand
    if not _is_leaf(operand):
        return False
    out += (node.trivia[0], node.op)
    _leaf(operand, out)
    return True


def _pred_pair(node, out: list) -> bool:
    first, second = node.first, node.second
    if not (_is_leaf(first) and _is_leaf(second)):
        return False
    _leaf(first, out)
    out += (node.trivia[0], "|")
    _leaf(second, out)
    return True


def _list(node, out: list, open_: str, close: str) -> int:
    t = node.trivia
    out += (t[0], open_)
    i = _comma_list(node.items, t, 1, out)
    out += (t[i], close)
    return i + 1


def _address(node, out: list) -> None:
    t = node.trivia
    items = node.items
    if len(items) == 1 and node.suffix is None:     # `[%rd1]`, `[%rd1+8]`: nine addresses in ten
        x = items[0]
        xt = x.trivia
        if xt is not None:
            c = x.__class__
            if c is BinaryExpr:
                base, offset = x.left, x.right
                bt, ot = base.trivia, offset.trivia
                if (base.__class__ is Register or base.__class__ is Symbol) and bt is not None \
                        and base.component is None and offset.__class__ is IntLiteral and ot is not None:
                    out += (t[0], "[", bt[0], base.name, xt[0], x.op, ot[0], offset.text, t[1], "]")
                    return
            elif (c is Register or c is Symbol) and x.component is None:
                out += (t[0], "[", xt[0], x.name, t[1], "]")
                return
    i = _list(node, out, "[", "]")
    if node.suffix is not None:
        out += (node.trivia[i], node.suffix)


def _vector(node, out: list) -> None:   # and an initializer list: the same tokens
    _list(node, out, "{", "}")


def _paren_list(node, out: list) -> None:
    _list(node, out, "(", ")")


def _align(node, out: list) -> None:
    t = node.trivia
    out += (t[0], ".align", t[1], node.value)


def _section_data(node, out: list) -> None:
    t = node.trivia
    values = node.values
    if len(values) == 1:                  # `.b8 144`: most lines of a debug section
        v = values[0]
        vt = v.trivia
        if v.__class__ is IntLiteral and vt is not None:
            out += (t[0], node.directive, vt[0], v.text)
            return
    out += (t[0], node.directive)
    _comma_list(values, t, 1, out)


def _label(node, out: list) -> None:
    t = node.trivia
    out += (t[0], node.name, t[1], ":")


def _loc(node, out: list) -> None:
    t = node.trivia
    out += (t[0], ".loc", t[1], node.file, t[2], node.line, t[3], node.column)
    if node.function_name is None:
        return
    out += (t[4], ",", t[5], "function_name", t[6], node.function_name)
    i = 7
    if node.function_offset is not None:
        out += (t[7], "+", t[8], node.function_offset)
        i = 9
    f, line, column = node.inlined_at
    out += (t[i], ",", t[i + 1], "inlined_at", t[i + 2], f, t[i + 3], line, t[i + 4], column)


def _var_decl(node, out: list) -> None:
    t = node.trivia
    i = 0
    for word in node.linkage:
        out += (t[i], word)
        i += 1
    out += (t[i], node.space)
    i += 1
    for a in node.attrs:
        if a.__class__ is str:
            out += (t[i], a)
            i += 1
        else:                       # `.align 4`, `.attribute(...)`: nodes with their own trivia
            _emit_into(a, out)
    first = True
    for d in node.declarators:
        if first:
            first = False
        else:
            out += (t[i], ",")
            i += 1
        if d.trivia is None:
            _emit_into(d, out)
        else:
            _declarator(d, out)
    out += (t[i], ";")


def _declarator(node, out: list) -> None:
    t = node.trivia
    out += (t[0], node.name)
    i = 1
    if node.count is not None:
        out += (t[1], "<", t[2], node.count, t[3], ">")
        i = 4
    for d in node.dims:
        if d:
            out += (t[i], "[", t[i + 1], d, t[i + 2], "]")
            i += 3
        else:
            out += (t[i], "[", t[i + 1], "]")
            i += 2
    if node.init is not None:
        out += (t[i], "=")
        _emit_into(node.init, out)


def _statements(items, out: list) -> None:
    """The statements of a body or section, each dispatched here directly; the tokens of
    each _JOIN_EVERY of them are then joined into one string (a long body or section held
    ~100 list slots a statement until the end: the loop's peak memory)."""
    fast_writers = _FAST
    for start in range(0, len(items), _JOIN_EVERY):
        mark = len(out)
        for item in items[start:start + _JOIN_EVERY]:
            c = item.__class__
            if c is Instruction:        # most statements: no dispatch
                if item.trivia is not None:
                    _instruction(item, out)
                    continue
            fast = fast_writers.get(c)
            if fast is not None and item.trivia is not None:
                fast(item, out)
            else:
                _emit_into(item, out)
        out[mark:] = ["".join(out[mark:])]


_JOIN_EVERY = 512


def _block(node, out: list) -> None:
    t = node.trivia
    out.append(t[0])
    out.append("{")
    _statements(node.items, out)
    out.append(t[1])
    out.append("}")


def _section(node, out: list) -> None:
    t = node.trivia
    out.append(t[0])
    out.append(".section")
    out.append(t[1])
    out.append(node.name)
    out.append(t[2])
    out.append("{")
    _statements(node.items, out)
    out.append(t[3])
    out.append("}")


_FAST = {
    Register: _name, SpecialRegister: _name, Symbol: _name, IntLiteral: _literal,
    FloatLiteral: _literal, Instruction: _instruction, Address: _address, Vector: _vector,
    SectionData: _section_data, Block: _block, Label: _label, Loc: _loc,
    Section: _section, VarDecl: _var_decl, Declarator: _declarator, InitList: _vector, Align: _align,
    ParenList: _paren_list,
}
_LEAVES = frozenset((Register, SpecialRegister, Symbol, IntLiteral, FloatLiteral))
_LEAF_PAIRS = {BinaryExpr: _binary, UnaryExpr: _unary, PredPair: _pred_pair}


def default_trivia(node) -> tuple[str, ...]:
    """Spacing for a hand-built node: one space between words, none around punctuation."""
    from .style import DEFAULT_STYLE

    return DEFAULT_STYLE.trivia_for(node)


def offset_of(root: Node, target: Node) -> int | None:
    """Offset of `target`'s first token in `emit(root)` (for locating errors found
    on a tree, e.g. a statement the Python generator cannot write); None if absent."""
    pos = 0
    stack: list = [root]
    while stack:
        item = stack.pop()
        if item.__class__ is tuple:
            pos += len(item[0]) + len(item[1])
            continue
        if item is target:
            return pos + len(target.leading)
        parts = item._parts()
        trivia = item.trivia if item.trivia is not None else default_trivia(item)
        i = sum(1 for p in parts if p.__class__ is str)
        for part in reversed(parts):
            if part.__class__ is str:
                i -= 1
                stack.append((trivia[i], part))
            else:
                stack.append(part)
    return None
