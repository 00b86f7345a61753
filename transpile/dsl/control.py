"""Names and control flow of `--sugar` Python. Each construct records exactly the
statements the plain DSL would (same spellings, guards, modifiers), so the bytes
are the same:

    vecAdd = kernel_name("_Z6vecAddPfS_i", demangled="vecAdd(float*, float*, int)",
                         params=("a0_float_ptr", "a1_float_ptr", "a2_int"))
    with ptx.entry(vecAdd.name, params=[param.u64(vecAdd.a0_float_ptr), ...]): ...
    ptx.ld.param.u64(rd[1], [sym(vecAdd.a0_float_ptr)])
    k = kernel_name("matmul_kernel", params=3)   # k.param_0 .. k.param_2 (Triton's names)
    L = labels(bb3="$L__BB0_3", tmp0="$L__tmp0")  # Python name -> PTX spelling: ptx.label(L.bb3)
    with loop(L.bb2, while_=p[38]):     # $L__BB0_2: ... @%p38 bra $L__BB0_2;
    with skip_if(p[14], to=L.bb3):      # @%p14 bra $L__BB0_3; ... $L__BB0_3:
    mbarrier_wait([r[27]], r[122])      # Triton's { .reg .pred complete; waitLoop: try_wait; @!complete bra.uni waitLoop; }

Names are a table inside the Python; the PTX keeps the original spellings.
"""

from __future__ import annotations

from .directives import ptx
from .errors import DSLError
from .operands import Value, sym
from ..names import is_local_label, label_names


class KernelName:
    """A function's PTX name (`.name`), its demangled C++ name (`.demangled`) and its
    parameters' PTX names as attributes (`k.param_0`, `k.a0_float_ptr`): plain strings."""

    def __init__(self, name, demangled, params):
        self.name, self.demangled = name, demangled
        for k, v in params.items():
            setattr(self, k, v)

    def __repr__(self):
        return f"kernel_name({self.name!r})"


def _demangle(spelling: str):
    try:
        import cxxfilt
    except ImportError:  # pragma: no cover - cxxfilt is a dependency
        return None
    try:
        return cxxfilt.demangle(spelling)
    except Exception:  # noqa: BLE001
        return None


def kernel_name(spelling: str, demangled: str | None = None, params=None) -> KernelName:
    """The function `spelling` (checked against `demangled` when given); `params` names its
    parameters `<spelling>_param_<i>`: a count (`param_0`...) or a tuple of Python names."""
    if demangled is not None:
        got = _demangle(spelling)
        if got is not None and got != demangled:
            raise DSLError(f"kernel_name: {spelling} demangles to {got!r}, not {demangled!r}")
    table = {}
    if params is not None:
        names = [f"param_{i}" for i in range(params)] if params.__class__ is int else list(params)
        for i, n in enumerate(names):
            if not n.isidentifier() or n.startswith("_") or n in ("name", "demangled") or n in table:
                raise DSLError(f"kernel_name: {n!r} is not a parameter name")
            table[n] = f"{spelling}_param_{i}"
    return KernelName(spelling, demangled, table)


class _Labels:
    def __init__(self, table):
        for k, v in table.items():
            if not k.isidentifier() or k.startswith("_"):
                raise DSLError(f"labels: {k!r} is not a label name")
            setattr(self, k, v)

    def __repr__(self):
        return f"labels({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


def labels(*spellings: str, **table) -> _Labels:
    """`L = labels("$L__BB0_3 $L__tmp0")`: `L.bb3` is the string `"$L__BB0_3"`, `L.tmp0`
    `"$L__tmp0"` (names by `transpile.names.label_names`); `labels(top="$L__BB0_3")` names
    one explicitly. Use `ptx.label(L.bb3)`, `sym(L.bb3)`."""
    words = [w for s in spellings for w in s.split()]
    for w in words:
        if not is_local_label(w):
            raise DSLError(f"labels: {w!r} is not a numbered local label ($L__BB0_3, $L__tmp0)")
    named = dict(zip(label_names(words), words))
    for k, v in table.items():
        if k in named:
            raise DSLError(f"labels: {k!r} is named twice")
        named[k] = v
    return _Labels(named)


def _target(label):
    return label if isinstance(label, Value) else sym(label)


class loop:
    """`with loop(label, while_=p):` the label, the body, then `@p bra label;`
    (`while_=~p` for `@!p`, `None` for an unguarded branch; `uni=True` for `bra.uni`)."""

    def __init__(self, label, while_=None, uni=False):
        self.label, self.pred, self.uni = label, while_, uni

    def __enter__(self):
        ptx.label(str(self.label))
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            (ptx.bra.uni if self.uni else ptx.bra)(_target(self.label), pred=self.pred)
        return False


class skip_if:
    """`with skip_if(p, to=label):` `@p bra label;`, the body, then `label:`."""

    def __init__(self, pred, to, uni=False):
        self.pred, self.label, self.uni = pred, to, uni

    def __enter__(self):
        (ptx.bra.uni if self.uni else ptx.bra)(_target(self.label), pred=self.pred)
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            ptx.label(str(self.label))
        return False


def mbarrier_wait(addr, phase, kind="parity.shared__cta.b64", loc=None, at=None, wait_fmt=None, **block):
    """Triton's spin wait on an mbarrier phase, as one call:

        {
        .reg .pred complete;
        waitLoop:                       (`loc=(f, l, c)`: a `.loc` before the label)
        mbarrier.try_wait.<kind> complete, addr, phase;   (`at=`: a `.loc` before it)
        @!complete bra.uni waitLoop;
        }

    (`wait_fmt=`: the try_wait's own `fmt=`; other keywords are the block's.)
    """
    from .ops import reg
    from .structured import _record_loc

    op = ptx.mbarrier.try_wait
    for part in kind.split("."):
        op = getattr(op, part)
    with ptx.block(**block):
        complete = reg.pred("complete")
        if loc is not None:
            _record_loc(tuple(loc), {})
        ptx.label("waitLoop")
        if at is not None:
            _record_loc(tuple(at), {})
        op(complete, addr, phase, fmt=wait_fmt)
        ptx.bra.uni(sym("waitLoop"), pred=~complete)


__all__ = ["kernel_name", "labels", "loop", "skip_if", "mbarrier_wait"]
