"""Names and control flow of `--sugar` Python. Each construct records exactly the
statements the plain DSL would (same spellings, guards, modifiers), so the bytes
are the same:

    vecAdd = kernel_name("_Z6vecAddPfS_i")  # demangled: vecAdd(float*, float*, int)
    with vecAdd.entry(param.u64 * 2, param.u32, visible=True): ...   # a0_float_ptr, a1_float_ptr, a2_int
    ptx.ld.param.u64(rd[1], [sym(vecAdd.a0_float_ptr)])
    k = kernel_name("matmul_kernel", params=3)   # k.param_0 .. k.param_2 (Triton's names)
    ptx.label(L.bb0_3)  sym(L.tmp0)     # $L__BB0_3, $L__tmp0: local labels by rule, no table
    L = labels(bb3="$L__BB0_3", tmp0="$L__tmp0")  # Python name -> PTX spelling: ptx.label(L.bb3)
    with loop(L.bb2, while_=p[38]):     # $L__BB0_2: ... @%p38 bra $L__BB0_2;
    with skip_if(p[14], to=L.bb3):      # @%p14 bra $L__BB0_3; ... $L__BB0_3:
    with if_(p[2], to=L.bb5):           # @!%p2 bra $L__BB0_5; ... (ends in bra $L__BB0_6;) $L__BB0_5:
    with else_(to=L.bb6):               # ... $L__BB0_6:  (the other branch, then the join)
    with loop(L.bb6, uni=True, enter=L.bb4):  # bra.uni $L__BB0_4; $L__BB0_6: ... bra.uni $L__BB0_6;
    break_if(p[3], to=L.bb7)            # @%p3 bra $L__BB0_7; (a loop exit)
    mbarrier_wait([r[27]], r[122])      # Triton's { .reg .pred complete; waitLoop: try_wait;
                                        #            @!complete bra.uni waitLoop; }

Names are a table inside the Python; the PTX keeps the original spellings.
"""

from __future__ import annotations

from ..cxxnames import param_names, signature
from ..names import is_local_label, label_names, rule_label_name, rule_label_spelling
from .directives import ptx
from .errors import DSLError
from .locs import record_loc
from .operands import Neg, Value, sym
from .ops import Decl, reg


class _Statics:
    """`k.var.shared.align(4).b8("tile", dims=(2560,))`: `var...` with the declared name the
    C++ mangling of `k`'s local static `tile` (nvcc's demoted `__shared__` arrays). A parameter
    named `var` shadows it (a class attribute that is no data descriptor)."""

    def __get__(self, k, owner=None):
        return self if k is None else Decl("var", None, (), lambda local: KernelName.static(k, local))


