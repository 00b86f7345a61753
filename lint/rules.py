"""PTX linter: every instruction checked against the instruction tables in
``ptxgrammar/isa`` for the module's own ``.version`` and ``.target``.

    violations = lint_module(ptxgrammar.parse(text, "k.ptx"), "k.ptx")
    for v in violations: print(v)        # k.ptx:12:5: error: [target] ...

Rules (ids printed in brackets):

    unknown-modifier    a modifier no form of a known instruction allows
    duplicate-modifier  two modifiers from one group (`.global.shared`, `.rn.rz`)
    missing-modifier    a required group is absent (no type, no shape ...)
    operand-count       too few or too many operands
    operand-kind        an address or vector operand of the wrong kind
    shape               a matrix shape the instruction's types do not allow (wgmma K by type, N range)
    register-count      a register vector sized wrong for the shape (wgmma/mma accumulators,
                        ldmatrix/stmatrix, tcgen05.ld/st)
    ptx-version         the instruction or modifier is newer than the module's `.version`
    target              the instruction or modifier is not available on the module's `.target`
    operand-kind        an operand of the wrong kind for its position (args in the tables)
    register-class      a register whose declared type does not fit the operand's type
    immediate           an immediate of the wrong kind (a float for an integer operand)
    undeclared          a register not declared in the function, a branch to no label
                        (resolved per `{ }` block: lint/declarations.py)
    duplicate-declaration  a name declared twice in one block (a parameter in the body's own)
    modifier-type       a modifier the written type does not take (`.ftz` on `.s32`)
    state-space         ld/st of a variable in another state space, a write to a kernel parameter
    type                a type (or pair of types) the instruction does not take
    unknown-opcode      an opcode the tables do not know (with a near-miss suggestion);
                        an error unless listed in allow_unknown
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable

from ptx2py.ptxgrammar.isa import spec
from ptx2py.ptxgrammar.isa.matrix import COUNT_RULES, SHAPE_RULES
from ptx2py.ptxgrammar.tree.operands import Vector

from .operands import check_operands, undeclared_names, vector_elements

RULES = ("unknown-modifier", "duplicate-modifier", "missing-modifier", "operand-count", "operand-kind",
         "shape", "register-count", "ptx-version", "target", "unknown-opcode", "register-class", "immediate",
         "undeclared", "modifier-type", "type", "state-space", "duplicate-declaration")


@dataclass(frozen=True)
class Violation:
    file: str
    line: int
    col: int
    rule: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.severity}: [{self.rule}] {self.message}"


# --- module facts -------------------------------------------------------------------------

def module_version(module) -> tuple[int, int] | None:
    from ptx2py.ptxgrammar.tree.module import Version

    for item in module.items:
        if isinstance(item, Version):
            return spec.parse_version(item.number)
    return None


def module_targets(module) -> tuple[str, ...]:
    from ptx2py.ptxgrammar.tree.module import Target

    found: list[str] = []
    for item in module.items:
        if isinstance(item, Target):
            found += [t.strip() for t in item.targets]
    return tuple(found)


def _version_tuple(version) -> tuple[int, int] | None:
    if version is None or isinstance(version, tuple):
        return version
    return spec.parse_version(str(version))


_SM = re.compile(r"^sm_(\d+)([af]?)$")


def _sm_targets(targets: Iterable[str]) -> list[tuple[str, int, str]]:
    out = []
    for t in targets:
        m = _SM.match(t)
        if m:
            out.append((t, int(m.group(1)), m.group(2)))
    return out


def _target_ok(req: spec.Requirement, sms) -> bool:
    if not sms or (req.sm is None and req.arch is None):
        return True
    for name, num, suffix in sms:
        if req.sm is not None and num < req.sm:
            continue
        if req.arch == "a" and not suffix:
            continue
        if isinstance(req.arch, tuple) and name not in req.arch:
            continue
        return True
    return False


def _needs(req: spec.Requirement) -> str:
    if isinstance(req.arch, tuple):
        return " or ".join(req.arch)
    if req.arch == "a":
        return f"an arch-specific target sm_{req.sm or ''}a or newer"
    return f"sm_{req.sm} or newer"


def _fmt_version(v) -> str:
    return f"{v[0]}.{v[1]}"


# --- per-instruction check ----------------------------------------------------------------

def _operand_is_address(op) -> bool:
    from ptx2py.ptxgrammar.tree.operands import Address, BinaryExpr, Indexed, Symbol

    # `ld.global.u64 %rd2, gv[1];` and `sym+imm` are addresses without brackets.
    return isinstance(op, (Address, Symbol, Indexed, BinaryExpr)) and not _is_register(op)


def _is_register(op) -> bool:
    from ptx2py.ptxgrammar.tree.operands import Register

    return isinstance(op, Register)


def _mod_at(modifiers, token):
    return ("mod", modifiers.index(token)) if token in modifiers else None


def _type_mods(form, modifiers):
    group = form.groups.get("type", frozenset())
    return [m for m in modifiers if m in group]


_GROUP_WORDS = {"rnd": "rounding", "mode": "mode", "approx": "precision", "type": "type"}


def matching_whens(form, modifiers):
    """The form's `when` rules whose conditions hold for these modifiers."""
    types = _type_mods(form, modifiers)
    written = set(modifiers)
    for w in form.when:
        if "types" in w and not (set(types) & w["types"]):
            continue
        if "has" in w and not (written & w["has"]):
            continue
        if "lacks" in w and written & w["lacks"]:
            continue
        if "ntypes" in w and len(types) != w["ntypes"]:
            continue
        if "dst" in w and _destination(form, modifiers) not in w["dst"]:
            continue
        yield w


