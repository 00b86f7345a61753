"""Typed, frozen dataclasses for the kernel IR.

Every node carries a ``kind`` (its class name) that is the JSON discriminator.
Expressions derive from ``Expr``, statements from ``Stmt``; declarations
(Buffer, Param, Shared, Launch, Swizzle, Kernel) are plain records.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

DTYPES = ("f32", "f16", "bf16", "s32", "u32")
# "pred" is the type of comparisons and guards; it never lives in memory.
VALUE_DTYPES = DTYPES + ("pred",)
FLOAT_DTYPES = ("f32", "f16", "bf16")
INT_DTYPES = ("s32", "u32")
ROLES = ("input", "output", "inout")
UNARY_OPS = ("neg", "not", "abs", "exp", "log", "sqrt", "rsqrt", "recip",
             "ex2", "lg2", "sin", "cos", "tanh", "floor", "ceil")
BINARY_OPS = ("add", "sub", "mul", "div", "mod", "min", "max",
              "lt", "le", "gt", "ge", "eq", "ne", "and", "or",
              "shl", "shr", "bitand", "bitor", "xor")
COMPARE_OPS = ("lt", "le", "gt", "ge", "eq", "ne")
BUILTINS = ("tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z",
            "ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z",
            "laneid", "warpid")
CALL_ARITY = {"exp": 1, "log": 1, "sqrt": 1, "rsqrt": 1, "abs": 1,
              "max": 2, "min": 2, "fma": 3}
CALL_FNS = tuple(CALL_ARITY)
ACCUM_OPS = ("add", "max", "min", "mul")
SWIZZLE_MODES = ("xor", "block2d")
LIT_SPECIALS = ("inf", "-inf", "nan")


def enum(values, **kw):
    """A dataclass field restricted to ``values`` (checked by the loader and schema)."""
    return field(metadata={"enum": values}, **kw)


class Node:
    @property
    def kind(self) -> str:
        return type(self).__name__


class Expr(Node):
    pass


class Stmt(Node):
    pass


# ---------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Lit(Expr):
    """Constant; value is a number, a bool (pred) or 'inf'/'-inf'/'nan'."""
    value: Union[bool, int, float, str]
    dtype: str = enum(VALUE_DTYPES)


@dataclass(frozen=True)
class Var(Expr):
    """A local variable, or (if no local has the name) a scalar param."""
    name: str


@dataclass(frozen=True)
class Unary(Expr):
    op: str = enum(UNARY_OPS)
    a: Expr


@dataclass(frozen=True)
class Binary(Expr):
    op: str = enum(BINARY_OPS)
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Ternary(Expr):
    """select: cond ? a : b (cond is pred)."""
    cond: Expr
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Cast(Expr):
    dtype: str = enum(VALUE_DTYPES)
    a: Expr


@dataclass(frozen=True)
class Index(Expr):
    """Row-major flat index into ``buffer`` (global buffer or shared array)."""
    buffer: str
    indices: tuple[Expr, ...]


@dataclass(frozen=True)
class Dim(Expr):
    """Extent of ``buffer`` along ``axis`` (s32); lets launch shapes use sizes."""
    buffer: str
    axis: int


@dataclass(frozen=True)
class Builtin(Expr):
    """A special register; all are s32 (laneid/warpid from the linear tid)."""
    name: str = enum(BUILTINS)


@dataclass(frozen=True)
class Call(Expr):
    fn: str = enum(CALL_FNS)
    args: tuple[Expr, ...]


# ---------------------------------------------------------------- records
@dataclass(frozen=True)
class Swizzle:
    """Layout annotation. xor: shared-memory column ^= row within rows of
    ``value`` elements (bank-conflict avoidance); block2d: tiles were mapped
    from ctaid with grouped ordering of ``value`` rows (L2 locality).
    Neither changes values: every access of the array is remapped alike."""
    mode: str = enum(SWIZZLE_MODES)
    value: int

    kind = property(lambda self: "Swizzle")


@dataclass(frozen=True)
class Buffer:
    name: str
    dtype: str = enum(DTYPES)
    shape: tuple[Union[int, str], ...]   # int or a size param name
    role: str = enum(ROLES, default="input")

    kind = property(lambda self: "Buffer")


@dataclass(frozen=True)
class Param:
    name: str
    dtype: str = enum(DTYPES)

    kind = property(lambda self: "Param")


@dataclass(frozen=True)
class Shared:
    name: str
    dtype: str = enum(DTYPES)
    size: int

    kind = property(lambda self: "Shared")


@dataclass(frozen=True)
class Launch:
    grid: tuple[Union[int, Expr], ...]    # (x, y, z)
    block: tuple[Union[int, Expr], ...]   # (x, y, z)

    kind = property(lambda self: "Launch")


# ---------------------------------------------------------------- statements
@dataclass(frozen=True)
class Load(Stmt):
    """dest <- buffer[index]; where guard is false: fallback (or dest kept)."""
    dest: str
    buffer: str
    index: Expr
    guard: Optional[Expr] = None
    fallback: Optional[Expr] = None


@dataclass(frozen=True)
class Write(Stmt):
    """buffer[index] <- value where guard holds."""
    buffer: str
    index: Expr
    value: Expr
    guard: Optional[Expr] = None
    swizzle: Optional[Swizzle] = None


@dataclass(frozen=True)
class Accum(Stmt):
    var: str
    op: str = enum(ACCUM_OPS)
    value: Expr


@dataclass(frozen=True)
class Assign(Stmt):
    var: str
    dtype: str = enum(VALUE_DTYPES)
    value: Expr


@dataclass(frozen=True)
class StridedLoop(Stmt):
    """for var = start; var < stop; var += step  (grid-/block-stride loop)."""
    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class Loop(Stmt):
    """for var in range(start, stop, step) (step may be negative)."""
    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class Cond(Stmt):
    cond: Expr
    then: tuple[Stmt, ...] = ()
    else_: tuple[Stmt, ...] = ()   # JSON key "else"


@dataclass(frozen=True)
class Sync(Stmt):
    """Block barrier (bar.sync 0); every thread of the block must reach it."""


@dataclass(frozen=True)
class WarpShuffle(Stmt):
    """Butterfly xor-shuffle: for off = width/2..1: var = combine(a=var, b=shfl_xor(var, off))."""
    var: str
    combine: Expr
    width: int = 32


@dataclass(frozen=True)
class TreeHalve(Stmt):
    """Block-wide tree reduction of shared[seg*count + i], i < count, for each of
    ``segments`` segments; var <- the total of the thread's segment (a thread's
    segment is linear_tid // (threads / segments)). Contains its own barriers,
    including a trailing one, so the shared array may be reused right after."""
    shared: str
    var: str
    op: str = enum(ACCUM_OPS)
    count: int = 32
    segments: int = 1


@dataclass(frozen=True)
class CpAsyncCopy(Stmt):
    """cp.async: shared[dst_index ...] <- src[src_index ...] (bytes 4/8/16);
    where guard is false the destination is zero-filled (src-size 0 form)."""
    shared: str
    dst_index: Expr
    src: str
    src_index: Expr
    bytes: int = 16
    guard: Optional[Expr] = None


@dataclass(frozen=True)
class CpAsyncCommit(Stmt):
    """cp.async.commit_group."""


@dataclass(frozen=True)
class CpAsyncWait(Stmt):
    """cp.async.wait_group pending: all but the newest ``pending`` groups land."""
    pending: int = 0


@dataclass(frozen=True)
class ZeroInit(Stmt):
    """Zero prologue: each var in ``vars`` := 0 of ``dtype``; and/or the whole
    ``shared`` array zeroed cooperatively by the block (needs a Sync before
    other threads read it)."""
    vars: tuple[str, ...] = ()
    dtype: str = enum(VALUE_DTYPES, default="f32")
    shared: Optional[str] = None


@dataclass(frozen=True)
class Kernel:
    name: str
    buffers: tuple[Buffer, ...]
    params: tuple[Param, ...]
    launch: Launch
    body: tuple[Stmt, ...]
    shared: tuple[Shared, ...] = ()

    kind = property(lambda self: "Kernel")


EXPR_KINDS = {c.__name__: c for c in (Lit, Var, Unary, Binary, Ternary, Cast,
                                      Index, Dim, Builtin, Call)}
STMT_KINDS = {c.__name__: c for c in (Load, Write, Accum, Assign, StridedLoop,
                                      Loop, Cond, Sync, WarpShuffle, TreeHalve,
                                      CpAsyncCopy, CpAsyncCommit, CpAsyncWait,
                                      ZeroInit)}
RECORD_KINDS = {c.__name__: c for c in (Swizzle, Buffer, Param, Shared, Launch,
                                        Kernel)}
