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


# --- one fault, one line -------------------------------------------------------------------------------
# The detail keys that name what a report involves (counted per fault site).
_INVOLVED = {"thread": "threads", "register": "registers", "address": "addresses"}


def fault_site(report: Report) -> tuple[str, str]:
    """(kind, site): a report blaming another instruction (the asynchronous op whose result is
    read early, a race's other access) belongs to that instruction; otherwise to its own."""
    other = report.details.get("other")
    return report.kind, other if isinstance(other, str) else report.where


def group_reports(reports: list[Report]) -> list[list[Report]]:
    """Reports grouped by fault site, in the order each site was first reported."""
    groups: dict[tuple, list[Report]] = {}
    for r in reports:
        groups.setdefault(fault_site(r), []).append(r)
    return list(groups.values())


def render_group(group: list[Report]) -> str:
    """A site once: its first report (the witness), then how many reports, places and
    threads/registers the same fault gave."""
    first = group[0]
    if len(group) == 1:
        return first.render()
    places = len({r.where for r in group})
    counts = []
    for key, noun in _INVOLVED.items():
        values = {str(r.details[key]) for r in group if key in r.details}
        if len(values) > 1:
            counts.append(f"{len(values)} {noun}")
    lanes = sum(int(r.details.get("lanes", 0)) for r in group)
    if lanes > len(group):
        counts.append(f"{lanes} lanes")
    also = f"  ... the same fault: {len(group)} reports at {places} PTX place{'s' if places > 1 else ''}"
    return f"{first.render()}\n{also}" + (f", {', '.join(counts)}" if counts else "")


def summary_line(reports: list[Report], limit: int | None = None) -> str:
    """`N reports at S fault sites: 3 race, 1 wgmma` (and whether the report limit cut the run's)."""
    groups = group_reports(reports)
    kinds: dict[str, int] = {}
    for g in groups:
        kinds[g[0].kind] = kinds.get(g[0].kind, 0) + 1
    per_kind = ", ".join(f"{n} {k}" for k, n in kinds.items())
    full = limit is not None and len(reports) >= limit
    capped = f" (the first {limit}; later ones were not recorded)" if full else ""
    return (f"{len(reports)} report{'s' if len(reports) != 1 else ''}{capped} at {len(groups)} fault "
            f"site{'s' if len(groups) != 1 else ''}: {per_kind}")


def render_grouped(reports: list[Report], limit: int | None = None) -> list[str]:
    """What `run` and `verify --run cpu` print: each fault site once, then the one-line summary."""
    if not reports:
        return []
    return [line for g in group_reports(reports) for line in render_group(g).split("\n")] + \
        [summary_line(reports, limit)]