def _destination(form, modifiers):
    """The first state space written: `cp`'s destination (`.dst.src`)."""
    spaces = form.groups.get("space", frozenset())
    return next((m for m in modifiers if m in spaces), None)


def _constraints(form, name, modifiers, whens, version, sms) -> list[tuple[str, str, object]]:
    """The demands of the matching `when` rules (spec.py CONSTRAINTS)."""
    out = []
    types = _type_mods(form, modifiers)
    written = set(modifiers)
    for w in whens:
        why = f" ({w['msg']})" if "msg" in w else ""
        if "reject" in w:
            rule_id, text = w["reject"]
            out.append((rule_id, f"`{name}`: {text}", None))
        named = w.get("has", set()) | w.get("dst", set())
        cond = "".join(t for t in types if t in w.get("types", ())) or "".join(sorted(written & named))
        cond_at = next((m for m in modifiers if m in w.get("types", ()) or m in named), None)
        if "need" in w and not any(written & form.groups[g] for g in w["need"]):
            choices = sorted(set().union(*(form.groups[g] for g in w["need"])))
            shown = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
            group_words = " or ".join(_GROUP_WORDS.get(g, g) for g in w["need"])
            out.append(("missing-modifier", f"`{name}`: {form.title}{cond} needs a {group_words}"
                                            f" modifier: {shown}{why}", None))
        for bad in modifiers:
            if bad in w.get("forbid", ()):
                out.append(("modifier-type", f"`{bad}` is not allowed on `{form.title}{cond}`{why}",
                            _mod_at(modifiers, bad)))
        if "only" in w:
            for t in types:
                if t not in w["only"]:
                    out.append(("type", f"`{name}`: type `{t}` is not allowed here; use one of"
                                        f" {' '.join(sorted(w['only']))}{why}", _mod_at(modifiers, t)))
        if "pairs" in w and len(types) >= 2 and "".join(types) not in w["pairs"]:
            out.append(("type", f"`{name}`: the types {''.join(types)} do not combine; allowed:"
                                f" {', '.join(sorted(w['pairs']))}{why}", _mod_at(modifiers, types[1])))
        req = w.get("requirement")
        if req is not None:
            what = f"`{name}`" + (f" ({cond})" if cond else "")
            out += _requirement_findings(what, req, version, sms, _mod_at(modifiers, cond_at) if cond_at else None, why)
    return out


