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

    def to_json(self) -> dict:
        return {"kind": self.kind, "where": self.where, "message": self.message, **self.details}
