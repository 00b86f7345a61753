"""Operand checks: each operand against its form's `args` kinds (ptxgrammar/isa/spec.py, OPERAND
KINDS), register classes against the function's `.reg` declarations, and the declarations
themselves (undeclared registers and labels).

A finding is (rule, message, operand index)."""

from __future__ import annotations

import re

from ptx2py.ptxgrammar.isa.special_registers import is_special_register, special_register_type
from ptx2py.ptxgrammar.tree import operands as O

from .declarations import Declarations, function_declarations, module_declarations  # noqa: F401
from .special_widths import accepted_types

# --- register types ---------------------------------------------------------------------------

_SIZE = {"pred": 1, "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16,
         "b32": 32, "u32": 32, "s32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32, "tf32": 32, "b64": 64,
         "u64": 64, "s64": 64, "f64": 64, "b128": 128, "u16x2": 32, "s16x2": 32, "f32x2": 64}
_WIDE = {"u8": "u16", "s8": "s16", "u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64", "b16": "b32",
         "b32": "b64", "f16": "f32", "f32": "f64"}


def _family(t: str) -> str:
    return "pred" if t == "pred" else t[0] if t[0] in "bus" else "f"


# half, packed and tensor-float types live in bit registers of their exact size (.f16 also in .f16)
_BIT_HELD = {"f16", "bf16", "f16x2", "bf16x2", "f32x2", "tf32"}


def compatible(inst_type: str, reg_type: str, wider: bool) -> bool:
    """PTX ISA 6.4 type checking: same size, and bit types (either side) or the same family
    (signed and unsigned integers mix); `wider` (ld/st/cvt) lets the register be larger."""
    if inst_type not in _SIZE or reg_type not in _SIZE:
        return True
    if inst_type in _BIT_HELD:
        if reg_type == inst_type:
            return True
        # ld/st/cvt widen .f16/.f16x2 into larger bit registers, never .bf16/.tf32 (ptxas 13.5)
        size_ok = (_SIZE[reg_type] >= _SIZE[inst_type] if wider and inst_type in ("f16", "f16x2")
                   else _SIZE[reg_type] == _SIZE[inst_type])
        return size_ok and _family(reg_type) == "b"
    if "pred" in (inst_type, reg_type):
        return inst_type == reg_type
    size_t, size_r = _SIZE[inst_type], _SIZE[reg_type]
    if wider:  # ld/st/cvt: a larger integer/bit register is fine; a float register fits exactly
        if _family(reg_type) == "f":
            ft = _family(inst_type)
            return size_r >= size_t if ft == "b" else (size_r == size_t and ft == "f")
        return size_r >= size_t
    if size_t != size_r:
        return False
    ft, fr = _family(inst_type), _family(reg_type)
    return ft == "b" or fr == "b" or ft == fr or {ft, fr} == {"u", "s"}


# --- operand kinds ----------------------------------------------------------------------------

def _type_ref(ref: str | None, types: list[str], modifiers) -> str | None:
    if ref is None:
        return None
    if ref == "T":
        return types[0] if types else None
    if ref == "T1":
        return types[1] if len(types) > 1 else (types[0] if types else None)
    if ref == "Tw":
        base = types[0] if types else None
        return _WIDE.get(base, base) if ".wide" in modifiers and base else base
    return ref


def _vector_count(modifiers) -> int | None:
    for m in modifiers:
        if m in (".v2", ".v4", ".v8"):
            return int(m[2:])
    return None


_FLOAT_LITERAL = re.compile(r"^[-+]?(0[fFdD][0-9a-fA-F]+|\d*\.\d*([eE][-+]?\d+)?|\d+[eE][-+]?\d+)$")


