"""Matrix instructions (PTX ISA 9.7.14-16): mma, ldmatrix, stmatrix, movmatrix, wmma, wgmma,
tcgen05. Also the shape tables that size their register vectors."""

import re

from .common import SHAPE_MMA

_MMA_TYPES = (".f16 .bf16 .f32 .f64 .tf32 .s32 .s8 .u8 .s4 .u4 .b1 .e4m3 .e5m2 .e3m2 .e2m3 .e2m1")
_WG = dict(since="8.0", sm=90, arch=("sm_90a",))
# tcgen05: arch-specific Blackwell datacenter targets (PTX 8.6; 'f' family targets from PTX 8.8)
TCGEN05_TARGETS = ("sm_100a", "sm_101a", "sm_103a", "sm_110a", "sm_100f", "sm_101f", "sm_103f", "sm_110f")
_TC = dict(since="8.6", sm=100, arch=TCGEN05_TARGETS)
_CTA_GROUP = ".cta_group::1 .cta_group::2"
_SA = {"sync": ".sync", "aligned": ".aligned"}
TCGEN05_LD_SHAPES = ".16x64b .16x128b .16x256b .32x32b .16x32bx2"
_XN = ".x1 .x2 .x4 .x8 .x16 .x32 .x64 .x128"

# wmma shapes (PTX ISA 9.7.14.4): f16/bf16/s8/u8 m16n16k16 m32n8k16 m8n32k16, tf32 m16n16k8,
# f64 m8n8k4, s4/u4 m8n8k32, b1 m8n8k128
_FP8 = (".e4m3", ".e5m2")
_WGMMA_TYPES = " ".join([".f16.f16.f16", ".f32.f16.f16", ".f32.bf16.bf16", ".f32.tf32.tf32", ".s32.b1.b1"]
                        + [d + a + b for d in (".f16", ".f32") for a in _FP8 for b in _FP8]
                        + [".s32" + a + b for a in (".s8", ".u8") for b in (".s8", ".u8")])
_WMMA_SHAPES = ".m16n16k16 .m32n8k16 .m8n32k16 .m16n16k8 .m8n8k4 .m8n8k32 .m8n8k128"

