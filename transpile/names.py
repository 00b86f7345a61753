"""The reversible mapping between PTX dot-words and Python identifiers.

A modifier or type is written as an attribute without its dot:
`.global.nc.v4.b32` -> `.global_.nc.v4.b32`. Three rules make every PTX
modifier a valid, reversible Python identifier:

1. `::` becomes `__`           `.shared::cta`    -> `shared__cta`
                               `.L2::cache_hint` -> `L2__cache_hint`
2. a leading digit gets `_`    `.5d`             -> `_5d`
3. a Python keyword gets `_`   `.global`         -> `global_`, `and` -> `and_`

The reverse undoes them in the opposite order. A word the rules cannot map
back to itself (it already contains `__`, starts with `_` + digit, ...) is not
spelled as an attribute; the generator uses the generic `ptx.insn(...)` form.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter
from functools import lru_cache

_KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


@lru_cache(maxsize=None)
def to_python(word: str) -> str:
    """`.shared::cta` -> `shared__cta` (a leading dot is dropped)."""
    w = word[1:] if word.startswith(".") else word
    w = w.replace("::", "__")
    if w[:1].isdigit():
        w = "_" + w
    if w in _KEYWORDS:
        w += "_"
    return w


@lru_cache(maxsize=None)
def from_python(ident: str, dot: bool = True) -> str:
    """`shared__cta` -> `.shared::cta` (with the dot unless dot=False)."""
    w = ident
    if w.endswith("_") and w[:-1] in _KEYWORDS:
        w = w[:-1]
    if w[:1] == "_" and w[1:2].isdigit():
        w = w[1:]
    w = w.replace("__", "::")
    return "." + w if dot else w


@lru_cache(maxsize=65536)
def reversible(word: str, dot: bool = True) -> bool:
    """True when `word` survives PTX -> identifier -> PTX and is an identifier."""
    ident = to_python(word)
    return ident.isidentifier() and from_python(ident, dot) == word and not ident.startswith("__")


def py_var(base: str, taken) -> str:
    """A Python variable name for a register family: `%rd` -> `rd`, `%f` -> `f`."""
    name = _PY_VAR.get(base)
    if name is None:
        name = _py_var_base(base)
        if len(_PY_VAR) < 100_000:
            _PY_VAR[base] = name
    if name not in taken:
        return name
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def _py_var_base(base: str) -> str:
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in base.lstrip("%"))
    if not name or name[0].isdigit():
        name = "r_" + name
    if name in _KEYWORDS or name in RESERVED:
        name += "_"
    return name


_PY_VAR: dict = {}   # register family -> its name before any numbering (families repeat)


# Names the generated module imports from ptx2py.dsl; register variables avoid them.
RESERVED = frozenset(
    "ptx reg var param regparam sreg sym regn imm fimm sink expr unary paren cast cond index "
    "apply addr args pair neg comp d field secref perf print len range list tuple int str".split()
)


# --- local labels: `$L__BB0_3` -> `bb3` ------------------------------------------------------

_LABEL = re.compile(r"\$L__([A-Za-z_]+?)(\d+)(?:_(\d+))?\Z|L(BB|tmp|func_begin|func_end)(\d+)(?:_(\d+))?\Z")
_NON_ID = re.compile(r"[^0-9A-Za-z_]+")


def is_local_label(spelling: str) -> bool:
    """LLVM's and nvcc's numbered labels (`$L__BB0_3`, `$L__tmp0`, `LBB0_3`)."""
    return _LABEL.match(spelling) is not None


def _label_forms(spelling: str):
    """(short, long) Python names of a local label: `$L__BB0_3` -> ("bb3", "bb0_3")."""
    m = _LABEL.match(spelling)
    kind, a, b = m.group(1, 2, 3) if m.group(1) is not None else m.group(4, 5, 6)
    kind = kind.lower().strip("_")
    suffix = f"_{b}" if b else ""
    short = f"{kind}{b}" if (kind == "bb" and b is not None) else f"{kind}{a}{suffix}"
    return short, f"{kind}{a}{suffix}"


def label_names(spellings) -> list:
    """The Python names of a module's local labels, in order: the short form (`bb3`)
    unless two labels share it, then the long one (`bb0_3`); the DSL's `labels(...)`
    and the sugar's names pass both use this rule, so the table is just the spellings."""
    forms = [_label_forms(s) for s in spellings]
    shorts = Counter(f[0] for f in forms)
    out, taken = [], {"L"}
    for short, long_ in forms:
        n = short if shorts[short] == 1 else long_
        n = _NON_ID.sub("_", n).strip("_")
        if not n or n[0].isdigit():
            n = "l_" + n
        base, c = n, 1
        while n in taken or n in _KEYWORDS:
            n, c = f"{base}_{c}", c + 1
        taken.add(n)
        out.append(n)
    return out


_RULE_BB = re.compile(r"\$L__BB(\d+)_(\d+)\Z")
_RULE_OTHER = re.compile(r"\$L__([a-z][a-z_]*?)(\d+)\Z")


def rule_label_name(spelling: str) -> str | None:
    """The Python name of a local label by rule alone (no table): `$L__BB0_3` -> `bb0_3`,
    `$L__tmp0` -> `tmp0`, `$L__func_begin0` -> `func_begin0`; None for other spellings."""
    m = _RULE_BB.match(spelling)
    if m:
        return f"bb{m.group(1)}_{m.group(2)}"
    m = _RULE_OTHER.match(spelling)
    if m and not m.group(1).startswith("bb") and m.group(1) + m.group(2) not in _KEYWORDS:
        return m.group(1) + m.group(2)
    return None


def rule_label_spelling(name: str) -> str:
    """The inverse of rule_label_name: `bb0_3` -> `$L__BB0_3`, `tmp0` -> `$L__tmp0`."""
    return "$L__BB" + name[2:] if name.startswith("bb") else "$L__" + name
