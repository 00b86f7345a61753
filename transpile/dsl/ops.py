"""Table-driven instruction and declaration calls: `ptx.ld.global_.nc.v4.b32(...)`.

An attribute chain spells the dot-words (`transpile.names` maps them), checked
against `ptxgrammar.isa.spellings`; each chain object is cached on its parent, so a repeated
spelling costs plain attribute lookups. Calling the chain records the statement.
"""

from __future__ import annotations

from ptx2py.ptxgrammar.isa.spellings import OPCODES, is_modifier
from ptx2py.ptxgrammar.tree import Align, Attribute, Declarator, Guard, Instruction, Param, VarDecl

from ..names import from_python, to_python
from . import quiet, recorder
from .errors import DSLError
from .locs import loc, run_locs  # noqa: F401
from .operands import Name, Neg, RegFile, init_node, to_node

LINKAGE = ("visible", "extern", "weak", "common")


def _guard(pred):
    if pred.__class__ is Neg:
        v, negated = pred.value, True
    else:
        v, negated = pred, False
    if not isinstance(v, Name) or v.component is not None:
        raise DSLError(f"pred= takes a predicate register (or ~register), not {pred!r}")
    return Guard(v.name, negated)


class Op:
    """`ptx.add.s32`: an opcode and its modifiers so far."""

    def __init__(self, opcode: str, modifiers: tuple):
        self._opcode = opcode
        self._modifiers = modifiers

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        mod = from_python(ident)
        if not is_modifier(mod):
            spelled = f"{self._opcode}{''.join(self._modifiers)}{mod}"
            raise DSLError(f"unknown instruction spelling {spelled}: no modifier {mod}")
        child = Op(self._opcode, (*self._modifiers, mod))
        self.__dict__[ident] = child
        return child

    def __call__(self, *operands, pred=None, fmt=None, indent=None, lead=None, at=None):
        """The instruction; `at=at(18, 7)`: its `.loc` line(s) first, as the
        `at(...)` prefix writes them (for heads too long to carry the prefix)."""
        rec = recorder._current[0] or recorder.current()
        key = None
        if fmt is None and lead is None and at is None:
            stmt, key = quiet.instruction(rec, self, operands, pred, indent)
            if stmt is not None:
                return stmt
        try:
            nodes = tuple([to_node(o) for o in operands])
        except DSLError as e:
            raise DSLError(f"{self._opcode}{''.join(self._modifiers)}: {e.message}") from None
        guard = None if pred is None else _guard(pred)
        if at is not None:
            run_locs(at)
            rec = recorder._current[0] or recorder.current()
        stmt = rec.record(Instruction(guard, self._opcode, self._modifiers, nodes), fmt, indent, lead)
        if key is not None:
            quiet.remember_instruction(rec, key, stmt)
        return stmt


def opcode(ident: str) -> Op:
    name = from_python(ident, dot=False)
    if name not in OPCODES:
        raise DSLError(f"unknown instruction spelling {name!r}: not a PTX opcode")
    return Op(name, ())


def insn(opcode_: str, modifiers=(), *operands, pred=None, fmt=None, indent=None, lead=None, at=None):
    """The generic form for spellings outside the table: `insn("foo", (".bar",), r[1])`."""
    return Op(opcode_, tuple(modifiers))(*operands, pred=pred, fmt=fmt, indent=indent, lead=lead, at=at)


# --- declarations -------------------------------------------------------------------

class _AlignCall:
    def __init__(self, chain, kind):
        self.chain, self.kind = chain, kind

    def __call__(self, *values):
        if self.kind == "align":
            return self.chain._extend(Align(str(values[0])))
        name = values[0]
        return self.chain._extend(Attribute(name, tuple(str(v) for v in values[1:]) or None))


