"""Special registers (PTX ISA 10) as functions of the warp: a full 32-lane array each.
Cluster registers follow the launch's cluster shape (semantics/cluster.py); clocks count the
warp-instructions run."""

from __future__ import annotations

import numpy as np

from .errors import NotEmulated
from .warp import WARP

_AXES = {".x": 0, ".y": 1, ".z": 2}


def _tid(w, axis):
    ntid = w.cta.machine.block
    t = w.tid_linear
    return (t % np.uint32(ntid[0]), (t // np.uint32(ntid[0])) % np.uint32(ntid[1]),
            t // np.uint32(ntid[0] * ntid[1]))[axis]


def _full(value, dtype=np.uint32):
    return lambda w: np.full(WARP, value, dtype)


def _lanemask(cmp):
    lane = np.arange(WARP, dtype=np.uint64)
    masks = {
        "eq": np.uint64(1) << lane, "lt": (np.uint64(1) << lane) - np.uint64(1),
        "le": (np.uint64(1) << (lane + np.uint64(1))) - np.uint64(1),
    }
    masks["gt"] = ~masks["le"] & np.uint64(0xFFFFFFFF)
    masks["ge"] = ~masks["lt"] & np.uint64(0xFFFFFFFF)
    value = masks[cmp].astype(np.uint32)
    return lambda w: value


def _per_axis(name, comp):
    axis = _AXES.get(comp or ".x")
    table = {
        "%tid": lambda w: _tid(w, axis),
        "%ntid": lambda w: np.full(WARP, w.cta.machine.block[axis], np.uint32),
        "%ctaid": lambda w: np.full(WARP, w.cta.ctaid[axis], np.uint32),
        "%nctaid": lambda w: np.full(WARP, w.cta.machine.grid[axis], np.uint32),
        "%clusterid": lambda w: np.full(WARP, w.cta.ctaid[axis] // w.cta.machine.cluster[axis], np.uint32),
        "%nclusterid": lambda w: np.full(WARP, w.cta.machine.grid[axis] // w.cta.machine.cluster[axis], np.uint32),
        "%cluster_ctaid": lambda w: np.full(WARP, w.cta.ctaid[axis] % w.cta.machine.cluster[axis], np.uint32),
        "%cluster_nctaid": lambda w: np.full(WARP, w.cta.machine.cluster[axis], np.uint32),
    }
    return table.get(name)


def _scalar(name):
    table = {
        "%laneid": lambda w: w.lane,
        "%warpid": lambda w: np.full(WARP, w.index, np.uint32),
        "%nwarpid": lambda w: np.full(WARP, len(w.cta.warps), np.uint32),
        "%smid": _full(0), "%nsmid": _full(1), "%gridid": _full(0, np.uint64),
        "%cluster_ctarank": lambda w: np.full(WARP, w.cta.rank, np.uint32),
        "%cluster_nctarank": lambda w: np.full(WARP, len(w.cta.cluster), np.uint32),
        "%is_explicit_cluster": lambda w: np.full(WARP, w.cta.machine.explicit_cluster, np.uint32),
        "%clock": lambda w: np.full(WARP, w.cta.machine.steps & 0xFFFFFFFF, np.uint32),
        "%clock_hi": lambda w: np.full(WARP, w.cta.machine.steps >> 32, np.uint32),
        "%clock64": lambda w: np.full(WARP, w.cta.machine.steps, np.uint64),
        "%globaltimer": lambda w: np.full(WARP, w.cta.machine.steps * 1000, np.uint64),
        "%globaltimer_lo": lambda w: np.full(WARP, (w.cta.machine.steps * 1000) & 0xFFFFFFFF, np.uint32),
        "%globaltimer_hi": lambda w: np.full(WARP, (w.cta.machine.steps * 1000) >> 32, np.uint32),
        "%dynamic_smem_size": lambda w: np.full(WARP, w.cta.machine.dynamic_shared, np.uint32),
        "%total_smem_size": lambda w: np.full(WARP, w.cta.machine.shared_size, np.uint32),
        "%aggr_smem_size": lambda w: np.full(WARP, w.cta.machine.shared_size, np.uint32),
    }
    if name.startswith("%lanemask_"):
        return _lanemask(name[len("%lanemask_"):])
    if name.startswith("%envreg"):
        return _full(0)
    return table.get(name)


def special_register(machine, node):
    fn = _per_axis(node.name, node.component) or (None if node.component else _scalar(node.name))
    if fn is None:
        raise NotEmulated(f"special register {node.name}{node.component or ''}")
    return fn