def _classify(op) -> str:
    """register | special | sink | int | float | address | vector | pair | symbol | negation | expr"""
    if isinstance(op, O.SpecialRegister):
        return "special"
    if isinstance(op, O.Register):
        return "special" if is_special_register(op.name) else "register"
    if isinstance(op, O.Sink):
        return "sink"
    if isinstance(op, O.IntLiteral):
        return "int"
    if isinstance(op, O.FloatLiteral):
        return "float"
    if isinstance(op, O.Address):
        return "address"
    if isinstance(op, O.Vector):
        return "vector"
    if isinstance(op, O.PredPair):
        return "pair"
    if isinstance(op, O.Negation):
        return "negation"
    if isinstance(op, O.Symbol):
        return "symbol"
    if isinstance(op, O.UnaryExpr) and isinstance(op.operand, (O.IntLiteral, O.FloatLiteral)):
        return _classify(op.operand)
    return "expr"


_WANT = {"dv": "a destination register or {vector}", "sv": "a register, an immediate or a {vector}",
         "vv": "a {vector} of registers", "vp": "a {vector} of 1, 2, 4 or 8 registers",
         "ta": "`[handle, {coordinates}]`", "ts": "`[texref, {coordinates}]` or `[texref, samplerref, {coordinates}]`",
         "d": "a destination register", "r": "a register", "s": "a register or an immediate",
         "i": "an immediate", "p": "a predicate register", "pp": "a predicate (or a `p|q` pair)",
         "a": "an [address]", "l": "a label", "dp": "a destination register (or a `d|p` pair)"}
_OK_KINDS = {
    "d": {"register", "sink", "symbol"}, "r": {"register", "special", "symbol"},
    "s": {"register", "special", "int", "float", "symbol", "expr"}, "i": {"int", "float", "expr"},
    "p": {"register", "negation", "symbol", "sink", "int"}, "pp": {"register", "pair", "symbol", "sink"},
    "a": {"address", "symbol", "expr"}, "l": {"symbol"}, "dp": {"register", "sink", "pair", "symbol"},
    "dv": {"register", "sink", "symbol", "vector"}, "vv": {"vector"}, "vp": {"vector"}, "ta": {"address"},
    "ts": {"address"},
    "sv": {"register", "special", "int", "float", "symbol", "expr", "vector"},
}

# handles before the {coordinates} of a texture/surface address (a texture may name its sampler)
_ADDRESS_HANDLES = {"ta": (1,), "ts": (1, 2)}


def _shown(op) -> str:
    from ptx2py.ptxgrammar.emitter import emit

    return emit(op).strip()


def check_operands(form, args, instruction, decl: Declarations | None, version=None) -> list[tuple[str, str, int]]:
    """Kind and register-class findings for the operands of an instruction whose count is right
    (``args``: the form's operand kinds, after its `when` overrides)."""
    if args is None:
        return []
    out: list[tuple[str, str, int]] = []
    modifiers = instruction.modifiers
    type_group = form.groups.get("type", frozenset())
    types = [m[1:] for m in modifiers if m in type_group]
    vec = _vector_count(modifiers)
    for index, (arg, op) in enumerate(zip(args, instruction.operands)):
        if index and op.__class__ is O.SpecialRegister:
            found = _special_source(form, op, index, types, version)
            if found is not None:
                out += [(rule, message, index) for rule, message in found]
                continue
        for rule, message in _check_one(form, arg, op, index, types, modifiers, vec, decl):
            out.append((rule, message, index))
    return out


def _special_use(form, types) -> str | None:
    """The key of the probed table (special_register_widths.json) for a source operand of this form."""
    if form.op == "cvt":
        return f"cvt.{types[0]}" if types else None
    return form.op


def _special_source(form, op, index, types, version):
    """Findings for a special register as a source, by the types ptxas accepts (None: not probed)."""
    use = _special_use(form, types)
    name = op.name + (op.component or "")
    accepted = accepted_types(name, use, version) if use else None
    if accepted is None:
        return None
    written = types[-1] if types else None
    if written in accepted:
        return []
    what = _What(index, op)
    if not accepted:
        return [("register-class", f"{what}: special register `{name}` cannot be an operand of {form.op}"
                                   f"{'.' + types[0] if form.op == 'cvt' and types else ''} (move it first)")]
    return [("register-class", f"{what}: `{name}` is read as {' '.join('.' + t for t in sorted(accepted))};"
                               f" not as .{written}")]


