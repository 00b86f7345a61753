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
    unknown-opcode      (note, only with strict=True) an opcode the tables do not know;
                        never an error: it may be newer PTX
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable

from ptxgrammar.isa import spec
from ptxgrammar.isa.matrix import COUNT_RULES, SHAPE_RULES

RULES = ("unknown-modifier", "duplicate-modifier", "missing-modifier", "operand-count", "operand-kind",
         "shape", "register-count", "ptx-version", "target", "unknown-opcode")


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
    from ptxgrammar.tree.module import Version

    for item in module.items:
        if isinstance(item, Version):
            return spec.parse_version(item.number)
    return None


def module_targets(module) -> tuple[str, ...]:
    from ptxgrammar.tree.module import Target

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
    from ptxgrammar.tree.operands import Address, BinaryExpr, Indexed, Symbol

    # `ld.global.u64 %rd2, gv[1];` and `sym+imm` are addresses without brackets.
    return isinstance(op, (Address, Symbol, Indexed, BinaryExpr)) and not _is_register(op)


def _is_register(op) -> bool:
    from ptxgrammar.tree.operands import Register

    return isinstance(op, Register)


def _check(instruction, version, targets) -> list[tuple[str, str]]:
    from ptxgrammar.tree.operands import Vector

    problems: list[tuple[str, str]] = []
    opcode, modifiers = instruction.opcode, tuple(instruction.modifiers)
    forms, form = spec.find_form(opcode, modifiers)
    if forms is None:
        return [("unknown-opcode", f"`{opcode}` is not in the instruction tables (newer PTX?)")]
    name = instruction.name
    if form is None:
        selectors = sorted({s for f in forms for s in f.select})
        bad = [m for m in modifiers if m not in selectors] or list(modifiers)
        shown = " ".join(f"`{opcode}{''.join(f.select)}`" for f in forms[:6])
        return [("unknown-modifier", f"`{name}`: no form of `{opcode}` matches (known: {shown}"
                                     f"{' ...' if len(forms) > 6 else ''})")]

    # modifiers: each known, at most max per group, required groups present
    counts: dict[str, list[str]] = {}
    for m in modifiers:
        if m in form.select:
            continue
        group = form.group_of(m)
        if group is None:
            problems.append(("unknown-modifier", f"`{m}` is not a modifier of `{form.title}`"
                                                 f" (in `{name}`)"))
            continue
        counts.setdefault(group, []).append(m)
    for group, written in counts.items():
        limit = form.max.get(group, 1)
        if len(written) > limit:
            problems.append(("duplicate-modifier", f"`{name}`: {' and '.join(f'`{w}`' for w in written)} are"
                                                   f" both {group} modifiers (at most {limit})"))
    for group in form.required:
        if group not in counts:
            examples = sorted(form.groups[group])[:6]
            hint = f" (one of {' '.join(examples)}{' ...' if len(form.groups[group]) > 6 else ''})" if examples else ""
            problems.append(("missing-modifier", f"`{name}` needs a {group} modifier{hint}"))

    if form.shape:
        why = SHAPE_RULES[form.shape](modifiers)
        if why:
            problems.append(("shape", f"`{name}`: {why}"))

    # operands
    n = len(instruction.operands)
    lo, hi = form.operands
    if not lo <= n <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        problems.append(("operand-count", f"`{form.title}` takes {want} operands, `{name}` has {n}"))
    else:
        for pos in form.addr:
            if -n <= pos < n and not _operand_is_address(instruction.operands[pos]):
                problems.append(("operand-kind", f"`{name}`: operand {pos % n + 1} must be an [address]"))
        for pos in form.vector:
            if -n <= pos < n and not isinstance(instruction.operands[pos], Vector):
                problems.append(("operand-kind", f"`{name}`: operand {pos % n + 1} must be a {{vector}}"))
        if form.count:
            sized = COUNT_RULES[form.count](modifiers)
            if sized is not None:
                pos, want, why = sized
                if -n <= pos < n and isinstance(instruction.operands[pos], Vector):
                    got = len(instruction.operands[pos].items)
                    if got != want:
                        problems.append(("register-count", f"`{name}`: {why}, got {got}"))

    # version and target, for the form and for each modifier
    sms = _sm_targets(targets or ())
    checks = [(form.title, form.requirement)] + [
        (f"`{m}` on {form.title}", form.features[m]) for m in modifiers if m in form.features]
    for what, req in checks:
        what = what if what.startswith("`") else f"`{what}`"
        if version is not None and req.since is not None and version < req.since:
            problems.append(("ptx-version", f"{what} needs PTX ISA {_fmt_version(req.since)}, module has"
                                            f" .version {_fmt_version(version)}"))
        if not _target_ok(req, sms):
            problems.append(("target", f"{what} needs {_needs(req)}; module targets"
                                       f" {', '.join(t for t, _, _ in sms)}"))
    return problems


def check_instruction(instruction, version=None, targets=()) -> list[str]:
    """Problems of one instruction as `[rule-id] message` strings ([] when fine).

    ``version``: `"8.0"` or (8, 0) or None; ``targets``: `("sm_90a",)`. Unknown opcodes are not
    reported here (see lint_module(strict=True))."""
    return [f"[{rule}] {msg}" for rule, msg in _check(instruction, _version_tuple(version), tuple(targets))
            if rule != "unknown-opcode"]


# --- positions ----------------------------------------------------------------------------

def instruction_positions(module) -> list[tuple[object, int, int]]:
    """(instruction, line, column) for every instruction, computed by emitting the module
    (each node's trivia[i] precedes its i-th own token)."""
    from ptxgrammar.emitter import default_trivia
    from ptxgrammar.tree.statements import Instruction

    offset = 0
    found: list[tuple[object, int]] = []
    newlines: list[int] = []  # offsets of line starts after the first

    def add(text: str) -> None:
        nonlocal offset
        if "\n" in text or "\r" in text:
            for m in re.finditer(r"\r\n|\r|\n", text):
                newlines.append(offset + m.end())
        offset += len(text)

    def visit(node) -> None:
        trivia = node.trivia
        if trivia is None:
            trivia = default_trivia(node)
        i = 0
        is_instruction = isinstance(node, Instruction)
        for part in node._parts():
            if part.__class__ is str:
                add(trivia[i])
                if is_instruction and i == 0:
                    found.append((node, offset))
                add(part)
                i += 1
            else:
                visit(part)

    visit(module)
    out = []
    for instr, off in found:
        line_index = bisect.bisect_right(newlines, off)
        line_start = newlines[line_index - 1] if line_index else 0
        out.append((instr, line_index + 1, off - line_start + 1))
    return out


def lint_module(module, filename: str = "<ptx>", strict: bool = False) -> list[Violation]:
    """Every rule violation in the module, in source order."""
    version = module_version(module)
    targets = module_targets(module)
    out: list[Violation] = []
    for instr, line, col in instruction_positions(module):
        for rule, message in _check(instr, version, targets):
            if rule == "unknown-opcode":
                if strict:
                    out.append(Violation(filename, line, col, rule, message, "note"))
                continue
            out.append(Violation(filename, line, col, rule, message))
    return out


def lint_text(text: str, filename: str = "<ptx>", strict: bool = False) -> list[Violation]:
    import ptxgrammar

    return lint_module(ptxgrammar.parse(text, filename), filename, strict)