def _effective(form, whens):
    """(operand count range, args, args_open, ranges) after the matching `when` overrides."""
    ops, args, open_end, ranges = form.operands, form.args, form.args_open, dict(form.ranges)
    for w in whens:
        if "args" in w:
            args, open_end = w["args"]
            lo = sum(1 for a in args if not a.optional)
            ops = (lo, 99 if open_end else len(args))
        if "operands" in w:
            ops = w["operands"]
        ranges.update({int(k): v for k, v in w.get("ranges", {}).items()})
    return ops, args, open_end, ranges


def _range_findings(instruction, ranges) -> list[tuple[str, str, object]]:
    from ptx2py.ptxgrammar.tree.operands import IntLiteral

    out = []
    for pos, allowed in ranges.items():
        if pos >= len(instruction.operands):
            continue
        op = instruction.operands[pos]
        if not isinstance(op, IntLiteral):
            continue
        try:
            value = int(op.text.rstrip("Uu"), 0)
        except ValueError:
            continue
        if isinstance(allowed, list):
            if value not in allowed:
                out.append(("immediate", f"operand {pos + 1} (`{op.text}`) must be one of"
                                         f" {', '.join(map(str, allowed))}", ("op", pos)))
            continue
        low, high, step = allowed
        if not (low <= value <= high and (value - low) % step == 0):
            steps = f" in steps of {step}" if step > 1 else ""
            out.append(("immediate", f"operand {pos + 1} (`{op.text}`) must be {low} to {high}{steps}",
                        ("op", pos)))
    return out


def suggest(opcode: str) -> str | None:
    """The closest known opcode (for `unknown instruction` findings)."""
    import difflib

    known = sorted(set(spec.load()) | set(_spellings().OPCODES))
    close = difflib.get_close_matches(opcode, known, n=1, cutoff=0.6)
    return close[0] if close else None


def _spellings():
    from ptx2py.ptxgrammar.isa import spellings

    return spellings


def _check(instruction, version, targets, decl=None) -> list[tuple[str, str, object]]:
    """(rule, message, where) for one instruction; where is None (the instruction),
    ("mod", i) or ("op", i)."""
    opcode, modifiers = instruction.opcode, tuple(instruction.modifiers)
    head = _head(opcode, modifiers, version, targets)
    problems: list[tuple[str, str, object]] = []
    if decl is not None and head.form is not None:
        problems += [(r, m, ("op", i)) for r, m, i in undeclared_names(instruction, decl)]
    problems += head.problems
    form = head.form
    if form is None:
        return problems
    name = opcode + "".join(modifiers)
    counts: dict = {}
    element_types: list = []
    sms = head.sms
    for rule_name in head.rules:
        for finding in spec.form_rule(rule_name)(form, modifiers, instruction.operands):
            if finding[0] == "element-type":
                element_types.append(finding[1:])
            elif finding[0] == "count":
                counts = finding[1]
            elif finding[0] == "requires":
                _, (since, sm), token, what = finding
                req = spec.Requirement(spec.parse_version(since), sm)
                problems += _requirement_findings(f"`{what}`", req, version, sms, _mod_at(modifiers, token))
            else:
                rule, message, token = finding
                problems.append((rule, f"`{name}`: {message}", _mod_at(modifiers, token) if token else None))

    # operands
    n = len(instruction.operands)
    lo, hi = head.op_range
    if not lo <= n <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        where = ("op", hi) if n > hi else None
        problems.append(("operand-count", f"`{form.title}` takes {want} operands, `{name}` has {n}", where))
        return problems
    for pos in form.addr:
        if -n <= pos < n and not _operand_is_address(instruction.operands[pos]):
            problems.append(("operand-kind", f"`{name}`: operand {pos % n + 1} must be an [address]",
                             ("op", pos % n)))
    for pos in form.vector:
        if -n <= pos < n and not isinstance(instruction.operands[pos], Vector):
            problems.append(("operand-kind", f"`{name}`: operand {pos % n + 1} must be a {{vector}}",
                             ("op", pos % n)))
    if form.count:
        sized = COUNT_RULES[form.count](modifiers)
        if sized is not None:
            pos, want, why = sized
            if -n <= pos < n and isinstance(instruction.operands[pos], Vector):
                got = len(instruction.operands[pos].items)
                if got != want:
                    problems.append(("register-count", f"`{name}`: {why}, got {got}", ("op", pos % n)))
    for pos, (want, what) in counts.items():
        op = instruction.operands[pos] if pos < n else None
        if isinstance(op, Vector) and len(op.items) != want:
            problems.append(("register-count", f"`{name}`: {what} takes {want} registers, got {len(op.items)}",
                             ("op", pos)))
    if head.args is not None:
        problems += [(r, f"`{name}`: {m}", ("op", i))
                     for r, m, i in check_operands(form, head.args, instruction, decl, version)]
    if element_types:
        problems += [(r, f"`{name}`: {m}", ("op", i))
                     for r, m, i in vector_elements(instruction, element_types, decl)]
    if head.ranges:
        problems += [(r, f"`{name}`: {m}", w) for r, m, w in _range_findings(instruction, head.ranges)]
    return problems


