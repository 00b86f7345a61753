"""What a run can end with: a located refusal (not emulated / bad input) or sanitizer reports."""

from __future__ import annotations

from dataclasses import dataclass, field


class EmulationError(Exception):
    """Bad input for a run (launch, inputs, a malformed program): exit status 2."""


class NotEmulated(EmulationError):
    """An instruction or form the engine does not implement, located:
    `file:line:col: error: not emulated: <opcode+modifiers>`."""

    def __init__(self, what: str, where: str = ""):
        self.what = what
        self.where = where
        super().__init__(f"{where}: error: not emulated: {what}" if where else f"error: not emulated: {what}")


class Trap(Exception):
    """`trap` or a failed device assertion: the run stops with a report."""


@dataclass
class Report:
    """One sanitizer finding. ``where`` is `file:line:col` of the instruction that found it;
    ``details`` holds the witness (threads, addresses, other PTX lines) for JSON."""

    kind: str          # oob | misaligned | uninit | race | async-read | barrier-divergence | deadlock | shfl | trap
    message: str
    where: str
    details: dict = field(default_factory=dict)

    def render(self) -> str:
        return f"{self.where}: error: {self.kind}: {self.message}"

    def at_python(self, line_map: dict | None, ptx_name: str, py_name: str) -> "Report":
        """The report with every `ptx_name:L:C` (its place, the other thread's line of a race
        witness) also naming the Python line L came from: `py_name:PY (PTX line L)`."""
        def where(text):
            return python_where(text, line_map, ptx_name, py_name) if isinstance(text, str) else text
        details = {k: where(v) for k, v in self.details.items()}
        details["ptx_where"] = self.where
        if isinstance(self.details.get("other"), str):
            details["ptx_other"] = self.details["other"]
        return Report(self.kind, where(self.message), where(self.where), details)

    def to_json(self) -> dict:
        return {"kind": self.kind, "where": self.where, "message": self.message, **self.details}


def python_ptx_name(py_path: str) -> str:
    """The file name reports give the PTX compiled from a DSL module (its lines with no Python line)."""
    return f"{py_path} (as PTX)"


def python_where(text: str, line_map: dict | None, ptx_name: str, py_name: str) -> str:
    """Every `file.ptx:L:C` in text -> `file.py:PY (PTX line L)` where line L came from Python."""
    import re

    def sub(m):
        line = int(m.group(1))
        if line_map and line in line_map:
            return f"{py_name}:{line_map[line]} (PTX line {line})"
        return m.group(0)
    return re.sub(re.escape(ptx_name) + r":(\d+):\d+", sub, text)