class Decl:
    """`var.global_.align(4).b32(...)`, `reg.b32(...)`, `param.u64(...)`: a space and attrs.
    `scope`: a function of the declared names (`k.var`: C++ function-local statics, control.py)."""

    def __init__(self, kind: str, space: str | None, attrs: tuple, scope=None):
        self._kind, self._space, self._attrs, self._scope = kind, space, attrs, scope

    def _extend(self, attr):
        return Decl(self._kind, self._space, (*self._attrs, attr), self._scope)

    def _own_attrs(self) -> tuple:
        """The attributes for one more declaration: its own `.align N` / `.attribute(...)`
        nodes, since a node's trivia is its own (`ptr = param.u64.ptr.align(1)` used five times
        keeps each parameter's line breaks)."""
        return tuple(a if a.__class__ is str else a.with_changes() for a in self._attrs)

    def __getattr__(self, ident):
        if ident.startswith("__"):
            raise AttributeError(ident)
        if ident in ("align", "attribute"):
            return _AlignCall(self, ident)
        if self._space is None:  # var.<space>
            child = Decl(self._kind, from_python(ident), (), self._scope)
        else:
            child = self._extend(from_python(ident))
        self.__dict__[ident] = child
        return child

    def __call__(self, *args, **kw):
        if self._kind == "param":
            return self._param(*args, **kw)
        return self._declare(*args, **kw)

    def __mul__(self, n: int) -> list:
        """`param.u64 * 3`: three parameters of this type (for `k.entry(...)`)."""
        if self._kind != "param" or n.__class__ is not int:
            raise DSLError("only parameter types repeat: param.<type> * n")
        return [self] * n

    def __getitem__(self, dim: int) -> "_Sized":
        """`param.align(128).b8[128]`: a parameter type with a dimension (for `k.entry(...)`)."""
        if self._kind != "param" or dim.__class__ is not int:
            raise DSLError("only parameter types take a dimension: param.<type>[n]")
        return _Sized(self, dim)

    def of(self, kernel, start: int, stop: int) -> list:
        """`*param.u32.of(k, 3, 12)`: parameters `k.param_3` ... `k.param_11`, all this type."""
        if self._kind != "param":
            raise DSLError("of(kernel, start, stop) declares parameters: param.<type>.of(...)")
        return [self._param(getattr(kernel, f"param_{i}")) for i in range(start, stop)]

    def _param(self, name, dim=None, unsized=False):
        space = ".reg" if self._space == ".reg" else ".param"
        d = "" if unsized else (None if dim is None else str(dim))
        return Param(space, self._own_attrs(), name, d)

    def _declare(self, *args, dims=(), init=None, fmt=None, indent=None, lead=None, demoted=False,
                 **linkage_kw):
        """`demoted=True`: nvcc's `// demoted variable` line first (a shared variable it moved
        into the function)."""
        if demoted:
            recorder.current().add_line(("//", " demoted variable"))
        linkage = []
        for k, v in linkage_kw.items():
            if k not in LINKAGE or v is not True:
                raise DSLError(f"unknown declaration keyword {k}=")
            linkage.append("." + k)
        decls, results = [], []
        plain = fmt is None and lead is None   # the quiet path's
        i = 0
        while i < len(args):
            a = args[i]
            if isinstance(a, Declarator):
                if self._scope is not None:
                    raise DSLError("a function's static (k.var...) is declared by its name, not d(...)")
                decls.append(a)
                results.append(_value_for(a.name, None))
                plain = False
                i += 1
                continue
            if a.__class__ is not str:
                raise DSLError(f"a declarator is a name (str) or d(...), not {type(a).__name__}")
            if self._scope is not None:
                a = self._scope(a)
            count = None
            if i + 1 < len(args) and args[i + 1].__class__ is int:
                count = args[i + 1]
                i += 1
            i += 1
            decls.append(Declarator(a, None if count is None else str(count)))
            results.append(_value_for(a, count))
        if dims or init is not None:
            if len(decls) != 1:
                raise DSLError("dims=/init= need exactly one declarator; use d(...) for several")
            dd = decls[0]
            decls[0] = Declarator(dd.name, dd.count, _dims(dims), None if init is None else init_node(init))
        stmt = VarDecl(tuple(linkage), self._space, self._own_attrs(), tuple(decls))
        rec = recorder.current()
        done = key = None
        if plain and decls:
            done, key = quiet.declaration(rec, stmt, indent)
        if done is None:
            rec.record(stmt, fmt, indent, lead)
            if key is not None:
                quiet.remember(rec, key, stmt)
        return results[0] if len(results) == 1 else tuple(results)


class _Sized:
    """`param.align(128).b8[128]`: called with a name, the parameter `name[128]`."""

    def __init__(self, decl: Decl, dim: int):
        self._decl, self._dim = decl, dim

    def __call__(self, name):
        return self._decl._param(name, dim=self._dim)

    def __mul__(self, n: int) -> list:
        if n.__class__ is not int:
            raise DSLError("param.<type>[dim] * n repeats a parameter type")
        return [self] * n


def _dims(dims):
    return tuple("" if d is None else str(d) for d in dims)


def _value_for(name: str, count):
    if count is not None:
        return RegFile(name, count)
    return Name(name)


def d(name: str, count=None, dims=(), init=None) -> Declarator:
    """One declarator of several: `var.global_.b32(d("a"), d("b", dims=(4,)))`."""
    return Declarator(name, None if count is None else str(count), _dims(dims),
                      None if init is None else init_node(init))


# The register files nvcc and LLVM's NVPTX back end declare, by type: `%p<4>` is .pred, ...
NVPTX_REGISTERS = {"pred": "%p", "b16": "%rs", "b32": "%r", "b64": "%rd", "f32": "%f", "f64": "%fd"}


_REGISTER_TYPES = {v: k for k, v in NVPTX_REGISTERS.items()}


def regs_keyword(t: str, spelling: str) -> str | None:
    """The `regs()` keyword declaring `reg.<t>(spelling, n)`: `b32` for `%r`, `b32_f` for `%f`
    (another type's name); None where regs() cannot spell it (an unconventional name, a type
    with `_` in it: `address_size`, a Python keyword's `import_`)."""
    if "_" in t or spelling not in _REGISTER_TYPES:
        return None
    return t if _REGISTER_TYPES[spelling] == t else f"{t}_{spelling[1:]}"


def regs(**counts) -> tuple:
    """`p, r, rd = regs(pred=4, b32=72, b64=56)`: one `.reg` line per keyword, in this order,
    each named as nvcc names its type (NVPTX_REGISTERS): `.reg .pred %p<4>;` ...;
    `b32_f=205` is `.reg .b32 %f<205>;` (a type under another type's name, as CUDA 13 writes `%f`)."""
    out = []
    for key, n in counts.items():
        t, _, named = key.partition("_")
        name = NVPTX_REGISTERS.get(t) if not named else "%" + named
        if name is None or regs_keyword(t, name) != key:
            raise DSLError(f"regs: no conventional register name for {key}; use reg.{t}(name, count)")
        out.append(getattr(reg, t)(name, n))
    return tuple(out)


reg = Decl("var", ".reg", ())
var = Decl("var", None, ())
param = Decl("param", ".param", ())
regparam = Decl("param", ".reg", ())

__all__ = ["Op", "opcode", "insn", "Decl", "reg", "regs", "var", "param", "regparam", "d", "to_python"]