FORMS = [
    dict(op="mma", groups={"sp": ".sp .sp::ordered_metadata", **_SA, "shape": SHAPE_MMA, "layout": ".row .col",
                           "kind": r"~\.kind::\w+", "block_scale": ".block_scale",
                           "scale_vec": ".scale_vec::1X .scale_vec::2X .scale_vec::4X",
                           "sat": ".satfinite", "type": _MMA_TYPES, "stype": ".ue8m0 .ue4m3",
                           "bop": ".xor .and", "popc": ".popc", "rnd": ".rn"},
         max={"layout": 2, "type": 4}, required=("sync", "aligned", "shape", "type"), operands=(4, 10),
         vector=(0,), since="6.4", sm=70, rule="mma_shape", args="vv vv vv vv ...",
         features={".e4m3": dict(since="8.4", sm=89), ".e5m2": dict(since="8.4", sm=89),
                   ".sp::ordered_metadata": dict(since="8.5", sm=80),
                   ".block_scale": dict(since="8.7", sm=120, arch="a")}),
    dict(op="ldmatrix", groups={**_SA, "shape": ".m8n8 .m16n16 .m8n16", "num": ".x1 .x2 .x4", "trans": ".trans",
                                "layout": ".row .col",
                                "space": ".shared .shared::cta", "type": ".b16 .b8 .b8x16",
                                "fmt": ".b6x16_p32 .b4x16_p64"},
         required=("sync", "aligned", "shape", "num", "type"), operands=2, addr=(1,), vector=(0,),
         since="6.5", sm=75, count="ldmatrix_d",
         features={".m16n16": dict(since="8.6", sm=100, arch="a"), ".m8n16": dict(since="8.6", sm=100, arch="a")}),
    dict(op="stmatrix", groups={**_SA, "shape": ".m8n8 .m16n8", "num": ".x1 .x2 .x4", "trans": ".trans",
                                "space": ".shared .shared::cta", "type": ".b16 .b8"},
         required=("sync", "aligned", "shape", "num", "type"), operands=2, addr=(0,), vector=(1,),
         since="7.8", sm=90, count="stmatrix_s"),
    dict(op="movmatrix", groups={**_SA, "shape": ".m8n8", "trans": ".trans", "type": ".b16"},
         required=("sync", "aligned", "shape", "trans", "type"), operands=2, since="7.8", sm=75),
    *[dict(op="wmma", select=(verb,),
           groups={**_SA, "frag": ".a .b .c .d", "layout": ".row .col", "shape": _WMMA_SHAPES,
                   "space": ".global .shared .shared::cta", "type": _MMA_TYPES},
           required=("sync", "aligned", "frag", "layout", "shape", "type"), since="6.0", sm=70,
           features={".m16n16k8": dict(since="7.0", sm=80), ".m8n8k4": dict(since="7.0", sm=80),
                     ".bf16": dict(since="7.0", sm=80), ".tf32": dict(since="7.0", sm=80)},
           args="vp a s:u32?" if verb == ".load" else "a vp s:u32?")
      for verb in (".load", ".store")],
    dict(op="wmma", select=(".mma",),
         groups={**_SA, "layout": ".row .col", "shape": _WMMA_SHAPES, "type": _MMA_TYPES, "sat": ".satfinite",
                 "rnd": ".rn .rz .rm .rp", "bop": ".xor .and", "popc": ".popc"},
         max={"layout": 2, "type": 4}, required=("sync", "aligned", "shape"), args="vp vp vp vp", since="6.0",
         sm=70),
    dict(op="wgmma", select=(".fence",), groups=_SA, required=("sync",), operands=0, **_WG),
    dict(op="wgmma", select=(".commit_group",), groups=_SA, required=("sync",), operands=0, **_WG),
    dict(op="wgmma", select=(".wait_group",), groups=_SA, required=("sync",), args="i", **_WG),
    dict(op="wgmma", select=(".mma_async",),
         groups={"sp": ".sp", **_SA, "shape": r"~\.m64n\d+k\d+",
                 "type": ".f16 .bf16 .f32 .tf32 .e4m3 .e5m2 .s32 .s8 .u8 .b1", "sat": ".satfinite",
                 "bop": ".and", "popc": ".popc"},
         max={"type": 3}, required=("sync", "shape", "type"), operands=(4, 10), vector=(0,),
         count="wgmma_d", shape="wgmma_shape", **_WG,
         # d, a (descriptor or registers), b descriptor, scale-d predicate, then by type: imm-scale-a/b
         # (-1 or 1) and imm-trans-a/b (0 or 1)
         when=[dict(ntypes=3, pairs=_WGMMA_TYPES, msg="wgmma type combinations (D, A, B)"),
               dict(ntypes=1, reject=("type", "wgmma names the D, A and B types")),
               dict(ntypes=2, reject=("type", "wgmma names the D, A and B types")),
               dict(lacks=".sp", types=".s8 .u8 .b1", args="vv x s:u64 p"),
               dict(lacks=".sp", types=".tf32 .e4m3 .e5m2", args="vv x s:u64 p i i", ranges={4: [-1, 1], 5: [-1, 1]}),
               # A from a descriptor: imm-trans-a and imm-trans-b; A in registers: imm-trans-b only
               dict(lacks=".sp", types=".f16 .bf16", args="vv x s:u64 p i i i i?", rule="wgmma_transposes",
                    ranges={4: [-1, 1], 5: [-1, 1], 6: [0, 1], 7: [0, 1]})]),
    dict(op="tcgen05", select=(".alloc",), groups={"cta_group": _CTA_GROUP, **_SA, "space": ".shared::cta",
                                                   "type": ".b32"},
         required=("cta_group", "sync", "aligned", "type"), args="a s:u32", ranges={1: [32, 64, 128, 256, 512]},
         **_TC),
    dict(op="tcgen05", select=(".dealloc",), groups={"cta_group": _CTA_GROUP, **_SA, "type": ".b32"},
         required=("cta_group", "sync", "aligned", "type"), operands=2, **_TC),
    dict(op="tcgen05", select=(".relinquish_alloc_permit",), groups={"cta_group": _CTA_GROUP, **_SA},
         required=("cta_group", "sync", "aligned"), operands=0, **_TC),
    dict(op="tcgen05", select=(".mma",),
         groups={"sp": ".sp", "ws": ".ws", "cta_group": _CTA_GROUP, "kind": r"~\.kind::\w+",
                 "block_scale": ".block_scale", "scale_vec": ".scale_vec::1X .scale_vec::2X .scale_vec::4X"
                 " .block16 .block32", "ashift": ".ashift",
                 "collector": r"~\.collector::(a|b[0-3])::(fill|use|lastuse|discard)"},
         max={"collector": 2}, required=("cta_group", "kind"), operands=(4, 10), args="a x s:u64 s:u32 ...",
         count="tcgen05_mma_lanes",
         when=[dict(has=".sp", args="a x s:u64 a s:u32 ...", msg="sparse forms take the metadata address 4th")],
         **_TC),
    dict(op="tcgen05", select=(".commit",),
         groups={"cta_group": _CTA_GROUP, "mbar": ".mbarrier::arrive::one", "space": ".shared::cluster",
                 "multicast": ".multicast::cluster", "type": ".b64"},
         required=("cta_group", "mbar", "type"), operands=(1, 2), addr=(0,), **_TC),
    dict(op="tcgen05", select=(".ld",),
         groups={**_SA, "shape": TCGEN05_LD_SHAPES, "num": _XN, "pack": ".pack::16b", "type": ".b32"},
         required=("sync", "aligned", "shape", "num", "type"), operands=(2, 3), vector=(0,), addr=(1,),
         count="tcgen05_ld", **_TC),
    dict(op="tcgen05", select=(".st",),
         groups={**_SA, "shape": TCGEN05_LD_SHAPES, "num": _XN, "unpack": ".unpack::16b", "type": ".b32"},
         required=("sync", "aligned", "shape", "num", "type"), operands=(2, 3), vector=(-1,), addr=(0,),
         count="tcgen05_st", **_TC),
    dict(op="tcgen05", select=(".cp",),
         groups={"cta_group": _CTA_GROUP, "shape": ".128x256b .4x256b .128x128b .64x128b .32x128b",
                 "multicast": ".warpx2::02_13 .warpx2::01_23 .warpx4", "dst_fmt": ".b8x16",
                 "src_fmt": ".b6x16_p32 .b4x16_p64"},
         required=("cta_group", "shape"), args="a s:u64", **_TC),  # [taddr], s-desc (shared memory descriptor)
    dict(op="tcgen05", select=(".shift",), groups={"cta_group": _CTA_GROUP, "dir": ".down"},
         required=("cta_group", "dir"), operands=1, addr=(0,), **_TC),
    dict(op="tcgen05", select=(".fence::before_thread_sync",), operands=0, **_TC),
    dict(op="tcgen05", select=(".fence::after_thread_sync",), operands=0, **_TC),
    dict(op="tcgen05", select=(".wait::ld",), groups=_SA, required=("sync", "aligned"), operands=0, **_TC),
    dict(op="tcgen05", select=(".wait::st",), groups=_SA, required=("sync", "aligned"), operands=0, **_TC),
]