@dataclass
class _Head:
    """What an instruction's opcode and modifiers alone decide (cached per module facts)."""

    form: object
    problems: list
    rules: tuple = ()
    op_range: tuple = (0, 0)
    args: tuple | None = None
    ranges: dict | None = None
    sms: list = None


_HEADS: dict = {}


def _head(opcode, modifiers, version, targets) -> _Head:
    key = (opcode, modifiers, version, targets)
    head = _HEADS.get(key)
    if head is None:
        if len(_HEADS) > 100_000:
            _HEADS.clear()
        head = _HEADS[key] = _build_head(opcode, modifiers, version, targets)
    return head


def _build_head(opcode, modifiers, version, targets) -> _Head:
    problems: list[tuple[str, str, object]] = []
    forms, form = spec.find_form(opcode, modifiers)
    if forms is None:
        near = suggest(opcode)
        hint = f"; did you mean `{near}`?" if near and near != opcode else ""
        return _Head(None, [("unknown-opcode", f"unknown instruction `{opcode}`{hint}", None)])
    name = opcode + "".join(modifiers)
    if form is None:
        selectors = sorted({s for f in forms for s in f.select})
        shown = " ".join(f"`{opcode}{''.join(f.select)}`" for f in forms[:6])
        bad = next((m for m in modifiers if m not in selectors), None)
        return _Head(None, [("unknown-modifier", f"`{name}`: no form of `{opcode}` matches (known: {shown}"
                                                 f"{' ...' if len(forms) > 6 else ''})",
                             _mod_at(modifiers, bad) if bad else None)])

    # modifiers: each known, at most max per group, required groups present
    counts: dict[str, list[str]] = {}
    for m in modifiers:
        if m in form.select:
            continue
        group = form.group_of(m)
        if group is None:
            near = _near_modifier(form, m)
            problems.append(("unknown-modifier", f"`{m}` is not a modifier of `{form.title}` (in `{name}`)"
                                                 + (f"; did you mean `{near}`?" if near else ""),
                             _mod_at(modifiers, m)))
            continue
        counts.setdefault(group, []).append(m)
    for group, written in counts.items():
        limit = form.max.get(group, 1)
        if len(written) > limit:
            problems.append(("duplicate-modifier", f"`{name}`: {' and '.join(f'`{w}`' for w in written)} are"
                                                   f" both {group} modifiers (at most {limit})",
                             _mod_at(modifiers, written[limit])))
    for group in form.required:
        if group not in counts:
            examples = sorted(form.groups[group])[:6]
            hint = f" (one of {' '.join(examples)}{' ...' if len(form.groups[group]) > 6 else ''})" if examples else ""
            problems.append(("missing-modifier", f"`{name}` needs a {group} modifier{hint}", None))
    sms = _sm_targets(targets or ())
    whens = list(matching_whens(form, modifiers))
    problems += _constraints(form, name, modifiers, whens, version, sms)
    rules = ((form.rule,) if form.rule is not None else ()) + tuple(w["rule"] for w in whens if "rule" in w)
    op_range, args, _open, ranges = _effective(form, whens)

    if form.shape:
        why = SHAPE_RULES[form.shape](modifiers)
        if why:
            shape_mod = next((m for m in modifiers if re.match(r"\.m\d+n\d+k\d+$", m)), None)
            problems.append(("shape", f"`{name}`: {why}", _mod_at(modifiers, shape_mod) if shape_mod else None))

    # version and target, for the form and for each modifier
    checks = [(form.title, form.requirement, None)] + [
        (f"`{m}` on {form.title}", form.features[m], _mod_at(modifiers, m)) for m in modifiers if m in form.features]
    for what, req, where in checks:
        what = what if what.startswith("`") else f"`{what}`"
        problems += _requirement_findings(what, req, version, sms, where)
    return _Head(form, problems, rules, op_range, args, ranges, sms)


