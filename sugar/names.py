"""Readable Python names for PTX names, as a table in the Python (never text edits):

    # vecAdd(float*, float*, int)
    vecAdd = kernel_name("_Z6vecAddPfS_i")        # parameters vecAdd.a0_float_ptr, ...
    k = kernel_name("matmul_kernel", params=3)     # Triton's `<kernel>_param_<i>` -> k.param_i
    L = labels("$L__BB0_3 $L__tmp0")              # LLVM's local labels: L.bb3, L.tmp0

A declaration's spelling becomes the Python name (`ptx.entry(vecAdd.name, ...)`,
`param.u64(vecAdd.a0_float_ptr)`, `ptx.label(L.bb3)`), a use `sym(L.bb3)`;
the DSL objects (`transpile.dsl.control`) carry the original spelling.
"""

from __future__ import annotations

import builtins
import keyword

from ptx2py.transpile import dsl
from ptx2py.transpile.cxxnames import ident as _ident
from ptx2py.transpile.cxxnames import param_names, signature
from ptx2py.transpile.cxxnames import strip_templates as _strip_templates
from ptx2py.transpile.generator import q
from ptx2py.transpile.names import is_local_label, label_names, rule_label_name

from . import param_types
from .ir import Call, Display, Kw, children, is_call, stmt, taken_names, unq
from .param_types import plain_param
from .sources import param_names as source_param_names

LABELS = "L"
_RESERVED = frozenset({
    "ptx", "reg", "regs", "banner", "spelling", "var", "param", "regparam", "d", "sreg", "sym", "regn", "imm", "fimm",
                       "sink", "expr",
    "unary", "paren", "cast", "cond", "index", "apply", "addr", "args", "pair", "neg", "field", "secref",
    "DSLError", "srcmap", "at", "loc", "asm", "nvasm", "inline_asm", "data_b8", "debug_str", "debug_strings",
                       "PtxName", "kernel_name", "labels", "loop",
    "skip_if", "if_", "else_", "break_if", "break_to", "continue_if", "continue_to", "mbarrier_wait", "range",
                       "i", "j", "k", "n", "m",
                       "idx", "ii", "print", "len", "int", "str",
    "type", "object", "list", "dict", "tuple", "set", "id", "min", "max", "sum", "all", "any", "iter", "next",
    "True", "False", "None", LABELS, "f32", "f64", "LOG2E", "LN2", "INF",
    # typed calls (transpile/dsl/families.py) and sugar/tensorcore.py's constant
    "mma_sync", "wgmma_mma", "ldmatrix", "stmatrix", "cp_async_bulk", "cp_async_bulk_tensor",
    "cp_async_bulk_prefetch", "cp_async_bulk_prefetch_tensor", "mbarrier_init", "mbarrier_inval",
    "mbarrier_arrive", "mbarrier_arrive_drop", "mbarrier_expect_tx", "mbarrier_complete_tx",
    "mbarrier_test_wait", "mbarrier_try_wait", "mbarrier_pending_count", "tcgen05_mma", "tcgen05_ld",
    "tcgen05_st", "tcgen05_cp", "tcgen05_shift", "tcgen05_commit", "tcgen05_alloc", "tcgen05_dealloc",
    "WGMMA_DESC_BITS", "IDESC", "wgmma_desc", "tcgen05_idesc", "break_to",
}) | frozenset(dsl.__all__) | frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
# Every name the generated module may read (keywords, builtins, the DSL) is never bound to a PTX name.
RESERVED = _RESERVED
def _demangle(name: str):
    if not name.startswith("_Z"):
        return None
    try:
        import cxxfilt

        d = cxxfilt.demangle(name)
    except Exception:  # noqa: BLE001
        return None
    return d if d and d != name else None


class _Names:
    def __init__(self, taken):
        self.used = set(taken) | _RESERVED

    def fresh(self, base: str) -> str:
        base = _ident(base, "f")
        if keyword.iskeyword(base) or keyword.issoftkeyword(base):
            base += "_"
        n, k = base, 1
        while n in self.used:
            n, k = f"{base}_{k}", k + 1
        self.used.add(n)
        return n