class _What:
    """`operand N (`text`)`, emitted only when a finding is written."""

    __slots__ = ("index", "op")

    def __init__(self, index, op):
        self.index, self.op = index, op

    def __str__(self) -> str:
        return f"operand {self.index + 1} (`{_shown(self.op)}`)"

    __format__ = lambda self, spec: str(self)  # noqa: E731


class _Element:
    """`<what> element `text``, emitted only when a finding is written."""

    __slots__ = ("what", "item")

    def __init__(self, what, item):
        self.what, self.item = what, item

    def __str__(self) -> str:
        return f"{self.what} element `{_shown(self.item)}`"

    __format__ = lambda self, spec: str(self)  # noqa: E731


def _check_one(form, arg, op, index, types, modifiers, vec, decl):
    if arg.kind == "x":
        return
    what = _What(index, op)
    want_type = _type_ref(arg.type, types, modifiers)
    kind = _classify(op)
    if kind == "register" and decl is not None and decl.names_variable_or_label(op.name):
        kind = "symbol"
    if kind == "symbol" and decl is not None and decl.register_type(op.name) is not None:
        kind = "register"  # `.reg .b32 r1;` names a register without a %
    elif (kind == "symbol" and decl is not None and arg.kind in ("d", "dv", "dp", "r", "p", "pp", "v")
          and decl.symbol_space(op.name) is not None):
        yield "operand-kind", f"{what}: `{op.name}` is a {decl.symbol_space(op.name)} variable, not a register"
        return
    if arg.kind in ("v", "vs"):
        if kind == "pair" and vec is not None:  # `{d0, d1, d2, d3}|p` (texture results)
            op, kind = op.first, _classify(op.first)
        if vec is None:
            if kind == "vector" and len(op.items) == 1:  # ptxas takes `{%r1}` for a scalar
                op, kind = op.items[0], _classify(op.items[0])
            if kind == "vector":
                yield "operand-kind", f"{what} is a vector, but the instruction has no .v2/.v4/.v8: write one register"
                return
            allowed = {"register", "sink", "symbol"} | ({"int", "float", "expr"} if arg.kind == "vs" else set())
            if kind not in allowed:
                want = "a register or an immediate" if arg.kind == "vs" else "a register"
                yield "operand-kind", f"{what} must be {want}"
                return
            if kind in ("int", "float"):
                yield from _immediate(op, kind, want_type, what)
                return
            yield from _register_class(op, kind, want_type, arg.wider, what, decl)
            return
        if kind != "vector":
            yield "operand-kind", f"{what} must be a {{vector}} of {vec} registers for .v{vec}"
            return
        if len(op.items) != vec:
            yield "register-count", f"{what}: .v{vec} needs {vec} registers, got {len(op.items)}"
            return
        for item in op.items:
            yield from _register_class(item, _classify(item), want_type, arg.wider,
                                       _Element(what, item), decl)
        return
    if kind not in _OK_KINDS[arg.kind]:
        yield "operand-kind", f"{what} must be {_WANT[arg.kind]}"
        return
    if arg.kind in _ADDRESS_HANDLES:
        if len(op.items) - 1 not in _ADDRESS_HANDLES[arg.kind] or not isinstance(op.items[-1], O.Vector):
            yield "operand-kind", f"{what} must be {_WANT[arg.kind]}"
        return
    if kind == "vector" and arg.kind == "vp" and len(op.items) not in (1, 2, 4, 8):
        yield "register-count", f"{what} has {len(op.items)} registers; a vector holds 1, 2, 4 or 8"
        return
    if kind == "vector" and arg.kind in ("dv", "sv", "vv", "vp"):
        return  # packing/unpacking and fragments: element classes are not checked
    if arg.kind in ("p", "pp"):
        target = op.operand if kind == "negation" else op
        if kind == "pair":
            for part in (op.first, op.second):
                yield from _register_class(part, _classify(part), "pred", False, what, decl)
            return
        yield from _register_class(target, _classify(target), "pred", False, what, decl)
        return
    if kind == "pair" and arg.kind == "dp":
        yield from _register_class(op.first, _classify(op.first), want_type, arg.wider, what, decl)
        yield from _register_class(op.second, _classify(op.second), "pred", False, what, decl)
        return
    if kind in ("int", "float"):
        if arg.kind == "i" and kind == "float":
            yield "immediate", f"{what} must be an integer"
        yield from _immediate(op, kind, want_type, what, form.op != "mov")
        return
    if arg.kind == "a" and kind == "address" and form.generic:
        yield from _address_width(op, modifiers, what, decl)
        if ".param" in form.groups.get("space", ()):
            yield from _address_space(form, op, index, modifiers, what, decl)
    yield from _register_class(op, kind, want_type, arg.wider, what, decl)


