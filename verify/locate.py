"""ptxas diagnostics mapped back to the input the user edited.

ptxas reports against the temporary file verify wrote (`ptxas /tmp/x/edited.ptx, line 12; error :
...`); each diagnostic becomes `FILE:LINE:COL: error: message` at the input's line (for Python
input, the Python line that recorded the instruction), followed by that line and a caret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PTXAS_DIAG = re.compile(r"^ptxas\S*\s+(?P<file>.+?), line (?P<line>\d+); (?P<kind>error|warning)\s*: (?P<msg>.*)$",
                         re.M)
_PTXAS_OTHER = re.compile(r"^ptxas\S*\s+(?P<kind>fatal|error|warning)\s*: (?P<msg>.*)$", re.M)


@dataclass(frozen=True)
class Diagnostic:
    kind: str           # error | warning | info
    message: str
    ptx_line: int       # line in the PTX ptxas saw (0: no line)


def parse_diagnostics(stderr: str) -> list[Diagnostic]:
    out = [Diagnostic(m.group("kind"), m.group("msg").strip(), int(m.group("line")))
           for m in _PTXAS_DIAG.finditer(stderr)]
    out += [Diagnostic("error" if m.group("kind") == "fatal" else m.group("kind"), m.group("msg").strip(), 0)
            for m in _PTXAS_OTHER.finditer(stderr)]
    return out


def _column(line: str, message: str) -> int:
    """1-based column: where the instruction the message names starts on the line (ptxas quotes
    it: `Instruction 'wgmma.fence' ...`), else the line's first non-blank character."""
    for quoted in re.findall(r"'([^']+)'", message):
        for key in (quoted, quoted.split(".")[0]):
            k = line.find(key)
            if k >= 0 and key.strip():
                return k + 1
    return len(line) - len(line.lstrip()) + 1


@dataclass(frozen=True)
class Source:
    """What the user gave: its name, its text, and for Python the PTX line -> Python line map."""
    name: str
    text: str
    line_map: dict[int, int] | None = None
    is_python: bool = False


def locate(diag: Diagnostic, source: Source, ptx_text: str) -> str:
    """`file:line:col: kind: message`, the line and a caret; for Python, the PTX line noted."""
    if diag.ptx_line == 0:
        return f"{source.name}: {diag.kind}: {diag.message}"
    line = diag.ptx_line
    note = ""
    if source.is_python:
        py = (source.line_map or {}).get(line)
        ptx_lines = ptx_text.splitlines()
        ptx_src = ptx_lines[line - 1].strip() if 0 < line <= len(ptx_lines) else ""
        if py is None:
            return (f"{source.name}: {diag.kind}: {diag.message}\n  (at line {line} of the PTX it emits, "
                    f"`{ptx_src}`; no Python line recorded it)")
        note, line = f"\n  (PTX line {line}: `{ptx_src}`)", py
    lines = source.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    col = _column(text, diag.message)
    return f"{source.name}:{line}:{col}: {diag.kind}: {diag.message}\n{text}\n{' ' * (col - 1)}^{note}"


def located_diagnostics(stderr: str, source: Source, ptx_text: str) -> tuple[list[str], list[str]]:
    """(errors, warnings), each located."""
    diags = parse_diagnostics(stderr)
    errors = [locate(d, source, ptx_text) for d in diags if d.kind == "error"]
    warnings = [locate(d, source, ptx_text) for d in diags if d.kind == "warning"]
    return errors, warnings
