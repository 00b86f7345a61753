"""Asynchronous copies (PTX ISA 9.7.9.25-27): cp.async, cp.async.bulk, cp.async.bulk.tensor,
cp.reduce.async.bulk[.tensor], cp.async.bulk.prefetch[.tensor]; tensormap (9.7.9.28-29)."""

from .common import BITS, FLOAT, INT

_BULK_SPACES = ".shared::cluster .shared::cta .shared .global"
_DIMS = ".1d .2d .3d .4d .5d"
_LOAD_MODE = ".tile .im2col .tile::gather4 .tile::scatter4 .im2col::w .im2col::w::128 .im2col_no_offs"
_RED_OP = ".add .min .max .inc .dec .and .or .xor"
_BULK = dict(since="8.0", sm=90)
# cp.async.bulk[.tensor] into .shared::cta needs PTX ISA 8.6 (into .shared::cluster, and from .shared::cta: 8.0)
_SHARED_CTA_DESTINATION = dict(dst=".shared::cta", since="8.6", msg="destination state space .shared::cta")

FORMS = [
    dict(op="cp", select=(".async",),
         groups={"cop": ".ca .cg", "dst": ".shared .shared::cta", "src": ".global",
                 "hint": ".L2::cache_hint", "prefetch": ".L2::64B .L2::128B .L2::256B"},
         required=("cop", "dst", "src"), operands=(3, 5), addr=(0, 1), since="7.0", sm=80,
         ranges={2: [4, 8, 16]},
         when=[dict(has=".cg", ranges={2: [16]}, msg="cp.async.cg copies 16 bytes"),
               dict(lacks=".L2::cache_hint", args="a a i:u32 s?"),  # src-size or ignore-src predicate
               dict(has=".L2::cache_hint", args="a a i:u32 s? s?")],
         features={".L2::cache_hint": dict(since="7.4", sm=80), ".L2::64B": dict(since="7.4"),
                   ".L2::128B": dict(since="7.4"), ".L2::256B": dict(since="7.4")}),
    dict(op="cp", select=(".async", ".commit_group"), operands=0, since="7.0", sm=80),
    dict(op="cp", select=(".async", ".wait_group"), args="i", since="7.0", sm=80),
    dict(op="cp", select=(".async", ".wait_all"), operands=0, since="7.0", sm=80),
    dict(op="cp", select=(".async", ".mbarrier", ".arrive"),
         groups={"noinc": ".noinc", "space": ".shared .shared::cta", "type": ".b64"},
         required=("type",), operands=1, addr=(0,), since="7.0", sm=80),
    dict(op="cp", select=(".async", ".bulk"),
         groups={"space": _BULK_SPACES, "completion": ".mbarrier::complete_tx::bytes .bulk_group",
                 "multicast": ".multicast::cluster", "hint": ".L2::cache_hint", "mask": ".cp_mask"},
         max={"space": 2}, required=("space", "completion"), operands=(3, 6), addr=(0, 1),
         when=[_SHARED_CTA_DESTINATION], **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".commit_group"), operands=0, **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".wait_group"), groups={"read": ".read"}, args="i", **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".prefetch"),
         groups={"level": ".L2", "space": ".global", "hint": ".L2::cache_hint"},
         required=("level",), operands=(2, 3), addr=(0,), **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".tensor"),
         groups={"dim": _DIMS, "space": _BULK_SPACES,
                 "completion": ".mbarrier::complete_tx::bytes .bulk_group", "mode": _LOAD_MODE,
                 "multicast": ".multicast::cluster", "hint": ".L2::cache_hint",
                 "cta_group": ".cta_group::1 .cta_group::2"},
         max={"space": 2}, required=("dim", "space"), operands=(2, 6), addr=(0, 1), rule="tma_coordinates",
         when=[_SHARED_CTA_DESTINATION],
         features={".cta_group::1": dict(since="8.6", sm=100), ".cta_group::2": dict(since="8.6", sm=100),
                   ".tile::gather4": dict(since="8.6", sm=100), ".tile::scatter4": dict(since="8.6", sm=100),
                   ".im2col::w": dict(since="8.6", sm=100), ".im2col::w::128": dict(since="8.6", sm=100)},
         **_BULK),
    dict(op="cp", select=(".async", ".bulk", ".prefetch", ".tensor"),
         groups={"dim": _DIMS, "level": ".L2", "space": ".global", "mode": _LOAD_MODE,
                 "hint": ".L2::cache_hint"},
         required=("dim",), operands=(1, 3), addr=(0,), rule="tma_coordinates", **_BULK),
    dict(op="cp", select=(".reduce", ".async", ".bulk"),
         groups={"space": _BULK_SPACES, "completion": ".mbarrier::complete_tx::bytes .bulk_group",
                 "op": _RED_OP, "noftz": ".noftz", "hint": ".L2::cache_hint", "type": f"{BITS} {INT} {FLOAT}"},
         max={"space": 2}, required=("space", "op", "type"), operands=(3, 5), addr=(0, 1), **_BULK),
    dict(op="cp", select=(".reduce", ".async", ".bulk", ".tensor"),
         groups={"dim": _DIMS, "space": _BULK_SPACES, "completion": ".bulk_group", "mode": _LOAD_MODE,
                 "op": _RED_OP, "hint": ".L2::cache_hint"},
         max={"space": 2}, required=("dim", "op"), operands=(2, 3), addr=(0, 1), rule="tma_coordinates", **_BULK),
    dict(op="tensormap", select=(".replace",),
         groups={"mode": ".tile",
                 "field": ".global_address .rank .box_dim .global_dim .global_stride .element_stride"
                          " .elemtype .interleave_layout .swizzle_mode .fill_mode .swizzle_atomicity",
                 "space": ".global .shared::cta", "obj": ".b1024", "type": ".b32 .b64"},
         required=("mode", "field", "obj", "type"), args="a s:T", since="8.3", sm=90, arch="a",
         when=[dict(has=".box_dim .global_dim .global_stride .element_stride", args="a i s:T",
                    msg="per-dimension fields take the dimension's ordinal")]),
    dict(op="tensormap", select=(".cp_fenceproxy",),
         groups={"space": ".global .shared::cta", "proxy": ".tensormap::generic", "sem": ".release .acquire",
                 "scope": ".cta .cluster .gpu .sys", "sync": ".sync", "aligned": ".aligned",
                 "field": ".global_address .rank .box_dim .global_dim .global_stride .element_stride"
                          " .elemtype .interleave_layout .swizzle_mode .fill_mode .swizzle_atomicity"},
         max={"space": 2}, operands=3, addr=(0, 1), since="8.3", sm=90,
         required=("proxy", "sem", "scope", "sync", "aligned")),
]


