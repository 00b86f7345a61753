"""Integer, floating-point, logic, comparison, move and conversion instructions
(PTX ISA 9.7.1-9.7.8, 9.7.9.21 cvt, 9.7.9.22 cvta in memory.py)."""

from .common import BITS, FLOAT, INT, PACKED_SMALL, ROUND_F, ROUND_I, SMALLFLOAT

_ALL = f"{BITS} {INT} {FLOAT} .f32x2 .s16x2 .u16x2"
_FP_MODS = {"rnd": ROUND_F, "ftz": ".ftz", "sat": ".sat .satfinite", "relu": ".relu", "oob": ".oob"}
_F32X2 = {".f32x2": dict(since="8.6", sm=100, arch="a")}
_CMP = (".eq .ne .lt .le .gt .ge .lo .ls .hi .hs .equ .neu .ltu .leu .gtu .geu .num .nan")
_BOOL = ".and .or .xor"


def _alu(op, operands, types=_ALL, extra=None, required=("type",), **more):
    groups = {**_FP_MODS, "cc": ".cc", "mode": ".hi .lo .wide", "type": types, **(extra or {})}
    return dict(op=op, groups=groups, required=required, operands=operands, **more)


FORMS = [
    # add/sub/fma also take mixed precision `.f32.f16` / `.f32.bf16` (PTX 8.6, sm_100)
    _alu("add", 3, features=_F32X2, max={"type": 2}), _alu("sub", 3, features=_F32X2, max={"type": 2}),
    _alu("mul", 3, features=_F32X2),
    _alu("mad", 4, extra={"mode": ".hi .lo .wide .mix"}), _alu("fma", 4, features=_F32X2, max={"type": 2}),
    _alu("addc", 3, types=INT), _alu("subc", 3, types=INT), _alu("madc", 4, types=INT),
    _alu("mul24", 3, types=INT), _alu("mad24", 4, types=INT), _alu("sad", 4, types=INT),
    _alu("div", 3, extra={"approx": ".approx .full"}),
    _alu("rem", 3, types=INT),
    _alu("abs", 2, extra={"nan": ".NaN"}), _alu("neg", 2),
    *[_alu(op, (3, 4), extra={"nan": ".NaN", "xorsign": ".xorsign", "abs": ".abs"}) for op in ("min", "max")],
    _alu("copysign", 3, types=".f32 .f64"),
    *[_alu(op, 2, types=".f16 .f16x2 .bf16 .bf16x2 .f32 .f64", extra={"approx": ".approx .full"})
      for op in ("rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh")],
    dict(op="testp", groups={"what": ".finite .infinite .number .notanumber .normal .subnormal",
                             "type": ".f32 .f64"}, required=("what", "type"), operands=2),
    dict(op="setp", groups={"cmp": _CMP, "bool": _BOOL, "ftz": ".ftz", "type": _ALL},
         required=("cmp", "type"), operands=(3, 4)),
    dict(op="set", groups={"cmp": _CMP, "bool": _BOOL, "ftz": ".ftz", "type": f"{_ALL} .pred"},
         max={"type": 2}, required=("cmp", "type"), operands=(3, 4)),
    dict(op="selp", groups={"type": _ALL}, required=("type",), operands=4),
    dict(op="slct", groups={"ftz": ".ftz", "type": _ALL}, max={"type": 2}, required=("type",), operands=4),
    dict(op="mov", groups={"vec": ".v2 .v4", "type": f"{_ALL} .pred"}, required=("type",), operands=2),
    *[dict(op=op, groups={"type": ".pred .b16 .b32 .b64"}, required=("type",), operands=3)
      for op in ("and", "or", "xor")],
    dict(op="not", groups={"type": ".pred .b16 .b32 .b64"}, required=("type",), operands=2),
    dict(op="cnot", groups={"type": ".b16 .b32 .b64"}, required=("type",), operands=2),
    dict(op="shl", groups={"type": ".b16 .b32 .b64"}, required=("type",), operands=3),
    dict(op="shr", groups={"type": f".b16 .b32 .b64 {INT}"}, required=("type",), operands=3),
    dict(op="shf", groups={"dir": ".l .r", "mode": ".clamp .wrap", "type": ".b32"},
         required=("dir", "mode", "type"), operands=4, since="3.1", sm=32),
    dict(op="lop3", groups={"bool": ".or .and", "type": ".b32"}, required=("type",), operands=(5, 6),
         since="4.3", sm=50),
    dict(op="prmt", groups={"type": ".b32", "mode": ".f4e .b4e .rc8 .ecl .ecr .rc16"}, required=("type",),
         operands=4),
    dict(op="bfe", groups={"type": ".u32 .u64 .s32 .s64"}, required=("type",), operands=4, since="2.0", sm=20),
    dict(op="bfi", groups={"type": ".b32 .b64"}, required=("type",), operands=5, since="2.0", sm=20),
    dict(op="bmsk", groups={"mode": ".clamp .wrap", "type": ".b32"}, required=("mode", "type"), operands=3,
         since="7.6", sm=70),
    dict(op="szext", groups={"mode": ".clamp .wrap", "type": ".u32 .s32"}, required=("mode", "type"),
         operands=3, since="7.6", sm=70),
    *[dict(op=op, groups={"type": ".b32 .b64"}, required=("type",), operands=2) for op in ("brev", "popc", "clz")],
    dict(op="bfind", groups={"shiftamt": ".shiftamt", "type": ".u32 .u64 .s32 .s64"}, required=("type",),
         operands=2),
    dict(op="fns", groups={"type": ".b32"}, required=("type",), operands=4, since="6.0", sm=30),
    *[dict(op=op, groups={"type": ".u32 .s32", "mode": ".lo .hi"}, max={"type": 2}, required=("type",),
           operands=4, since="5.0", sm=61) for op in ("dp4a", "dp2a")],
    dict(op="cvt", groups={"rnd": f"{ROUND_F} {ROUND_I} .rna .rs", "ftz": ".ftz", "sat": ".sat .satfinite",
                           "relu": ".relu", "pack": ".pack", "frac": ".frac",
                           "type": f"{_ALL} .tf32 {SMALLFLOAT} {PACKED_SMALL} .s4 .u4 .s2 .u2"},
         max={"type": 3}, required=("type",), operands=(2, 4),
         features={".e4m3x2": dict(since="7.8", sm=89), ".e5m2x2": dict(since="7.8", sm=89),
                   ".e2m1x2": dict(since="8.6", sm=100, arch="a"), ".e2m3x2": dict(since="8.6", sm=100, arch="a"),
                   ".e3m2x2": dict(since="8.6", sm=100, arch="a"), ".ue8m0x2": dict(since="8.6", sm=100, arch="a"),
                   ".rs": dict(since="8.7", sm=100, arch="a"), ".tf32": dict(since="7.0", sm=80),
                   ".bf16x2": dict(since="7.0", sm=80)}),
]