# --- register counts by shape (the `count=` rules) -----------------------------------------

_SHAPE = re.compile(r"\.m(\d+)n(\d+)k(\d+)$")


def shape_of(modifiers):
    for m in modifiers:
        found = _SHAPE.match(m)
        if found:
            return tuple(int(x) for x in found.groups())
    return None


WIDE_ACCUMULATORS = {".f32", ".s32", ".f64"}
"""Accumulator types that take one 32-bit register per element pair (wgmma: N/2 registers)."""


def wgmma_d(modifiers):
    """wgmma m64nNk*: d holds N/2 registers for .f32/.s32 accumulators, N/4 for .f16."""
    shape = shape_of(modifiers)
    types = [m for m in modifiers if m in (".f16", ".f32", ".s32", ".bf16", ".tf32", ".e4m3", ".e5m2",
                                           ".s8", ".u8", ".b1")]
    if not shape or not types:
        return None
    n, dtype = shape[1], types[0]
    if dtype in (".f32", ".s32"):
        return 0, n // 2, f"m64n{n}k{shape[2]} with {dtype} accumulators needs N/2 = {n // 2} registers in d"
    if dtype == ".f16":
        return 0, n // 4, f"m64n{n}k{shape[2]} with .f16 accumulators needs N/4 = {n // 4} registers in d"
    return None


