"""The variable a kernel's own source assigns at a source line (for sugar/regnames.py):

    rm = pid_m * BM + tl.arange(0, BM)         (Triton, Pallas: Python)   -> line 12: "rm"
    for k0 in range(0, K, BK):                 (the loop header's lines)  -> "k0"
    float acc = 0.0f;   acc += a[i] * b[k];    (CUDA C++, -lineinfo)      -> "acc"

Python sources are read with `ast` (a statement spanning lines names every line it spans, the
innermost statement wins); C++ lines by one pattern for a declaration or assignment whose
target is a plain name. Element stores (`c[i] = ...`), tuple targets and calls name nothing.
"""

from __future__ import annotations

import ast
import re

_CXX_TARGET = re.compile(
    r"^\s*(?:for\s*\(\s*)?(?:(?:const|unsigned|signed|volatile|static|auto|register|[A-Za-z_][\w:]*(?:<[^;=]*>)?)"
    r"[\s\*&]+)*([A-Za-z_]\w*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)")
_CXX_KEYWORDS = frozenset({"return", "if", "else", "while", "do", "switch", "case", "goto", "sizeof", "new", "delete"})


def _python_targets(text: str) -> dict:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    out: dict = {}
    for node in ast.walk(tree):  # outer statements first: an inner one overwrites their lines
        name, last = None, getattr(node, "end_lineno", None)
        if node.__class__ in (ast.Assign, ast.AugAssign, ast.AnnAssign):
            targets = node.targets if node.__class__ is ast.Assign else [node.target]
            if len(targets) == 1 and targets[0].__class__ is ast.Name:
                name = targets[0].id
        elif node.__class__ is ast.For and node.target.__class__ is ast.Name:
            name, last = node.target.id, node.body[0].lineno - 1  # the header only
        elif isinstance(node, ast.stmt) and node.__class__ not in (ast.FunctionDef, ast.If, ast.While, ast.With):
            last = node.end_lineno  # a statement that assigns nothing names nothing on its lines
        else:
            continue
        for line in range(node.lineno, (last or node.lineno) + 1):
            out[line] = (name, node.lineno)
    return out


def _cxx_targets(text: str) -> dict:
    out = {}
    for k, line in enumerate(text.split("\n"), 1):
        m = _CXX_TARGET.match(line.split("//", 1)[0])
        out[k] = (m.group(1) if m and m.group(1) not in _CXX_KEYWORDS else None, k)
    return out


def statements(path: str, text: str) -> dict:
    """{source line: (the name its statement assigns or None, the statement's first line)}."""
    return _python_targets(text) if path.endswith(".py") else _cxx_targets(text)


def targets(path: str, text: str) -> dict:
    """{source line: the name assigned there} of a source file."""
    return {k: v[0] for k, v in statements(path, text).items() if v[0] is not None}