# --- tensor coordinates (PTX ISA 9.7.9.25.5): `[tensorMap, {c0, ...}]` holds one coordinate per
# dimension (.tile::gather4 / .tile::scatter4: 5 for .2d) ---
_DIM_COORDS = {".1d": 1, ".2d": 2, ".3d": 3, ".4d": 4, ".5d": 5}
_MODE_COORDS = {".tile::gather4": {".2d": 5}, ".tile::scatter4": {".2d": 5}}


def tma_coordinates(form, modifiers, operands=()):
    from ptx2py.ptxgrammar.tree.operands import Address, Vector

    dim = next((m for m in modifiers if m in _DIM_COORDS), None)
    if dim is None:
        return []
    want = _DIM_COORDS[dim]
    for mode, table in _MODE_COORDS.items():
        if mode in modifiers:
            want = table.get(dim, want)
    out = []
    for pos, op in enumerate(operands):
        if isinstance(op, Address) and len(op.items) == 2 and isinstance(op.items[1], Vector):
            got = len(op.items[1].items)
            if got != want:
                out.append(("register-count", f"a {dim[1:]} tensor takes {want} coordinates, got {got}"
                                              f" (operand {pos + 1})", dim))
    return out


FORM_RULES = {"tma_coordinates": tma_coordinates}