def _requirement_findings(what, req, version, sms, where, why=""):
    out = []
    if version is not None and req.since is not None and version < req.since:
        out.append(("ptx-version", f"{what} needs PTX ISA {_fmt_version(req.since)}, module has"
                                   f" .version {_fmt_version(version)}{why}", where))
    if not _target_ok(req, sms):
        out.append(("target", f"{what} needs {_needs(req)}; module targets"
                              f" {', '.join(t for t, _, _ in sms)}{why}", where))
    return out


def _near_modifier(form, modifier):
    import difflib

    words = sorted({w for g in form.groups.values() for w in g})
    close = difflib.get_close_matches(modifier, words, n=1, cutoff=0.7)
    return close[0] if close else None


def check_instruction(instruction, version=None, targets=(), registers=None, allow_unknown=None) -> list[str]:
    """Problems of one instruction as `[rule-id] message` strings ([] when fine).

    ``version``: `"8.0"` or (8, 0) or None; ``targets``: `("sm_90a",)`; ``registers``: the
    operands.Declarations in scope (None: register classes and declarations are not checked).
    Opcodes in ``allow_unknown`` (None: every unknown opcode) are not reported."""
    found = _check(instruction, _version_tuple(version), tuple(targets), registers)
    return [f"[{rule}] {msg}" for rule, msg, _ in found
            if rule != "unknown-opcode" or (allow_unknown is not None and instruction.opcode not in allow_unknown)]


# --- positions ----------------------------------------------------------------------------

@dataclass
class Placed:
    """An instruction with the source offsets of its first token, its modifiers and operands, the
    block it is in (its Declarations) and its serial (what it sees of that block's declarations)."""

    instruction: object
    start: int
    modifiers: list[int]
    operands: list[int]
    function: object = None
    scope: object = None
    serial: int = 0


@dataclass
class Walk:
    """What one walk of a module finds: its instructions, line starts, `.target` offsets, the
    module's declarations and the names declared twice in one block (offset, name)."""

    placed: list
    newlines: list
    targets: list
    module_scope: object
    duplicates: list


@dataclass
class Scan:
    """The module's instructions (each with its function, block and serial; no offsets yet), the
    names declared twice in one block (VarDecl, name) and the module's own declarations."""

    placed: list
    duplicates: list
    module_scope: object


