"""The types ptxas accepts for each special register as a source, per use and PTX version: the
table scripts/probe_special_registers.py asked ptxas for (special_register_widths.json). The ISA
gives each register one type; ptxas takes others too (`mov.u32 %r, %gridid`). The code lives
here, not in ptxgrammar/ (whose every module the parser's shape store is keyed on); the table stays
with the other instruction tables."""

import json
from functools import lru_cache
from pathlib import Path

_WIDTHS = Path(__file__).resolve().parent.parent / "ptxgrammar" / "isa" / "special_register_widths.json"


@lru_cache(maxsize=1)
def _width_table() -> dict:
    return json.loads(_WIDTHS.read_text())


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def accepted_types(name: str, use: str, version: tuple[int, int] | None) -> frozenset[str] | None:
    """The types (without dots) ptxas accepts for special register `name` (`%tid.x`, `%gridid`) as
    the source of `use` (`mov`, `add`, `cvt.u64` ...) at PTX `version`; None where ptxas was not
    asked (a register, use or version outside the probe: judge by the ISA's type instead)."""
    table = _width_table()
    rows = table["registers"].get(name)
    if rows is None or version is None or use not in table["uses"]:
        return None
    found = None
    for since, uses in rows:
        if _version_key(since) <= tuple(version):
            found = uses
    return None if found is None else frozenset(found.get(use, ()))