def _group_params(call, py) -> None:
    """Runs of same-typed `<k>_param_<i>` parameters -> `*param.u32.of(k, 3, 12)`
    (before the names pass renames them; the run is the declarations in order)."""
    for it in call.items:
        if it.__class__ is Kw and it.name == "params" and it.value.__class__ is Display:
            items, out, k = it.value.items, [], 0
            while k < len(items):
                j = k + 1
                while j < len(items) and plain_param(items[j]) and items[j].head == items[k].head:
                    j += 1
                if plain_param(items[k]) and j - k >= 2:
                    out.append(Call("*" + items[k].head + ".of", [py, str(k), str(j)]))
                else:
                    out.append(items[k])
                k = j if plain_param(items[k]) and j - k >= 2 else k + 1
            it.value = Display("[", "]", out)


def _is_globl(s, name) -> bool:
    """nvcc's `\t// .globl\t<name>` line just before the function."""
    return (s.depth == 0 and is_call(s, "ptx.comment", 2) and unq(s.expr.items[0]) == " .globl\t" + name
            and s.expr.items[1].__class__ is Kw and s.expr.items[1].name == "indent"
            and unq(s.expr.items[1].value) == "\t")


def _items_param_decls(call):
    """The `param.x("name")` calls of a function's params= list (or [])."""
    for it in call.items:
        if it.__class__ is Kw and it.name == "params" and it.value.__class__ is Display:
            return [p for p in it.value.items if p.__class__ is Call]
    return []


def _declared_params(call) -> set:
    """The spellings a function head declares, its parameters and return parameters: inside
    the function they name the parameter, not a module variable (ptxas resolves them so;
    labels do not shadow)."""
    out = set()
    for it in call.items:
        if it.__class__ is Kw and it.value.__class__ is Display:
            out.update(unq(p.items[0]) for p in it.value.items if p.__class__ is Call and p.items)
    return out