def mma_d(modifiers):
    """mma.sync: registers in d by shape and accumulator type."""
    shape = shape_of(modifiers)
    types = [m for m in modifiers if m in (".f16", ".f32", ".s32", ".f64", ".bf16")]
    if not shape or not types:
        return None
    m, n, k = shape
    dtype = types[0]
    table = {
        (16, 8, ".f32"): 4, (16, 8, ".s32"): 4, (16, 8, ".f16"): 2, (16, 8, ".f64"): 4,
        (8, 8, ".f64"): 2,
    }
    if (m, n) == (8, 8) and k == 4 and dtype in (".f32", ".f16"):
        want = 8 if dtype == ".f32" else 4
    elif (m, n) == (8, 8) and dtype == ".s32":
        want = 2
    else:
        want = table.get((m, n, dtype))
    if want is None:
        return None
    return 0, want, f"m{m}n{n}k{k} with {dtype} accumulators needs {want} registers in d"


_LDMATRIX = {(".m8n8", ".x1"): 1, (".m8n8", ".x2"): 2, (".m8n8", ".x4"): 4,
             (".m16n16", ".x1"): 2, (".m16n16", ".x2"): 4,
             (".m8n16", ".x1"): 1, (".m8n16", ".x2"): 2, (".m8n16", ".x4"): 4,
             (".m16n8", ".x1"): 1, (".m16n8", ".x2"): 2, (".m16n8", ".x4"): 4}


def _matrix_count(modifiers, position, what):
    shape = next((m for m in modifiers if m in (".m8n8", ".m16n16", ".m8n16", ".m16n8")), None)
    num = next((m for m in modifiers if m in (".x1", ".x2", ".x4")), None)
    want = _LDMATRIX.get((shape, num))
    if want is None:
        return None
    return position, want, f"{shape[1:]}{num} needs {want} registers in {what}"


def ldmatrix_d(modifiers):
    return _matrix_count(modifiers, 0, "d")


def stmatrix_s(modifiers):
    return _matrix_count(modifiers, -1, "the source vector")


_TC_SHAPE_REGS = {".32x32b": 1, ".16x64b": 1, ".16x128b": 2, ".16x256b": 4, ".16x32bx2": 1}


def _tcgen05(modifiers, position, packed, what):
    shape = next((m for m in modifiers if m in _TC_SHAPE_REGS), None)
    num = next((m for m in modifiers if re.fullmatch(r"\.x\d+", m)), None)
    if shape is None or num is None:
        return None
    # .pack::16b / .unpack::16b change what a register holds, not how many there are
    want = _TC_SHAPE_REGS[shape] * int(num[2:])
    return position, want, f"{shape[1:]}{num} moves {want} registers in {what}"


def tcgen05_ld(modifiers):
    return _tcgen05(modifiers, 0, ".pack::16b", "d")


def tcgen05_st(modifiers):
    return _tcgen05(modifiers, -1, ".unpack::16b", "the source vector")


_WGMMA_K = {".f16": 16, ".bf16": 16, ".tf32": 8, ".e4m3": 32, ".e5m2": 32, ".s8": 32, ".u8": 32, ".b1": 256}