# state spaces a 32-bit address register can reach under `.address_size 64`
_SHORT_ADDRESS_SPACES = {".shared", ".shared::cta", ".shared::cluster", ".local", ".param", ".param::entry",
                         ".param::func", ".const"}


def _address_width(op, modifiers, what, decl):
    base = op.base
    if decl is None or not isinstance(base, O.Register) or set(modifiers) & _SHORT_ADDRESS_SPACES:
        return
    declared = decl.register_type(base.name)
    if declared and _SIZE.get(declared) == 32:
        yield "register-class", (f"{what}: a generic or .global address needs a 64-bit register;"
                                 f" `{base.name}` is .{declared}")


_GENERIC_REACHES = {".global", ".shared", ".local"}


def _space_family(space: str) -> str:
    return space.split("::")[0]


def _address_space(form, op, index, modifiers, what, decl):
    """ld/st of a variable: the instruction's state space is the variable's (generic reaches
    .global, .shared and .local variables only); a kernel's parameters are read-only."""
    base = op.base
    if decl is None or not isinstance(base, (O.Symbol, O.Register)):
        return
    space = decl.symbol_space(base.name)
    if space is None:
        return
    written = [m for m in modifiers if m in form.groups["space"]]
    if not written:
        if _space_family(space) not in _GENERIC_REACHES:
            yield "state-space", (f"{what}: `{base.name}` is a {space} variable; a generic access cannot reach it"
                                  f" (write {form.op}{space})")
        return
    if _space_family(written[0]) != _space_family(space):
        yield "state-space", f"{what}: `{base.name}` is a {space} variable, the instruction says {written[0]}"
    elif form.op == "st" and index == 0 and decl.is_entry_param(base.name):
        yield "state-space", f"{what}: `{base.name}` is a kernel parameter and cannot be written"


def _immediate(op, kind, want_type, what, plain=True):
    """``plain``: False for mov, which takes any spelling for half/packed types."""
    if want_type in _BIT_HELD and plain:
        yield "immediate", f"{what}: .{want_type} operands take registers, not immediates"
        return
    if want_type and want_type in _SIZE:
        family = _family(want_type)
        text = op.text if op.__class__ in (O.IntLiteral, O.FloatLiteral) else _shown(op)
        hexfloat = re.match(r"^[-+]?0[fFdD]", text) is not None
        # .f32/.f64 operands convert a 0f or 0d literal to their own width (ptxas 13); bit and
        # integer operands take the literal's bits, so its width must match
        if (hexfloat and family != "f" and _SIZE[want_type] in (32, 64)
                and (text.lstrip("+-")[1] in "fF") != (_SIZE[want_type] == 32)):
            yield "immediate", (f"{what}: `{text}` is a {'32' if text.lstrip('+-')[1] in 'fF' else '64'}-bit"
                                f" float immediate for a .{want_type} operand"
                                f" (write {'0f' if _SIZE[want_type] == 32 else '0d'}<hex>)")
            return
        if kind == "float" and family in ("u", "s"):
            yield "immediate", f"{what}: a floating-point immediate for a .{want_type} operand; write an integer"
        elif kind == "float" and family == "b" and not hexfloat:
            yield "immediate", (f"{what}: a decimal floating-point immediate for a .{want_type} operand;"
                                f" bit types take integers or 0f/0d hex floats")
        elif kind == "int" and family == "f" and want_type in ("f32", "f64"):
            yield "immediate", (f"{what}: an integer immediate for a .{want_type} operand; write it as"
                                f" {'0f' if want_type == 'f32' else '0d'}<hex> or with a decimal point")
        elif kind == "float" and hexfloat and _SIZE[want_type] == 16 and family in "bus":
            yield "immediate", f"{what}: a 32/64-bit float immediate for a .{want_type} operand"