def run(stmts, ctx):
    if taken_names(stmts) & {LABELS, "kernel_name", "labels"}:
        return stmts
    names = _Names(taken_names(stmts))
    options = getattr(ctx, "options", None) or {}
    rename: dict = {}  # PTX spelling -> Python expression (atom)
    tables: dict = {}  # stmt index -> [statements to insert before it]
    drop: set = set()  # `// .globl` comments folded into `k.entry(..., globl=True)`
    heads: list = []   # (index, param_types.Head) of the heads written `k.entry(<types>, ...)`

    # functions and their parameters
    for k, s in enumerate(stmts):
        e = s.expr
        if s.depth != 0 or e.__class__ is not Call or e.head not in ("ptx.entry", "ptx.func") or not e.items:
            continue
        name = unq(e.items[0])
        if name is None or name in rename:
            continue
        dem = _demangle(name)
        sig = signature(dem) if dem else None
        decls = _items_param_decls(e)
        spellings = [unq(p.items[0]) if p.items else None for p in decls]
        conventional = bool(decls) and all(sp == f"{name}_param_{i}" for i, sp in enumerate(spellings))
        if dem is None and not conventional:
            continue
        base = sig[0] if sig else (name if dem is None else "kernel")
        py = names.fresh(base if len(base) <= _MAX_KERNEL_NAME else "kernel")  # a short alias: `sym(kernel.x)`
        args = [q(name)]
        if dem is not None:  # for the reader; kernel_name demangles the spelling itself
            tables.setdefault(k, []).append(stmt("# " + dem, 0))
        if conventional:
            head = param_types.compact(s, py)
            given = (options.get("param_names") or {}).get(name)
            if given is not None and len(given) == len(decls):  # named by the caller (the Triton bridge)
                named = list(given)
            else:
                named = source_param_names(name, len(decls), options, ctx.module if ctx is not None else None)
            if named is not None:
                pn = named
                args.append(Kw("params", q(" ".join(named))))
            elif sig and len(sig[1]) == len(decls):
                pn = param_names(sig[1])
            else:
                pn = [f"param_{i}" for i in range(len(decls))]
                args.append(Kw("params", str(len(decls))))
                if head is None:
                    _group_params(e, py)
            for sp, n in zip(spellings, pn):
                rename[sp] = f"{py}.{n}"
            if head is not None:
                heads.append((k, head))
                if k > 0 and _is_globl(stmts[k - 1], name):
                    drop.add(k - 1)
                    head.keywords.append(Kw("globl", "True"))
        rename[name] = py + ".name"
        tables.setdefault(k, []).append(stmt(Call("kernel_name", args), 0, py + " = "))
    if heads:  # the names the heads share, before the first of them
        tables[heads[0][0]][:0] = param_types.shorten([h for _, h in heads], names.fresh)

    # labels defined inside functions: `L.bb0_3` by rule, or one `labels("...")` table of their spellings
    by_rule_active: dict = {}
    order = []
    for s in stmts:
        e = s.expr
        if s.depth >= 1 and e.__class__ is Call and e.head == "ptx.label" and len(e.items) == 1:
            lab = unq(e.items[0])
            if lab is not None and lab not in rename and is_local_label(lab):
                rename[lab] = None
                order.append(lab)
    if order:
        by_rule = [rule_label_name(lab) for lab in order]
        table = None in by_rule
        for lab, n in zip(order, label_names(order) if table else by_rule):
            rename[lab] = f"{LABELS}.{n}"
        names.used.add(LABELS)
        if table:  # spellings the rule does not cover: `L = labels("...")` names them all
            tables.setdefault(0, []).insert(0, stmt(Call("labels", _label_lines(order)), 0, LABELS + " = "))
        else:
            by_rule_active = {lab: rename[lab] for lab in order}

    variables = _variables(stmts, rename, names)
    if not rename and not variables:
        return stmts
    active: dict = dict(by_rule_active)
    outer = None  # the module's names while inside a function (its own declarations are scoped)
    out = []
    for k, s in enumerate(stmts):
        if s.depth == 0 and outer is not None:
            active, outer = outer, None
        if k in drop:
            continue
        for t in tables.get(k, ()):
            out.append(t)
            if t.prefix == LABELS + " = ":
                for line in t.expr.items:
                    for lab in unq(line).split():
                        active[lab] = rename[lab]
            elif t.expr.__class__ is Call and t.expr.head == "kernel_name":  # (not `# <demangled>`, a type's name)
                nm = unq(t.expr.items[0])
                for sp, py in rename.items():
                    if sp == nm or (py.startswith(t.prefix[:-3] + ".") and sp.startswith(nm + "_param_")):
                        active[sp] = py
        if s.depth == 0 and s.expr.__class__ is Call and s.expr.head in ("ptx.entry", "ptx.func"):
            outer = active   # a parameter spelled like a module variable names the parameter
            shadowed = _declared_params(s.expr)
            active = {sp: py for sp, py in active.items() if not (sp in shadowed and py.__class__ is _Bare)}
        if active:
            s.expr = _sub(s.expr, active, top=True)
        var = variables.get(k)
        if var is not None:  # `temp_storage = var.shared...("_ZZ...temp_storage", ...)`
            s.prefix = var[1] + " = "
            active[var[0]] = _Bare(var[1])
        out.append(s)
    return out


_MAX_VARIABLE_NAME = 32  # longer (undemangled) spellings stay `sym("...")`
# a longer kernel name (CuTe DSL's 90-character ones) is called `kernel` in the Python, so that each
# `ld.param` of `sym(kernel.x)` fits one line; `kernel_name("...")` keeps the spelling
_MAX_KERNEL_NAME = 32


class _Bare(str):
    """A Python name bound to the symbol itself (a declared variable): used without `sym()`."""