def wgmma_shape(modifiers):
    """wgmma m64nNkK: K is fixed by the A/B type, N is a multiple of 8 (of 16 for integer types) up to 256."""
    shape = shape_of(modifiers)
    types = [m for m in modifiers if m in _WGMMA_K or m in (".f32", ".s32")]
    if not shape or len(types) < 2:
        return None
    m, n, k = shape
    atype = types[1]
    want_k = _WGMMA_K.get(atype)
    sparse = ".sp" in modifiers
    if want_k is not None and k != want_k * (2 if sparse else 1):
        return f"m{m}n{n}k{k}: .{atype[1:]} inputs need K = {want_k * (2 if sparse else 1)}"
    step = 16 if atype in (".s8", ".u8", ".b1") and n > 32 else 8
    if m != 64 or not (8 <= n <= 256 and n % step == 0):
        return f"m{m}n{n}k{k}: wgmma needs M = 64 and N a multiple of {step} from 8 to 256"
    return None


SHAPE_RULES = {"wgmma_shape": wgmma_shape}

# tcgen05.mma (PTX ISA 9.7.16.10.9): the optional {disable-output-lane} vector has a bit per output
# lane: 128 lanes (4 registers) for cta_group::1, 256 (8) for cta_group::2; the sparse forms put
# [sp-meta-tmem] before idesc, so it comes a place later
_TCGEN05_LANE_MASKS = {".cta_group::1": 4, ".cta_group::2": 8}


def tcgen05_mma_lanes(modifiers):
    group = next((m for m in modifiers if m in _TCGEN05_LANE_MASKS), None)
    if group is None:
        return None
    want = _TCGEN05_LANE_MASKS[group]
    return 5 if ".sp" in modifiers else 4, want, f"{group[1:]} disables output lanes with {want} registers"


# wgmma .f16/.bf16 (PTX ISA 9.7.15.5.2): A read through a descriptor may be transposed (imm-trans-a and
# imm-trans-b: 8 operands); A in registers may not (imm-trans-b only: 7 operands)
_WGMMA_HALF_OPERANDS = {"a descriptor": 8, "registers": 7}


def wgmma_transposes(form, modifiers, operands=()):
    from ptx2py.ptxgrammar.tree.operands import Vector

    if len(operands) not in _WGMMA_HALF_OPERANDS.values():
        return []  # the operand count check reports it
    source = "registers" if isinstance(operands[1], Vector) else "a descriptor"
    want = _WGMMA_HALF_OPERANDS[source]
    if len(operands) == want:
        return []
    return [("operand-count", f"A from {source} takes {want} operands (imm-trans-a only with a descriptor),"
                              f" got {len(operands)}", None)]


COUNT_RULES = {"wgmma_d": wgmma_d, "mma_d": mma_d, "ldmatrix_d": ldmatrix_d, "stmatrix_s": stmatrix_s,
               "tcgen05_ld": tcgen05_ld, "tcgen05_st": tcgen05_st, "tcgen05_mma_lanes": tcgen05_mma_lanes}


