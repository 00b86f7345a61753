"""Asynchronous copies (PTX ISA 9.7.9.25-27): cp.async, cp.async.bulk, cp.async.bulk.tensor,
cp.reduce.async.bulk[.tensor], cp.async.bulk.prefetch[.tensor]; tensormap (9.7.9.28-29)."""

from .common import BITS, FLOAT, INT

_BULK_SPACES = ".shared::cluster .shared::cta .shared .global"
_DIMS = ".1d .2d .3d .4d .5d"
_LOAD_MODE = ".tile .im2col .tile::gather4 .tile::scatter4 .im2col::w .im2col::w::128 .im2col_no_offs"
_RED_OP = ".add .min .max .inc .dec .and .or .xor"
_BULK = dict(since="8.0", sm=90)

FORMS = [
    dict(op="cp", select=(".async",),
         groups={"cop": ".ca .cg", "dst": ".shared .shared::cta", "src": ".global",
                 "hint": ".L2::cache_hint", "prefetch": ".L2::64B .L2::128B .L2::256B"},
         required=("cop", "dst", "src"), operands=(3, 5), addr=(0, 1), since="7.0", sm=80,
         features={".L2::cache_hint": dict(since="7.4", sm=80), ".L2::64B": dict(since="7.4"),
                   ".L2::128B": dict(since="7.4"), ".L2::256B": dict(since="7.4")}),
    dict(op="cp", select=(".async", ".commit_group"), operands=0, since="7.0", sm=80),
    dict(op="cp", select=(".async", ".wait_group"), operands=1, since="7.0", sm=80),
    dict(op="cp", select=(".async", ".wait_all"), operands=0, since="7.0", sm=80),
    dict(op="cp", select=(".async", ".mbarrier", ".arrive"),
         groups={"noinc": ".noinc", "space": ".shared .shared::cta", "type": ".b64"},
         required=("type",), operands=1, addr=(0,), since="7.0", sm=80),
    dict(op="cp", select=(".async", ".bulk"),
         groups={"space": _BULK_SPACES, "completion": ".mbarrier::complete_tx::bytes .bulk_group",
                 "multicast": ".multicast::cluster", "hint": ".L2::cache_hint", "mask": ".cp_mask"},
         max={"space": 2}, required=("space", "completion"), operands=(3, 6), addr=(0, 1), **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".commit_group"), operands=0, **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".wait_group"), groups={"read": ".read"}, operands=1, **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".prefetch"),
         groups={"level": ".L2", "space": ".global", "hint": ".L2::cache_hint"},
         required=("level",), operands=(2, 3), addr=(0,), **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".tensor"),
         groups={"dim": _DIMS, "space": _BULK_SPACES,
                 "completion": ".mbarrier::complete_tx::bytes .bulk_group", "mode": _LOAD_MODE,
                 "multicast": ".multicast::cluster", "hint": ".L2::cache_hint",
                 "cta_group": ".cta_group::1 .cta_group::2"},
         max={"space": 2}, required=("dim", "space"), operands=(2, 6), addr=(0, 1),
         features={".cta_group::1": dict(since="8.6", sm=100), ".cta_group::2": dict(since="8.6", sm=100),
                   ".tile::gather4": dict(since="8.6", sm=100), ".tile::scatter4": dict(since="8.6", sm=100),
                   ".im2col::w": dict(since="8.6", sm=100), ".im2col::w::128": dict(since="8.6", sm=100)},
         **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".prefetch", ".tensor"),
         groups={"dim": _DIMS, "level": ".L2", "space": ".global", "mode": _LOAD_MODE,
                 "hint": ".L2::cache_hint"},
         required=("dim",), operands=(1, 3), addr=(0,), **_BULK),
    dict(op="cp", select=(".reduce", ".async", ".bulk"),
         groups={"space": _BULK_SPACES, "completion": ".mbarrier::complete_tx::bytes .bulk_group",
                 "op": _RED_OP, "noftz": ".noftz", "hint": ".L2::cache_hint", "type": f"{BITS} {INT} {FLOAT}"},
         max={"space": 2}, required=("space", "op", "type"), operands=(3, 5), addr=(0, 1), **_BULK),
    dict(op="cp", select=(".reduce", ".async", ".bulk", ".tensor"),
         groups={"dim": _DIMS, "space": _BULK_SPACES, "completion": ".bulk_group", "mode": _LOAD_MODE,
                 "op": _RED_OP, "hint": ".L2::cache_hint"},
         max={"space": 2}, required=("dim", "op"), operands=(2, 3), addr=(0, 1), **_BULK),
    dict(op="tensormap", select=(".replace",),
         groups={"mode": ".tile",
                 "field": ".global_address .rank .box_dim .global_dim .global_stride .element_stride"
                          " .elemtype .interleave_layout .swizzle_mode .fill_mode .swizzle_atomicity",
                 "space": ".global .shared::cta", "obj": ".b1024", "type": ".b32 .b64"},
         required=("field", "type"), operands=(2, 3), addr=(0,), since="8.3", sm=90, arch="a"),
    dict(op="tensormap", select=(".cp_fenceproxy",),
         groups={"space": ".global .shared::cta", "proxy": ".tensormap::generic", "sem": ".release .acquire",
                 "scope": ".cta .cluster .gpu .sys", "sync": ".sync", "aligned": ".aligned"},
         max={"space": 2}, operands=3, addr=(0, 1), since="8.3", sm=90),
]
