"""Instruction knowledge as data: one validating loader for the family tables.

Each family file (``memory.py``, ``async_copy.py``, ``sync.py``, ``matrix.py``,
``arith.py``; one per group of PTX ISA chapter 9.7 sections) holds ``FORMS``: a
list of plain dicts, one per instruction form::

    dict(op="ld",                     # the opcode (first identifier)
         select=(),                   # modifiers naming the form (mbarrier .init, cp .async .bulk ...)
         groups={"space": ".global .shared ...", "type": T.LDST},  # allowed modifiers, by group
         max={"type": 1},             # how many of one group may be written (default 1)
         required=("type",),          # groups that must be written
         operands=(2, 3),             # operand count range (a `d|p` pair is one operand)
         addr=(1,),                   # operand positions that must be `[address]`
         vector=(0,),                 # operand positions that must be `{vector}`
         since="4.0", sm=20,          # minimum PTX ISA version and sm_XX
         arch=None,                   # "a": an arch-specific target (sm_XXa / sm_XXf) needed;
                                      #  or a tuple of the exact targets allowed
         features={".v8": dict(since="8.8", sm=100)},  # per-modifier requirements
         args="v:T+ a",               # operand kinds and types, one per position (see OPERAND KINDS)
         when=[dict(types=".f32 .f64", need="rnd")],  # constraints across modifiers (see CONSTRAINTS)
         count="wgmma_d",             # name of a shape-dependent operand-size rule (matrix.COUNT_RULES)
         shape="wgmma_shape",         # name of a shape-validity rule (matrix.SHAPE_RULES)
         generic=True)                # no state space written: the addresses are generic (64-bit
                                      #  registers under .address_size 64); forms with .global always

A group entry starting with ``~`` is a regular expression for the whole modifier
(``~\\.m64n\\d+k\\d+``). The loader checks every key, group reference and
version string, so a typo in a table fails at import instead of hiding a rule.
Modifiers are a bag (ptxas accepts most orders), so order is not checked.

OPERAND KINDS (``args``): space-separated, one token per operand, ``KIND[:TYPE][?]``; a token
ending in ``?`` may be left out (only trailing ones), ``...`` ends the list unchecked::

    d  destination register (a sink `_` allowed)     r  register         s  register or immediate
    i  immediate                                      p  predicate (`!p` allowed as a source)
    pp predicate or a `p|q` pair                      a  address `[...]` (or a bare symbol)
    l  label                                          x  anything (not checked)
    v  data: a {vector} of N when the form has `.vN`, else a scalar register (or a {vector} of 1)
    vs like v, immediates allowed (stores)            dp destination, or `d|p` pair
    vv a {vector} of any length (matrix fragments)    dv destination register or {vector} (mov unpack)
    vp a {vector} of 1, 2, 4 or 8 registers (wmma fragments, texture results)
    ta a texture/surface/tensor address: `[handle, {coordinates}]`
    ts a texture address: `[texref, {coordinates}]` or, independent mode, `[texref, samplerref, {coordinates}]`
    sv source: register, immediate, symbol or {vector} (mov pack), never an [address]

TYPE names the register class: ``T`` (the first type modifier), ``T1`` (the second), ``Tw`` (T
doubled under `.wide`), or a literal type (``u32``, ``b64``, ``pred``); a trailing ``+`` lets the
register be wider than the type (ld/st/cvt relaxed rules). No TYPE: any class.

CONSTRAINTS (``when``): a list of dicts; each applies when all its conditions hold:
``types`` (a written type modifier is one of these), ``has`` (one of these modifiers is written),
``lacks`` (none of these is written), ``ntypes`` (this many type modifiers), ``dst`` (the first
state space written, the destination of `cp`'s `.dst.src`, is one of these); and then demands
``reject`` ((rule-id, message): the combination is invalid as such),
``need`` (a group that must be written; `a|b`: one of several groups), ``forbid`` (modifiers not
allowed), ``only`` (type modifiers allowed), ``pairs`` (the written types, joined, must be one of
these), ``operands`` (count range), ``args`` (operand kinds replacing the form's), ``ranges``
(immediate ranges), ``since``/``sm``/``arch`` (a requirement); ``msg`` says why.

RANGES (``ranges``): {operand position: (low, high, step)} for immediates (setmaxnreg 24-256 by 8),
or {position: [allowed values]} (cp.async sizes 4, 8, 16).
A form's ``rule`` names a check in RULES below that is too entangled for plain data (cvt rounding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

_KEYS = {"op", "select", "groups", "max", "required", "operands", "addr", "vector", "since", "sm",
         "arch", "features", "count", "shape", "doc", "args", "when", "ranges", "rule", "generic"}
_WHEN_KEYS = {"types", "has", "lacks", "ntypes", "dst", "need", "forbid", "only", "msg", "pairs", "operands", "args",
              "ranges", "since", "sm", "arch", "reject", "rule"}
_ARG_KINDS = {"d", "r", "s", "i", "p", "pp", "a", "l", "x", "v", "vs", "dp", "vv", "dv", "sv", "vp", "ta", "ts"}
_ARG = re.compile(r"^(?P<kind>[a-z]+)(?::(?P<type>[A-Za-z0-9]+)(?P<wide>\+)?)?(?P<opt>\?)?$")
_FEATURE_KEYS = {"since", "sm", "arch"}
_VERSION = re.compile(r"^\d+\.\d+$")


class SpecError(Exception):
    """A family table is malformed."""


def parse_version(text: str) -> tuple[int, int]:
    """`8.0` / `09.00` -> (8, 0)."""
    major, _, minor = text.strip().partition(".")
    return int(major), int(minor or 0)


@dataclass(frozen=True)
class Requirement:
    since: tuple[int, int] | None = None
    sm: int | None = None
    arch: str | tuple[str, ...] | None = None


@dataclass
class Form:
    op: str
    select: tuple[str, ...]
    groups: dict[str, frozenset[str]]
    patterns: dict[str, tuple[re.Pattern, ...]]
    max: dict[str, int]
    required: tuple[str, ...]
    operands: tuple[int, int]
    addr: tuple[int, ...]
    vector: tuple[int, ...]
    requirement: Requirement
    features: dict[str, Requirement]
    count: str | None
    shape: str | None
    source: str
    args: tuple["Arg", ...] | None = None
    args_open: bool = False
    when: tuple[dict, ...] = ()
    ranges: dict = field(default_factory=dict)
    rule: str | None = None
    generic: bool = False
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def title(self) -> str:
        return self.op + "".join(self.select)

    def group_of(self, modifier: str) -> str | None:
        """The group a modifier belongs to in this form, or None when it is unknown."""
        if modifier in self._cache:
            return self._cache[modifier]
        found = None
        for name, tokens in self.groups.items():
            if modifier in tokens or any(p.fullmatch(modifier) for p in self.patterns.get(name, ())):
                found = name
                break
        self._cache[modifier] = found
        return found


@dataclass(frozen=True)
class Arg:
    """One operand position: its kind, register type reference, wider-allowed, optional."""

    kind: str
    type: str | None = None
    wider: bool = False
    optional: bool = False


def parse_args(text: str, where: str) -> tuple[tuple[Arg, ...], bool]:
    tokens = text.split()
    open_end = bool(tokens) and tokens[-1] == "..."
    if open_end:
        tokens = tokens[:-1]
    out = []
    for tok in tokens:
        m = _ARG.match(tok)
        if not m or m.group("kind") not in _ARG_KINDS:
            raise SpecError(f"{where}: bad operand kind {tok!r}")
        out.append(Arg(m.group("kind"), m.group("type"), bool(m.group("wide")), bool(m.group("opt"))))
    seen_optional = False
    for a in out:
        if seen_optional and not a.optional:
            raise SpecError(f"{where}: optional operands must come last in {text!r}")
        seen_optional |= a.optional
    return tuple(out), open_end


def _requirement(entry: dict, where: str) -> Requirement:
    since = entry.get("since")
    if since is not None and not _VERSION.match(since):
        raise SpecError(f"{where}: bad version {since!r}")
    sm = entry.get("sm")
    if sm is not None and not isinstance(sm, int):
        raise SpecError(f"{where}: sm must be an int")
    arch = entry.get("arch")
    if arch is not None and arch != "a" and not (isinstance(arch, tuple) and all(
            re.fullmatch(r"sm_\d+[af]?", a) for a in arch)):
        raise SpecError(f"{where}: arch must be 'a' or a tuple of sm_XX[a|f] names")
    return Requirement(parse_version(since) if since else None, sm, arch)


def _build(entry: dict, source: str) -> Form:
    where = f"{source}: {entry.get('op')}{''.join(entry.get('select', ()))}"
    unknown = set(entry) - _KEYS
    if unknown:
        raise SpecError(f"{where}: unknown keys {sorted(unknown)}")
    if not isinstance(entry.get("op"), str):
        raise SpecError(f"{where}: op missing")
    groups: dict[str, frozenset[str]] = {}
    patterns: dict[str, tuple[re.Pattern, ...]] = {}
    for name, spec in entry.get("groups", {}).items():
        words = spec.split() if isinstance(spec, str) else list(spec)
        plain = [w for w in words if not w.startswith("~")]
        for w in plain:
            if not w.startswith("."):
                raise SpecError(f"{where}: modifier {w!r} in group {name} lacks its dot")
        groups[name] = frozenset(plain)
        patterns[name] = tuple(re.compile(w[1:]) for w in words if w.startswith("~"))
    for key in ("max",):
        for name in entry.get(key, {}):
            if name not in groups:
                raise SpecError(f"{where}: {key} names unknown group {name!r}")
    for name in entry.get("required", ()):
        if name not in groups:
            raise SpecError(f"{where}: required names unknown group {name!r}")
    ops = entry.get("operands", (0, 0))
    if isinstance(ops, int):
        ops = (ops, ops)
    if not (len(ops) == 2 and 0 <= ops[0] <= ops[1]):
        raise SpecError(f"{where}: bad operand range {ops}")
    features = {}
    for token, req in entry.get("features", {}).items():
        if set(req) - _FEATURE_KEYS:
            raise SpecError(f"{where}: feature {token}: unknown keys {sorted(set(req) - _FEATURE_KEYS)}")
        features[token] = _requirement(req, f"{where} feature {token}")
    form = Form(op=entry["op"], select=tuple(entry.get("select", ())), groups=groups, patterns=patterns,
                max=dict(entry.get("max", {})), required=tuple(entry.get("required", ())), operands=tuple(ops),
                addr=tuple(entry.get("addr", ())), vector=tuple(entry.get("vector", ())),
                requirement=_requirement(entry, where), features=features, count=entry.get("count"),
                shape=entry.get("shape"), source=source)
    if "args" in entry:
        form.args, form.args_open = parse_args(entry["args"], where)
        lo = sum(1 for a in form.args if not a.optional)
        if not form.args_open and (lo, len(form.args)) != form.operands and "operands" in entry:
            raise SpecError(f"{where}: args {entry['args']!r} disagree with operands={form.operands}")
        if "operands" not in entry:
            form.operands = (lo, 99 if form.args_open else len(form.args))
    whens = []
    for w in entry.get("when", ()):
        if set(w) - _WHEN_KEYS:
            raise SpecError(f"{where}: when: unknown keys {sorted(set(w) - _WHEN_KEYS)}")
        for g in (w["need"].split("|") if "need" in w else ()):
            if g not in groups:
                raise SpecError(f"{where}: when needs unknown group {g!r}")
        built = {k: (frozenset(v.split()) if k in ("types", "has", "lacks", "dst", "forbid", "only", "pairs") else v)
                 for k, v in w.items() if k not in ("since", "sm", "arch")}
        if "need" in w:
            built["need"] = tuple(w["need"].split("|"))
        if "operands" in w:
            ops_w = w["operands"]
            built["operands"] = (ops_w, ops_w) if isinstance(ops_w, int) else tuple(ops_w)
        if "args" in w:
            built["args"] = parse_args(w["args"], where)
        if "rule" in w and w["rule"] not in _rules():
            raise SpecError(f"{where}: when names unknown rule {w['rule']!r}")
        if {"since", "sm", "arch"} & set(w):
            built["requirement"] = _requirement(w, f"{where} when")
        whens.append(built)
    form.when = tuple(whens)
    form.ranges = {int(k): v for k, v in entry.get("ranges", {}).items()}
    form.rule = entry.get("rule")
    form.generic = bool(entry.get("generic") or ".global" in groups.get("space", ()))
    if form.rule is not None and form.rule not in _rules():
        raise SpecError(f"{where}: unknown rule {form.rule!r}")
    from .matrix import COUNT_RULES, SHAPE_RULES

    if form.count is not None and form.count not in COUNT_RULES:
        raise SpecError(f"{where}: unknown count rule {form.count!r}")
    if form.shape is not None and form.shape not in SHAPE_RULES:
        raise SpecError(f"{where}: unknown shape rule {form.shape!r}")
    for token in form.features:
        if token not in form.select and form.group_of(token) is None:
            raise SpecError(f"{where}: feature {token} is not an allowed modifier")
    return form


def _rules():
    from . import arith, async_copy, matrix, texture

    return {**arith.FORM_RULES, **matrix.FORM_RULES, **async_copy.FORM_RULES, **texture.FORM_RULES}


FAMILY_MODULES = ("memory", "async_copy", "sync", "matrix", "arith", "texture", "video")


@lru_cache(maxsize=None)
def load() -> dict[str, list[Form]]:
    """opcode -> its forms, most specific (longest select) first."""
    import importlib

    table: dict[str, list[Form]] = {}
    seen = set()
    for mod_name in FAMILY_MODULES:
        mod = importlib.import_module(f"{__package__}.{mod_name}")
        for entry in mod.FORMS:
            form = _build(entry, mod_name)
            key = (form.op, frozenset(form.select))
            if key in seen:
                raise SpecError(f"{mod_name}: duplicate form {form.title}")
            seen.add(key)
            table.setdefault(form.op, []).append(form)
    for forms in table.values():
        forms.sort(key=lambda f: -len(f.select))
    return table


def form_rule(name: str):
    """The check a form's ``rule`` names: form, modifiers -> findings: (rule-id, message, token or
    None); ("requires", (since, sm), token, what) for a version/target the modifiers need; ("count",
    {operand position: (registers, name)}) for vector sizes."""
    return _rules()[name]


def find_form(opcode: str, modifiers: tuple[str, ...]) -> tuple[list[Form] | None, Form | None]:
    """(forms of the opcode or None when the opcode is unknown, the matching form or None)."""
    forms = load().get(opcode)
    if forms is None:
        return None, None
    mods = set(modifiers)
    for form in forms:
        if set(form.select) <= mods:
            return forms, form
    return forms, None