def scan_module(module) -> Scan:
    """Resolve the module's blocks: one Declarations per `{ }` (a function's body holds its
    parameters), every statement numbered in source order. Statements only, not their operands:
    cheap enough to run before knowing whether any offset is needed."""
    from ptx2py.ptxgrammar.tree.declarations import Function, VarDecl
    from ptx2py.ptxgrammar.tree.statements import Block, Instruction, Label

    from .declarations import Declarations, add_params, declare

    module_scope = Declarations()
    placed: list[Placed] = []
    duplicates: list[tuple[object, str]] = []
    serial = 0

    def block(items, scope, function) -> None:
        nonlocal serial
        for node in items:
            cls = node.__class__
            if cls is Instruction:
                serial += 1
                placed.append(Placed(node, -1, [], [], function, scope, serial))
            elif cls is Block:
                block(node.items, Declarations(parent=scope), function)
            elif cls is VarDecl:
                serial += 1
                duplicates.extend((node, name) for name in declare(scope, node, serial))
            elif cls is Label:
                scope.labels.add(node.name)

    for item in module.items:
        if item.__class__ is Function:
            module_scope.functions.add(item.head.name)
            if item.body is not None:
                body = Declarations(parent=module_scope)
                add_params(body, item.head)
                block(item.body.items, body, item)
        elif item.__class__ is VarDecl:
            declare(module_scope, item)
    return Scan(placed, duplicates, module_scope)


@dataclass
class Positions:
    """Source offsets, by node identity: each instruction's (first token, modifiers, operands),
    each declaration's first token; line starts after the first; `.target` directives."""

    instructions: dict
    declarations: dict
    newlines: list
    targets: list


def positions(module) -> Positions:
    """Offsets computed by emitting the module: each node's trivia[i] precedes its i-th own token."""
    from ptx2py.ptxgrammar.emitter import default_trivia
    from ptx2py.ptxgrammar.tree.declarations import VarDecl
    from ptx2py.ptxgrammar.tree.module import Target
    from ptx2py.ptxgrammar.tree.statements import Instruction

    offset = 0
    instructions: dict[int, tuple] = {}
    declarations: dict[int, int] = {}
    newlines: list[int] = []
    targets: list[int] = []
    newline = re.compile(r"\r\n|\r|\n")

    def visit(node) -> None:
        nonlocal offset
        trivia = node.trivia
        if trivia is None:
            trivia = default_trivia(node)
        cls = node.__class__
        if cls is Instruction:
            visit_instruction(node, trivia)
            return
        if cls is VarDecl:
            declarations[id(node)] = offset + (len(trivia[0]) if trivia and node._parts()[0].__class__ is str else 0)
        elif cls is Target:
            targets.append(offset + len(trivia[0]))
        i = 0
        for part in node._parts():
            if part.__class__ is str:
                text = trivia[i]
                i += 1
                if "\n" in text or "\r" in text:
                    newlines.extend(offset + m.end() for m in newline.finditer(text))
                offset += len(text)
                if "\n" in part:
                    newlines.extend(offset + m.end() for m in newline.finditer(part))
                offset += len(part)
            else:
                visit(part)

    def visit_instruction(node, trivia) -> None:
        nonlocal offset
        start, modifiers, operands = -1, [], []
        first_mod = 1 + (len(node.guard._parts()) if node.guard is not None else 0)
        last_mod = first_mod + len(node.modifiers)
        i = 0
        for part in node._parts():
            if part.__class__ is str:
                text = trivia[i]
                if "\n" in text or "\r" in text:
                    newlines.extend(offset + m.end() for m in newline.finditer(text))
                offset += len(text)
                if i == 0:
                    start = offset
                elif first_mod <= i < last_mod:
                    modifiers.append(offset)
                offset += len(part)
                i += 1
            else:
                operands.append(offset + len(_leading(part)))
                visit(part)
        instructions[id(node)] = (start, modifiers, operands)

    visit(module)
    return Positions(instructions, declarations, newlines, targets)


def walk_module(module) -> Walk:
    """Every instruction with its offsets and its block's declarations (scan_module + positions)."""
    scan = scan_module(module)
    pos = positions(module)
    for p in scan.placed:
        p.start, p.modifiers, p.operands = pos.instructions[id(p.instruction)]
    duplicates = [(pos.declarations[id(node)], name) for node, name in scan.duplicates]
    return Walk(scan.placed, pos.newlines, pos.targets, scan.module_scope, duplicates)


