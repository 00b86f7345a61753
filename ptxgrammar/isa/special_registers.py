"""Special registers (PTX ISA 10). Numbered families are written with `#` for the
number, so a name is special when its digit-free skeleton is listed."""

import json
import re
from functools import lru_cache
from pathlib import Path

SPECIAL_REGISTER_SKELETONS = frozenset(
    """
    %tid %ntid %ctaid %nctaid %laneid %warpid %nwarpid %smid %nsmid %gridid
    %lanemask_eq %lanemask_le %lanemask_lt %lanemask_ge %lanemask_gt
    %clock %clock_hi %clock# %globaltimer %globaltimer_lo %globaltimer_hi
    %pm# %pm#_# %envreg#
    %clusterid %nclusterid %cluster_ctaid %cluster_nctaid %cluster_ctarank %cluster_nctarank
    %is_explicit_cluster %dynamic_smem_size %total_smem_size %aggr_smem_size
    %reserved_smem_offset_begin %reserved_smem_offset_end %reserved_smem_offset_cap
    %reserved_smem_offset_#
    %current_graph_exec
    """.split()
)

# the value types that are not .u32, by skeleton (`%clock#` is %clock64, `%pm#_#` is %pm0_64..%pm7_64)
SPECIAL_REGISTER_TYPES = {
    "%clock#": "u64", "%globaltimer": "u64", "%gridid": "u64", "%current_graph_exec": "u64",
    "%pm#_#": "u64", "%is_explicit_cluster": "pred",
}

_DIGITS = re.compile(r"[0-9]+")


def _skeleton(name: str) -> str:
    return _DIGITS.sub("#", name)


@lru_cache(maxsize=4096)
def is_special_register(name: str) -> bool:
    return _skeleton(name) in SPECIAL_REGISTER_SKELETONS


def special_register_type(name: str) -> str:
    """The value type of a special register, without its dot."""
    return SPECIAL_REGISTER_TYPES.get(_skeleton(name), "u32")


# --- the types ptxas accepts, per use and PTX version (scripts/probe_special_registers.py) --------

_WIDTHS = Path(__file__).with_name("special_register_widths.json")


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
