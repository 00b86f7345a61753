"""Special registers (PTX ISA 10). Numbered families are written with `#` for the
number, so a name is special when its digit-free skeleton is listed."""

import re
from functools import lru_cache

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
