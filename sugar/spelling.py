"""Checks that `--sugar` Python spells each instruction family one way: every instruction of a
typed family (transpile/dsl/families.py: TMA, mbarrier, wgmma, tcgen05, mma, ldmatrix, ...)
is its typed call with keyword operands (directly or through an alias of a typed head), never
the plain `ptx.`/`asm.` chain or positional operands; no vector inside an address (TMA
and texture coordinates) is shown as a register range; inline asm is spelled `asm`
(`asm.<insn>(...)`, `with asm():`, `nvasm` for NVVM's bracket), never `with inline_asm():`;
and an instruction the module names by an alias (sugar/aliases.py: `cp_async =
asm.here.cp.async_.ca.shared.global_`, Ampere's `cp.async` among them) is called through it
everywhere, never by its chain (`asm.at(242, 13).cp.async_...` in a loop), whatever `.loc`
prefix (`at(...)`, `here`) either has.

    problems = check(sugar_python)   # ["12: mbarrier_arrive spelled plain: asm.mbarrier.arrive...", ...]
"""

from __future__ import annotations

import ast

from ptx2py.transpile.dsl.families import OTHERS
from ptx2py.transpile.dsl.typed import FAMILIES, applicable
from ptx2py.transpile.names import from_python, to_python

_LEADS = sorted(((tuple(to_python(w) for w in f.lead), n) for n, f in FAMILIES.items()), key=lambda x: -len(x[0]))
_PREFIXES = ("ptx", "asm", "nvasm", "block")
_OTHERS = tuple(tuple(to_python(w) for w in o.split(".")) for o in OTHERS)


def _chain(func):
    """The dot-words of a callee with its `at(...)` prefix calls left out, else None:
    `asm.at(1, 2, 3).wgmma_mma.m64n128k16` -> ["asm", "wgmma_mma", "m64n128k16"]."""
    words = []
    while True:
        if isinstance(func, ast.Attribute):
            words.append(func.attr)
            func = func.value
        elif isinstance(func, ast.Call) and (isinstance(func.func, ast.Name) and func.func.id == "at"
                                             or isinstance(func.func, ast.Attribute) and func.func.attr == "at"):
            func = func.func.value if isinstance(func.func, ast.Attribute) else None
            if func is None:
                return words[::-1]
        elif isinstance(func, ast.Name):
            words.append(func.id)
            return words[::-1]
        else:
            return None


_HERE = "here"  # `asm.here.<insn>`: a `.loc` prefix, not part of the instruction


def _bare(chain) -> tuple:
    """The chain without its `here` prefix words (`at(...)` calls are gone already)."""
    return tuple(w for k, w in enumerate(chain) if not (w == _HERE and k and chain[k - 1] in _PREFIXES))


def _unaliased(chain, aliases):
    """The alias a call spelled by its chain should have gone through, else None."""
    bare = _bare(chain)
    for name, target in aliases.items():
        t = _bare(target)
        if len(t) > 1 and bare[:len(t)] == t:
            return name
    return None


def _aliases(tree) -> dict:
    """`name = <head chain>` at the top of the module (sugar/aliases.py): name -> chain."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            chain = _chain(node.value) if isinstance(node.value, ast.Attribute) else None
            if chain is not None and len(chain) > 1:
                out[node.targets[0].id] = chain
    return out


def _family(words):
    """(family, typed) of an instruction chain without its prefixes: typed when it starts with
    the family's name, plain when it starts with the family's leading PTX words; else None."""
    if words and words[0] in FAMILIES and len(words) > 1:
        return words[0], True
    if any(tuple(words[:len(o)]) == o for o in _OTHERS):
        return None
    for lead, name in _LEADS:
        if tuple(words[:len(lead)]) == lead:
            return name, False
    return None


def _typeable(name, words, node) -> bool:
    """Could the typed call hold this plain call's operands? Not when their count fits no form
    of the family's modifiers (sugar/tensorcore.py leaves such an instruction plain: ptxas
    refuses it too, e.g. a wgmma without its transpose immediates)."""
    fam = FAMILIES[name]
    mods = tuple(from_python(w) for w in words[len(fam.lead):])
    ops = applicable(fam, mods)
    unsure = [o for o in ops if o.kind == "opt" or any("~" in c for c in o.conds)]
    return len(ops) - len(unsure) <= len(node.args) <= len(ops)


def _ranged_address(node) -> bool:
    """An address list `[...]` holding a register range (`r[62:64]`)."""
    return isinstance(node, ast.List) and any(
        isinstance(x, ast.Subscript) and isinstance(x.slice, ast.Slice) for x in node.elts)


# the inline-asm bracket's other spelling (transpile/dsl/structured.py): it runs, but sugar writes `asm`
_LONG_ASM = "inline_asm"


def check(src: str) -> list:
    tree = ast.parse(src)
    aliases = _aliases(tree)
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        chain = _chain(node.func)
        if not chain:
            continue
        if chain[-1] == _LONG_ASM:
            problems.append(f"{node.lineno}: inline asm spelled {'.'.join(chain)}(...): write asm(...)")
            continue
        if chain[0] in aliases and not (len(chain) == 1 and chain[0] in FAMILIES):
            chain = aliases[chain[0]] + chain[1:]
        elif len(chain) > 1:
            alias = _unaliased(chain, aliases)
            if alias is not None:
                problems.append(f"{node.lineno}: {'.'.join(chain)} spelled without its alias {alias}")
        prefixed = chain[0] in _PREFIXES
        words = chain
        while words and (words[0] in _PREFIXES or words[0] == _HERE):
            words = words[1:]
        fam = _family(words) if prefixed or (words and words[0] in FAMILIES) else None
        if fam is None:
            continue
        name, typed = fam
        line = f"{node.lineno}: {name}"
        if not typed:
            if _typeable(name, words, node):
                problems.append(f"{line} spelled plain: {'.'.join(chain)}")
        elif node.args:
            problems.append(f"{line} with positional operands")
        for k in node.keywords:
            if _ranged_address(k.value):
                problems.append(f"{line}: {k.arg}= holds a register range in an address")
    return problems