class KernelName:
    """A function's PTX name (`.name`), its demangled C++ name (`.demangled`) and its
    parameters' PTX names as attributes (`k.param_0`, `k.a0_float_ptr`): plain strings.

    `with k.entry(param.u64 * 2, param.u32, visible=True):` declares the function with
    parameters of these types under its parameter names, in order (`globl=True`: nvcc's
    `// .globl <name>` comment line first); `k.func(...)` likewise for a `.func`."""

    var = _Statics()

    def __init__(self, name, demangled, params):
        self.name, self.demangled = name, demangled
        self._spellings = list(params.values())
        for k, v in params.items():
            setattr(self, k, v)

    def _params(self, types):
        flat = [t for x in types for t in (x if x.__class__ is list else [x])]
        if len(flat) != len(self._spellings):
            raise DSLError(f"{self.name}: {len(flat)} parameter types for {len(self._spellings)} parameters")
        return [t(n) for t, n in zip(flat, self._spellings)]

    def _declare(self, make, types, globl, kw):
        if globl:
            ptx.comment(" .globl\t" + self.name, indent="\t")
        return make(self.name, params=self._params(types), **kw)

    def entry(self, *types, globl=False, **kw):
        return self._declare(ptx.entry, types, globl, kw)

    def func(self, *types, globl=False, **kw):
        return self._declare(ptx.func, types, globl, kw)

    def static(self, local: str) -> str:
        """The PTX name of the function's local static `local` (a CUDA `__shared__` array in
        the kernel body): `_ZZ<function encoding>E<len><local>`, the C++ mangling."""
        if not local.isidentifier():
            raise DSLError(f"{self.name}: {local!r} is not a C++ local name")
        enc = self.name[2:] if self.name.startswith("_Z") else f"{len(self.name)}{self.name}"
        return f"_ZZ{enc}E{len(local)}{local}"

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
    parameters `<spelling>_param_<i>`: a count (`param_0`...), a tuple of Python names or one
    string of them (`params="a_desc M N K"`, from a source or launch sidecar)
    (by default, with `demangled`, `a<i>_<type>` from its signature: `k.a0_float_ptr`)."""
    if demangled is None and params is None and spelling.startswith("_Z"):
        demangled = _demangle(spelling)  # the sugar's `# <demangled>` comment line is for the reader
    elif demangled is not None:
        got = _demangle(spelling)
        if got is not None and got != demangled:
            raise DSLError(f"kernel_name: {spelling} demangles to {got!r}, not {demangled!r}")
    table = {}
    if params is None and demangled is not None:  # named from the signature (transpile.cxxnames)
        sig = signature(demangled)
        params = None if sig is None or not sig[1] else tuple(param_names(sig[1]))
    if params is not None:
        names = ([f"param_{i}" for i in range(params)] if params.__class__ is int
                 else params.split() if params.__class__ is str else list(params))
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


class _RuleLabels:
    """`L.bb0_3` is `"$L__BB0_3"`, `L.tmp0` is `"$L__tmp0"`: nvcc's and LLVM's numbered local
    labels by rule (`transpile.names.rule_label_name`), without a `labels(...)` table;
    a name of the reader's own (`L.skip_last`, for a new guard) is `"$L__skip_last"`."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        spelling = rule_label_spelling(name)
        if rule_label_name(spelling) != name:
            if name.startswith("bb") or not name.isidentifier():
                raise DSLError(f"L.{name} is not a local label name (L.bb0_3, L.tmp0, L.func_begin0, L.skip_last)")
            spelling = "$L__" + name  # a label of the reader's own: no producer numbers one so
        setattr(self, name, spelling)
        return spelling

    def __repr__(self):
        return "L"


L = _RuleLabels()


def _target(label):
    return label if isinstance(label, Value) else sym(label)


class loop:
    """`with loop(label, while_=p):` the label, the body, then `@p bra label;`
    (`while_=~p` for `@!p`, `None` for an unguarded branch; `uni=True` for `bra.uni`).
    `enter=H`: a rotated loop, entered at the label `H` in its body (its test): first
    `bra.uni H;` (`enter_uni=False`: `bra H;`), then the label, the body, the branch.
    `back=False`: no branch at the end (the body's `continue_if`/`continue_to` repeat it)."""

    def __init__(self, label, while_=None, uni=False, enter=None, enter_uni=True, back=True):
        self.label, self.pred, self.uni = label, while_, uni
        self.enter, self.enter_uni, self.back = enter, enter_uni, back

    def __enter__(self):
        if self.enter is not None:
            (ptx.bra.uni if self.enter_uni else ptx.bra)(_target(self.enter))
        ptx.label(str(self.label))
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and self.back:
            (ptx.bra.uni if self.uni else ptx.bra)(_target(self.label), pred=self.pred)
        return False


class _labelled_block:
    """A `with` block that ends at its label: `label:` after the body (when the body raised nothing)."""

    label = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            ptx.label(str(self.label))
        return False


class skip_if(_labelled_block):
    """`with skip_if(p, to=label):` `@p bra label;`, the body, then `label:`."""

    def __init__(self, pred, to, uni=False):
        self.pred, self.label, self.uni = pred, to, uni

    def __enter__(self):
        _jump(self.pred, self.label, self.uni)
        return self