def placed_instructions(module) -> tuple[list[Placed], list[int]]:
    """Every instruction with its offsets, and the offsets of line starts after the first."""
    walk = walk_module(module)
    placed_instructions.targets = walk.targets  # offsets of `.target` directives, for module findings
    return walk.placed, walk.newlines


def _leading(node) -> str:
    from ptx2py.ptxgrammar.emitter import default_trivia

    parts = node._parts()
    if not parts:
        return ""
    if isinstance(parts[0], str):
        trivia = node.trivia if node.trivia is not None else default_trivia(node)
        return trivia[0] if trivia else ""
    return _leading(parts[0])


def _line_col(newlines, off):
    line_index = bisect.bisect_right(newlines, off)
    line_start = newlines[line_index - 1] if line_index else 0
    return line_index + 1, off - line_start + 1


def instruction_positions(module) -> list[tuple[object, int, int]]:
    """(instruction, line, column) for every instruction."""
    placed, newlines = placed_instructions(module)
    return [(p.instruction, *_line_col(newlines, p.start)) for p in placed]


def lint_module(module, filename: str = "<ptx>", strict: bool = False,
                allow_unknown: Iterable[str] = ()) -> list[Violation]:
    """Every rule violation in the module, in source order. An opcode the tables do not know is
    an `unknown-opcode` error unless it is in ``allow_unknown`` (``strict`` is kept for callers
    that asked for notes: every unknown opcode is reported either way). Offsets are computed only
    when there is a finding to place (most files have none)."""
    version = module_version(module)
    targets = module_targets(module)
    allowed = set(allow_unknown)
    scan = scan_module(module)
    found = []  # (node, rule, message, where)
    for p in scan.placed:
        decl = p.scope
        decl.now = p.serial
        for rule, message, where in _check(p.instruction, version, targets, decl):
            if rule != "unknown-opcode" or p.instruction.opcode not in allowed:
                found.append((p.instruction, rule, message, where))
    found += [(node, "duplicate-declaration", f"`{name}` is declared twice in one block", None)
              for node, name in scan.duplicates]
    module_findings = _target_version(version, targets)
    if not found and not module_findings:
        return []
    pos = positions(module)
    placed = []
    for node, rule, message, where in found:
        off = pos.declarations.get(id(node), 0)
        if id(node) in pos.instructions:
            start, modifiers, operands = pos.instructions[id(node)]
            off = start
            if where is not None:
                kind, i = where
                offsets = modifiers if kind == "mod" else operands
                if 0 <= i < len(offsets):
                    off = offsets[i]
        placed.append((off, rule, message))
    placed.sort(key=lambda f: f[0])
    out = []
    if module_findings and pos.targets:
        line, col = _line_col(pos.newlines, pos.targets[0])
        out += [Violation(filename, line, col, "target", message) for message in module_findings]
    for off, rule, message in placed:
        line, col = _line_col(pos.newlines, off)
        out.append(Violation(filename, line, col, rule, message))
    return out


def _target_version(version, targets) -> list[str]:
    """`.target` names a GPU newer than the module's `.version` knows."""
    from ptx2py.ptxgrammar.isa.targets import TARGET_SINCE

    if version is None:
        return []
    out = []
    for t in targets:
        since = TARGET_SINCE.get(t)
        if since is not None and version < spec.parse_version(since):
            out.append(f".target {t} needs PTX ISA {since} or newer; the module has .version {_fmt_version(version)}")
    return out


def lint_text(text: str, filename: str = "<ptx>", strict: bool = False,
              allow_unknown: Iterable[str] = ()) -> list[Violation]:
    from ptx2py import ptxgrammar

    return lint_module(ptxgrammar.parse(text, filename), filename, strict, allow_unknown)