# --- mma.sync shapes (PTX ISA 9.7.14.5): per shape and A/B type, where it exists and its fragments ---
# (shape, A/B type) -> (since, sm, A regs, B regs, {accumulator type: C/D regs}); `.row.col` is the
# only layout except m8n8k4 .f16 (any layout).
_F16_ACC = {".f16": 2, ".f32": 4}
MMA_SHAPES = {
    (".m8n8k4", ".f16"): ("6.4", 70, 2, 2, {".f16": 4, ".f32": 8}),
    (".m16n8k8", ".f16"): ("6.5", 75, 2, 1, _F16_ACC),
    (".m16n8k16", ".f16"): ("7.0", 80, 4, 2, _F16_ACC),
    (".m16n8k8", ".bf16"): ("7.0", 80, 2, 1, {".f32": 4}),
    (".m16n8k16", ".bf16"): ("7.0", 80, 4, 2, {".f32": 4}),
    (".m16n8k4", ".tf32"): ("7.0", 80, 2, 1, {".f32": 4}),
    (".m16n8k8", ".tf32"): ("7.0", 80, 4, 2, {".f32": 4}),
    (".m8n8k4", ".f64"): ("7.0", 80, 1, 1, {".f64": 2}),
    (".m16n8k4", ".f64"): ("7.8", 90, 2, 1, {".f64": 4}),
    (".m16n8k8", ".f64"): ("7.8", 90, 4, 2, {".f64": 4}),
    (".m16n8k16", ".f64"): ("7.8", 90, 8, 4, {".f64": 4}),
    **{(".m8n8k16", t): ("6.5", 75, 1, 1, {".s32": 2}) for t in (".s8", ".u8")},
    **{(".m16n8k16", t): ("7.0", 80, 2, 1, {".s32": 4}) for t in (".s8", ".u8")},
    **{(".m16n8k32", t): ("7.0", 80, 4, 2, {".s32": 4}) for t in (".s8", ".u8")},
    **{(".m8n8k32", t): ("6.5", 75, 1, 1, {".s32": 2}) for t in (".s4", ".u4")},
    **{(".m16n8k32", t): ("7.0", 80, 2, 1, {".s32": 4}) for t in (".s4", ".u4")},
    **{(".m16n8k64", t): ("7.0", 80, 4, 2, {".s32": 4}) for t in (".s4", ".u4")},
    (".m8n8k128", ".b1"): ("6.5", 75, 1, 1, {".s32": 2}),
    (".m16n8k128", ".b1"): ("7.0", 80, 2, 1, {".s32": 4}),
    (".m16n8k256", ".b1"): ("7.0", 80, 4, 2, {".s32": 4}),
    **{(".m16n8k32", t): ("8.4", 89, 4, 2, _F16_ACC) for t in (".e4m3", ".e5m2")},
    **{(".m16n8k16", t): ("8.7", 89, 2, 1, _F16_ACC) for t in (".e4m3", ".e5m2")},
}
_ANY_LAYOUT = {(".m8n8k4", ".f16")}


def mma_shape(form, modifiers, operands=()):
    """mma.sync (dense, no .kind): the shape exists for the A/B type, layout `.row.col`, and the
    fragment sizes of D, A, B, C; plus the shape's PTX version and target."""
    if any(m.startswith((".sp", ".kind::", ".block_scale")) for m in modifiers):
        return []
    shape = next((m for m in modifiers if _SHAPE.match(m)), None)
    types = [m for m in modifiers if m in form.groups["type"]]
    if shape is not None and len(types) in (1, 3):
        return [("type", f"mma names four types (D, A, B, C), got {''.join(types)}", None)]
    if shape is None or len(types) not in (2, 4):
        return []
    dtype, atype = types[0], types[1] if len(types) == 4 else types[-1]
    entry = MMA_SHAPES.get((shape, atype))
    if entry is None:
        known = sorted(s for s, t in MMA_SHAPES if t == atype)
        return [("shape", f"mma{shape} does not exist for {atype} inputs (shapes: {' '.join(known) or 'none'})",
                 shape)]
    since, sm, a, b, acc = entry
    out = [("requires", (since, sm), shape, f"mma{shape}{atype}")]
    layouts = [m for m in modifiers if m in (".row", ".col")]
    if (shape, atype) not in _ANY_LAYOUT and layouts and layouts != [".row", ".col"]:
        out.append(("shape", f"mma{shape}{atype} takes the layout .row.col, not {''.join(layouts)}",
                    layouts[0]))
    if dtype not in acc or types[-1] not in acc:
        bad = dtype if dtype not in acc else types[-1]
        out.append(("type", f"mma{shape}{atype} accumulates in {' or '.join(sorted(acc))}, not {bad}", bad))
        return out
    if len(types) == 4 and (shape, types[2]) not in MMA_SHAPES:
        out.append(("type", f"mma{shape}: B type {types[2]} does not go with A type {atype}", types[2]))
    elif len(types) == 4 and types[2] != atype and {atype, types[2]} - {".e4m3", ".e5m2", ".s8", ".u8", ".s4", ".u4"}:
        out.append(("type", f"mma{shape}: A and B are both {atype}", types[2]))
    out.append(("count", {0: (acc[dtype], "D"), 1: (a, "A"), 2: (b, "B"), 3: (acc.get(types[-1], acc[dtype]), "C")}))
    return out


FORM_RULES = {"mma_shape": mma_shape, "wgmma_transposes": wgmma_transposes}