def _variables(stmts, rename, names) -> dict:
    """stmt index -> (spelling, Python name) for each variable declaration whose symbol the
    module uses: `var.shared.align(4).b8("_ZZ12rmsnorm_halfE3red", ...)` -> `red = ...`."""
    where: dict = {}  # symbol spelling -> the top-level statements (functions) using it
    function = None  # index of the enclosing top-level statement
    for k, s in enumerate(stmts):
        if s.depth == 0:
            function = k
        used = set()
        _used_symbols(s.expr, used)
        for u in used:
            where.setdefault(u, set()).add(function)
    # A spelling that also names a function (invalid PTX that parses) keeps `sym("...")`.
    functions = {unq(s.expr.items[0]) for s in stmts if s.depth == 0 and s.expr.__class__ is Call
                 and s.expr.head in ("ptx.entry", "ptx.func") and s.expr.items}
    decls = []
    for k, s in enumerate(stmts):
        if s.depth == 0:
            function = k
        e = s.expr
        if s.prefix or s.trailer or e.__class__ is not Call or not e.head.startswith("var.") or not e.items:
            continue
        spelling = unq(e.items[0])
        if spelling is None or spelling not in where or spelling in functions:
            continue
        base = _variable_base(spelling)
        if spelling in rename or any(unq(i) is not None for i in e.items[1:]) or (
                len(base) > _MAX_VARIABLE_NAME):
            continue
        local = s.depth > 0 and where[spelling] == {function}
        decls.append((local, k, function, spelling, base))
    out, local = {}, {}
    for inner, k, function, spelling, base in sorted(decls):  # global names first
        if inner:  # a variable only its function uses is named afresh in each function
            taken = local.setdefault(function, set())
            py = _Names(names.used | taken).fresh(base)
            taken.add(py)
        else:
            py = names.fresh(base)
        out[k] = (spelling, py)
    return out


def _used_symbols(e, out) -> None:
    if e.__class__ is Call and e.head == "sym" and len(e.items) == 1:
        v = unq(e.items[0])
        if v is not None:
            out.add(v)
    for i in children(e):
        _used_symbols(i, out)


def _variable_base(spelling: str) -> str:
    """The last component of the demangled name (`cub::...::temp_storage` -> `temp_storage`)."""
    dem = _demangle(spelling)
    if dem is None:
        return _ident(spelling, "v")
    return _strip_templates(dem.split("(")[-1] if dem.endswith(")") else dem).split("::")[-1]


_DECL_HEADS = ("ptx.entry", "ptx.func", "ptx.label")


def is_sym_call(e) -> bool:
    return e.__class__ is Call and e.head == "sym" and len(e.items) == 1


def _int_atom(a) -> bool:
    return a.__class__ is str and a.isdigit() and (a == "0" or a[0] != "0")
_LABEL_LINE = 72  # characters of spellings per string of the labels table


def _label_lines(spellings) -> list:
    """The spellings as space-separated string literals of at most _LABEL_LINE characters."""
    lines, cur = [], ""
    for sp in spellings:
        if cur and len(cur) + 1 + len(sp) > _LABEL_LINE:
            lines.append(q(cur))
            cur = sp
        else:
            cur = f"{cur} {sp}" if cur else sp
    lines.append(q(cur))
    return lines


def _sub(e, active, top=False, decl=False):
    """Replace `sym("x")` (and the name argument of declarations) by its Python name."""
    c = e.__class__
    if c is Call:
        if e.head == "sym" and len(e.items) == 1:
            v = unq(e.items[0])
            if v in active:
                py = active[v]
                return str(py) if py.__class__ is _Bare else Call("sym", [py])
            return e
        if e.head == "expr" and len(e.items) == 3:  # `expr(sym("x"), "+", 16)` -> `x + 16`
            left = e.items[0]
            py = active.get(unq(left.items[0])) if is_sym_call(left) else None
            if py.__class__ is _Bare and e.items[1] in ('"+"', '"-"') and _int_atom(e.items[2]):
                return f"{py} {e.items[1][1]} {e.items[2]}"
        items = e.items
        first_is_name = (top and e.head in _DECL_HEADS) or decl
        new = []
        changed = False
        for idx, it in enumerate(items):
            if idx == 0 and first_is_name and it.__class__ is str:
                v = unq(it)
                if v in active and active[v].__class__ is not _Bare:  # a variable object names no label
                    new.append(str(active[v]))   # plain str: the IR's walks test `is str`
                    changed = True
                    continue
            r = _sub(it, active, decl=False)
            changed |= r is not it
            new.append(r)
        if e.head.startswith(("param", "regparam")) and items and items[0].__class__ is str:
            v = unq(items[0])
            if v in active and active[v].__class__ is not _Bare:   # nor a parameter
                new[0] = str(active[v])
                changed = True
        return Call(e.head, new) if changed else e
    if c is Kw:
        r = _sub(e.value, active)
        return e if r is e.value else Kw(e.name, r)
    if c is Display:
        new = [_sub(i, active) for i in e.items]
        return e if all(a is b for a, b in zip(new, e.items)) else Display(e.open, e.close, new)
    return e