class if_(skip_if):
    """`with if_(p, to=label):` the body where `p` holds: `@!p bra label;`, the body, then `label:`
    (`skip_if(~p, ...)` without the double negative)."""

    def __init__(self, pred, to, uni=False):
        super().__init__(_negated(pred), to, uni)


class else_(_labelled_block):
    """`with else_(to=join):` right after an `if_`/`skip_if` block whose body ends in `bra join;`:
    the other branch's body, then `join:` (the label both branches meet at)."""

    def __init__(self, to):
        self.label = to


def _negated(pred):
    return pred.value if isinstance(pred, Neg) else ~pred


def _jump(pred, label, uni):
    (ptx.bra.uni if uni else ptx.bra)(_target(label), pred=pred)


def break_if(pred, to, uni=False):
    """`@pred bra to;` leaving the enclosing loop for the label `to` after it."""
    _jump(pred, to, uni)


def break_to(to, uni=False):
    """`bra to;` (`uni=True`: `bra.uni`): leave the enclosing loop for the label `to`."""
    _jump(None, to, uni)


def continue_if(pred, to, uni=False):
    """`@pred bra to;` back to the top label `to` of the enclosing loop."""
    _jump(pred, to, uni)


def continue_to(to, uni=False):
    """`bra to;` (`uni=True`: `bra.uni`) back to the top label `to` of the enclosing loop."""
    _jump(None, to, uni)


# spin waits on an mbarrier phase as producers write them: the predicate, the loop
# label, the exit label (None: `@!pred bra.uni loop` ends it) and whether the
# branches are `.uni`
SPIN_WAITS = {
    # { .reg .pred complete; waitLoop: try_wait complete, a, ph; @!complete bra.uni waitLoop; }
    "triton": ("complete", "waitLoop", None, True),
    # { .reg .pred P1; LAB_WAIT: try_wait P1, a, ph; @P1 bra DONE; bra LAB_WAIT; DONE: }
    "cutlass": ("P1", "LAB_WAIT", "DONE", False),
    "cutlass.uni": ("P1", "LAB_WAIT", "DONE", True),
}


def mbarrier_wait(addr, phase, kind="parity.shared__cta.b64", loc=None, at=None, wait_fmt=None, form="triton",
                  **block):
    """A spin wait on an mbarrier phase, as one call (`form`: a `SPIN_WAITS` shape):

        {
        .reg .pred complete;
        waitLoop:                       (`loc=(f, l, c)`: a `.loc` before the label)
        mbarrier.try_wait.<kind> complete, addr, phase;   (`at=`: a `.loc` before it)
        @!complete bra.uni waitLoop;
        }

    (`wait_fmt=`: the try_wait's own `fmt=`; other keywords are the block's.)
    """
    if form not in SPIN_WAITS:
        raise DSLError(f"mbarrier_wait: no form {form!r} (have {', '.join(SPIN_WAITS)})")
    pred, top, done, uni = SPIN_WAITS[form]
    op = ptx.mbarrier.try_wait
    for part in kind.split("."):
        op = getattr(op, part)
    bra = ptx.bra.uni if uni else ptx.bra
    with ptx.block(**block):
        complete = reg.pred(pred)
        if loc is not None:
            record_loc(tuple(loc), {})
        ptx.label(top)
        if at is not None:
            record_loc(tuple(at), {})
        op(complete, addr, phase, fmt=wait_fmt)
        if done is None:
            bra(sym(top), pred=~complete)
        else:
            bra(sym(done), pred=complete)
            bra(sym(top))
            ptx.label(done)


__all__ = ["kernel_name", "labels", "L", "loop", "skip_if", "if_", "else_", "break_if", "break_to", "continue_if",
           "continue_to", "mbarrier_wait"]