def _register_class(op, kind, want_type, wider, what, decl):
    if kind == "symbol" and decl is not None and decl.register_type(op.name) is not None:
        kind = "register"
    if kind == "special" and want_type in _SIZE:
        stype = special_register_type(op.name)
        if _family(want_type) == "f":
            yield "register-class", f"{what}: special register `{op.name}` is .{stype}; move it with an integer type"
            return
        if _SIZE[stype] != _SIZE[want_type] and not (wider and _SIZE[stype] <= _SIZE[want_type]):
            yield "register-class", f"{what}: `{op.name}` is .{stype}, the operand is .{want_type}"
        return
    if kind != "register" or decl is None:
        return
    declared = decl.register_type(op.name)
    if declared is None:  # reported once by undeclared_names
        return
    if want_type and declared and not compatible(want_type, declared, wider):
        yield "register-class", (f"{what}: `{op.name}` is .{declared}, the operand is .{want_type}"
                                 f" (needs a {_SIZE.get(want_type, '?')}-bit"
                                 f"{' predicate' if want_type == 'pred' else ''} register)")


def undeclared_names(instruction, decl: Declarations) -> list[tuple[str, str, int]]:
    """Registers and variables not declared in scope (the innermost block outwards) and branch
    targets that are no label in scope."""
    out = []
    if not decl.is_complete():
        return out
    for index, op in enumerate(instruction.operands):
        if instruction.opcode == "bra" and isinstance(op, O.Symbol) and not decl.has_label(op.name):
            out.append(("undeclared", f"operand {index + 1}: label `{op.name}` is not defined in this scope",
                        index))
            continue
        for name, is_register in _names(op):
            if is_register:
                if (not is_special_register(name) and decl.register_type(name) is None
                        and not decl.names_variable_or_label(name)):
                    out.append(("undeclared", f"operand {index + 1}: register `{name}` is not declared in"
                                              f" this scope", index))
            elif not decl.knows(name):
                out.append(("undeclared", f"operand {index + 1}: `{name}` is not declared in this scope", index))
    return out


def _names(op):
    """(name, is a `%` register) for the names an operand mentions."""
    cls = op.__class__
    if cls is O.Register:
        yield op.name, True
    elif cls is O.Symbol:
        yield op.name, False
    elif cls in (O.Vector, O.Address, O.ParenList):
        for item in op.items:
            yield from _names(item)
    elif cls is O.BinaryExpr:
        yield from _names(op.left)
        yield from _names(op.right)
    elif cls in (O.Negation, O.UnaryExpr, O.Cast):
        yield from _names(op.operand)
    elif cls is O.PredPair:
        yield from _names(op.first)
        yield from _names(op.second)
    elif cls in (O.Paren,):
        yield from _names(op.inner)
    elif cls is O.Indexed:
        yield op.name, False
        yield from _names(op.index)
    elif cls is O.Conditional:
        for part in (op.condition, op.then, op.otherwise):
            yield from _names(part)
    elif cls is O.Applied:
        yield from _names(op.argument)


def vector_elements(instruction, element_types, decl) -> list[tuple[str, str, int]]:
    """Register classes of {vector} elements a form rule sized (mov packing: .b64 from two .b32)."""
    out = []
    for pos, want in element_types:
        op = instruction.operands[pos]
        for item in op.items:
            for rule, message in _register_class(item, _classify(item), want, False,
                                                 _Element(f"operand {pos + 1}", item), decl):
                out.append((rule, message, pos))
    return out
