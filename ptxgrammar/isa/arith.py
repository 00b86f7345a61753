"""Integer, floating-point, logic, comparison, move and conversion instructions
(PTX ISA 9.7.1-9.7.8, 9.7.9.21 cvt, 9.7.9.22 cvta in memory.py).

Operand kinds (``args``) and constraints across modifiers (``when``) follow spec.py's notes;
each constraint was checked against ptxas (see lint/differential.py)."""

from .common import BITS, FLOAT, INT, PACKED_SMALL, ROUND_F, ROUND_I, SMALLFLOAT

_ALL = f"{BITS} {INT} {FLOAT} .f32x2 .s16x2 .u16x2"
_FP_MODS = {"rnd": ROUND_F, "ftz": ".ftz", "sat": ".sat .satfinite", "relu": ".relu", "oob": ".oob"}
_F32X2 = {".f32x2": dict(since="8.6", sm=100, arch="a"), ".bf16": dict(since="7.0", sm=80),
          ".bf16x2": dict(since="7.0", sm=80)}
_CMP = (".eq .ne .lt .le .gt .ge .lo .ls .hi .hs .equ .neu .ltu .leu .gtu .geu .num .nan")
_BOOL = ".and .or .xor"

# type families (the written type modifier decides which modifiers apply)
_INTS = ".u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 .u16x2 .s16x2"
_SIGNED = ".s8 .s16 .s32 .s64 .s16x2"
_UNSIGNED = ".u8 .u16 .u32 .u64 .u16x2"
_BITS = ".b8 .b16 .b32 .b64 .b128"
_FLOATS = ".f16 .f16x2 .bf16 .bf16x2 .f32 .f64 .f32x2"
_F32_64 = ".f32 .f64"
_ARITH_TYPES = ".u16 .u32 .u64 .s16 .s32 .s64 .u16x2 .s16x2 " + _FLOATS

_NO_FLOAT_MODS = dict(types=_INTS, forbid=f"{ROUND_F} .ftz .relu .NaN .oob .approx .full .satfinite",
                      msg="rounding, .ftz and .approx apply to floating-point types")
_INT_MODES = dict(types=_INTS, need="mode", msg="integer multiplies say which half: .lo, .hi or .wide")
_NO_INT_MODES = dict(types=_FLOATS, forbid=".lo .hi .wide .cc .mix", msg=".lo/.hi/.wide/.cc apply to integer types")
_F64_PLAIN = dict(types=".f64", forbid=".ftz .sat .satfinite .relu", msg=".f64 has no .ftz/.sat")
_NO_SAT_INT = dict(types=_INTS, forbid=".sat .satfinite", msg="integer saturation is for add/sub/mad .s32")
_MIXED = dict(ntypes=2, pairs=".f32.f16 .f32.bf16", forbid=".ftz .sat", since="8.6", sm=100,
              msg="two types only as .f32 with .f16 or .bf16 inputs, without .ftz/.sat")


# which optional groups an opcode has at all (ptxas: "Illegal modifier" otherwise)
_CC_OPS = {"add", "sub", "mad", "addc", "subc", "madc"}
_MODE_OPS = {"mul", "mad", "mul24", "mad24", "madc"}


# which floating-point modifier groups an opcode takes at all
_ROUND_OPS = {"add", "sub", "mul", "mad", "fma", "div", "rcp", "sqrt"}
_SAT_OPS = {"add", "sub", "mul", "mad", "fma"}
_RELU_OPS = {"fma", "min", "max"}
_NO_FTZ_OPS = {"tanh", "copysign"}


def _alu(op, args, types=_ALL, extra=None, required=("type",), **more):
    groups = {**_FP_MODS, "type": types, **(extra or {})}
    if op not in _ROUND_OPS:
        del groups["rnd"]
    if op not in _SAT_OPS:
        del groups["sat"]
    else:
        groups["sat"] = ".sat"
    if op not in _RELU_OPS:
        del groups["relu"]
    if op != "fma":
        del groups["oob"]
    if op in _NO_FTZ_OPS:
        del groups["ftz"]
    if op in _CC_OPS:
        groups["cc"] = ".cc"
    if op in _MODE_OPS:
        groups.setdefault("mode", ".hi .lo .wide")
    return dict(op=op, groups=groups, required=required, args=args, **more)


_CC = dict(has=".cc", only=".u32 .s32 .u64 .s64", msg=".cc applies to 32- and 64-bit integer types")
_SAT_INT = dict(types=_UNSIGNED, has=".sat", since="9.2", msg="unsigned .sat is PTX 9.2")
_ADD_WHEN = [dict(only=_ARITH_TYPES), _NO_FLOAT_MODS, _NO_INT_MODES, _F64_PLAIN, _MIXED, _CC,
             dict(types=_INTS, forbid=".satfinite")]
_ROUNDED = dict(types=".f16 .f16x2 .bf16 .bf16x2 .f32 .f64 .f32x2", need="rnd",
                msg="fused multiply-add rounds once and must say how")
_APPROX_OR_RND = dict(types=".f32", need="rnd|approx", msg=".f32 needs IEEE rounding or .approx/.full")
_APPROX_XOR_RND = dict(has=".approx .full", forbid=ROUND_F, msg=".approx/.full and IEEE rounding exclude each other")
_F64_RND = dict(types=".f64", need="rnd", forbid=".approx .full", msg=".f64 needs IEEE rounding")

FORMS = [
    # add/sub/fma also take mixed precision `.f32.f16` / `.f32.bf16` (PTX 8.6, sm_100)
    _alu("add", "d:T s:T1 s:T", features=_F32X2, max={"type": 2}, when=_ADD_WHEN),
    _alu("sub", "d:T s:T1 s:T", features=_F32X2, max={"type": 2}, when=_ADD_WHEN),
    _alu("mul", "d:Tw s:T s:T", features=_F32X2,
         when=[dict(only=_ARITH_TYPES), _NO_FLOAT_MODS, _NO_INT_MODES, _F64_PLAIN, _INT_MODES, _NO_SAT_INT,
               dict(has=".wide", only=".u16 .u32 .s16 .s32", msg=".wide doubles a 16- or 32-bit type")]),
    _alu("mad", "d:Tw s:T s:T s:Tw", extra={"mode": ".hi .lo .wide .mix"},
         when=[dict(only=_ARITH_TYPES), _NO_FLOAT_MODS, _NO_INT_MODES, _F64_PLAIN, _INT_MODES,
               dict(types=_F32_64, need="rnd", msg="mad.f32/.f64 is fused and must say how it rounds"),
               dict(has=".wide", only=".u16 .u32 .s16 .s32", msg=".wide doubles a 16- or 32-bit type")]),
    _alu("fma", "d:T s:T1 s:T1 s:T", features=_F32X2, max={"type": 2},
         when=[dict(only=_FLOATS), _ROUNDED, _F64_PLAIN, _MIXED,
               dict(types=".f32 .f64 .f32x2", forbid=".relu", msg=".relu is for .f16/.bf16")]),
    _alu("addc", "d:T s:T s:T", types=INT), _alu("subc", "d:T s:T s:T", types=INT),
    _alu("madc", "d:T s:T s:T s:T", types=INT),
    _alu("mul24", "d:T s:T s:T", types=INT, when=[dict(only=".u32 .s32"), _INT_MODES]),
    _alu("mad24", "d:T s:T s:T s:T", types=INT, when=[dict(only=".u32 .s32"), _INT_MODES]),
    _alu("sad", "d:T s:T s:T s:T", types=INT),
    _alu("div", "d:T s:T s:T", extra={"approx": ".approx .full"},
         when=[dict(only=".u16 .u32 .u64 .s16 .s32 .s64 .f32 .f64"), _NO_FLOAT_MODS, _APPROX_OR_RND, _F64_RND,
               _APPROX_XOR_RND,
               _NO_SAT_INT, _F64_PLAIN]),
    _alu("rem", "d:T s:T s:T", types=INT, when=[dict(only=".u16 .u32 .u64 .s16 .s32 .s64"), _NO_SAT_INT]),
    _alu("abs", "d:T s:T", extra={"nan": ".NaN"},
         when=[dict(only=".s16 .s32 .s64 .s16x2 " + _FLOATS, msg="abs applies to signed types"), _NO_FLOAT_MODS,
               _NO_SAT_INT]),
    _alu("neg", "d:T s:T",
         when=[dict(only=".s16 .s32 .s64 .s16x2 " + _FLOATS, msg="neg applies to signed types"), _NO_FLOAT_MODS,
               _NO_SAT_INT]),
    *[_alu(op, "d:T s:T s:T s:T?", extra={"nan": ".NaN", "xorsign": ".xorsign", "abs": ".abs"},
           when=[dict(only=_ARITH_TYPES), _NO_FLOAT_MODS, _NO_SAT_INT,
                 dict(types=_INTS, args="d:T s:T s:T", msg="three inputs are for floating-point types")])
      for op in ("min", "max")],
    _alu("copysign", "d:T s:T s:T", types=".f32 .f64"),
    *[_alu(op, "d:T s:T", types=".f16 .f16x2 .bf16 .bf16x2 .f32 .f64", extra={"approx": ".approx .full"},
           when=[_APPROX_OR_RND, _APPROX_XOR_RND, dict(types=".f64", need="rnd|approx"),
                 dict(types=".f64", lacks=".approx", forbid=".ftz", msg=".ftz on .f64 only with .approx")])
      for op in ("rcp", "sqrt")],
    *[_alu(op, "d:T s:T", types=".f16 .f16x2 .bf16 .bf16x2 .f32 .f64", extra={"approx": ".approx .full"},
           when=[dict(types=".f32 .f16 .f16x2 .bf16 .bf16x2", need="approx", msg=f"{op} is approximate only")])
      for op in ("rsqrt", "sin", "cos", "lg2", "ex2", "tanh")],
    dict(op="testp", groups={"what": ".finite .infinite .number .notanumber .normal .subnormal",
                             "type": ".f32 .f64"}, required=("what", "type"), args="p s:T"),
    dict(op="setp", groups={"cmp": _CMP, "bool": _BOOL, "ftz": ".ftz", "type": _ALL},
         required=("cmp", "type"), args="pp s:T s:T p?",
         when=[dict(types=_BITS, forbid=".lt .le .gt .ge .lo .ls .hi .hs .equ .neu .ltu .leu .gtu .geu .num .nan",
                    msg="bit types compare only with .eq/.ne"),
               dict(types=_INTS, forbid=".equ .neu .ltu .leu .gtu .geu .num .nan",
                    msg="unordered comparisons apply to floating-point types"),
               dict(types=_SIGNED + " " + _FLOATS, forbid=".lo .ls .hi .hs",
                    msg=".lo/.ls/.hi/.hs are unsigned comparisons"),
               dict(has=_BOOL, operands=4, args="pp s:T s:T p", msg="a boolean operator combines a predicate c"),
               dict(lacks=_BOOL, operands=3, msg="a fourth operand needs .and/.or/.xor"),
               dict(types=_INTS + " " + _BITS, forbid=".ftz")]),
    dict(op="set", groups={"cmp": _CMP, "bool": _BOOL, "ftz": ".ftz", "type": f"{_ALL} .pred"},
         max={"type": 2}, required=("cmp", "type"), args="d:T s:T1 s:T1 p?"),
    dict(op="selp", groups={"type": _ALL}, required=("type",), args="d:T s:T s:T p"),
    dict(op="slct", groups={"ftz": ".ftz", "type": _ALL}, max={"type": 2}, required=("type",),
         args="d:T s:T s:T s:T1"),
    # mov: destination a register or a vector to unpack into; source a register, an immediate,
    # a symbol's address or a vector to pack (x: those are checked by kind only)
    dict(op="mov", groups={"vec": ".v2 .v4", "type": f"{_ALL} .pred"}, required=("type",), args="dv:T sv:T",
         when=[dict(types=_INTS + " " + _FLOATS + " .pred", args="d:T s:T"),
               dict(has=".v2 .v4", args="v:T sv", msg="mov.v2/.v4 moves into a {vector}"),
               dict(lacks=".v2 .v4", rule="mov_pack"),
               dict(only=".pred .b16 .b32 .b64 .b128 .u16 .u32 .u64 .s16 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32"
                         " .f64", msg="mov has no 8-bit types")]),
    *[dict(op=op, groups={"type": ".pred .b16 .b32 .b64"}, required=("type",), args="d:T s:T s:T")
      for op in ("and", "or", "xor")],
    dict(op="not", groups={"type": ".pred .b16 .b32 .b64"}, required=("type",), args="d:T s:T"),
    dict(op="cnot", groups={"type": ".b16 .b32 .b64"}, required=("type",), args="d:T s:T"),
    dict(op="shl", groups={"type": ".b16 .b32 .b64"}, required=("type",), args="d:T s:T s:u32"),
    dict(op="shr", groups={"type": f".b16 .b32 .b64 {INT}"}, required=("type",), args="d:T s:T s:u32"),
    dict(op="shf", groups={"dir": ".l .r", "mode": ".clamp .wrap", "type": ".b32"},
         required=("dir", "mode", "type"), args="d:b32 s:b32 s:b32 s:u32", since="3.1", sm=32),
    dict(op="lop3", groups={"bool": ".or .and", "type": ".b32"}, required=("type",),
         args="dp:b32 s:b32 s:b32 s:b32 i p?",
         since="4.3", sm=50, ranges={4: (0, 255, 1)},
         when=[dict(has=".or .and", args="dp:b32 s:b32 s:b32 s:b32 i p"),
               dict(lacks=".or .and", args="d:b32 s:b32 s:b32 s:b32 i")]),
    dict(op="prmt", groups={"type": ".b32", "mode": ".f4e .b4e .rc8 .ecl .ecr .rc16"}, required=("type",),
         args="d:b32 s:b32 s:b32 s:b32"),
    dict(op="bfe", groups={"type": ".u32 .u64 .s32 .s64"}, required=("type",), args="d:T s:T s:u32 s:u32",
         since="2.0", sm=20),
    dict(op="bfi", groups={"type": ".b32 .b64"}, required=("type",), args="d:T s:T s:T s:u32 s:u32",
         since="2.0", sm=20),
    dict(op="bmsk", groups={"mode": ".clamp .wrap", "type": ".b32"}, required=("mode", "type"),
         args="d:b32 s:u32 s:u32", since="7.6", sm=70),
    dict(op="szext", groups={"mode": ".clamp .wrap", "type": ".u32 .s32"}, required=("mode", "type"),
         args="d:T s:T s:u32", since="7.6", sm=70),
    dict(op="brev", groups={"type": ".b32 .b64"}, required=("type",), args="d:T s:T"),
    *[dict(op=op, groups={"type": ".b32 .b64"}, required=("type",), args="d:u32 s:T") for op in ("popc", "clz")],
    dict(op="bfind", groups={"shiftamt": ".shiftamt", "type": ".u32 .u64 .s32 .s64"}, required=("type",),
         args="d:u32 s:T"),
    dict(op="fns", groups={"type": ".b32"}, required=("type",), args="d:b32 s:b32 s:b32 s:s32", since="6.0", sm=30),
    *[dict(op=op, groups={"type": ".u32 .s32", "mode": ".lo .hi"}, max={"type": 2}, required=("type",),
           args="d:b32 s:b32 s:b32 s:b32", since="5.0", sm=61) for op in ("dp4a", "dp2a")],
    dict(op="cvt", groups={"rnd": f"{ROUND_F} {ROUND_I} .rna .rs", "ftz": ".ftz", "sat": ".sat .satfinite",
                           "relu": ".relu", "pack": ".pack", "frac": ".frac",
                           "type": f"{_ALL} .tf32 {SMALLFLOAT} {PACKED_SMALL} .s4 .u4 .s2 .u2"},
         # (single .e4m3/.e5m2/... are not cvt types: the 8-bit formats convert in pairs, .e4m3x2)
         max={"type": 3}, required=("type",), operands=(2, 4), rule="cvt_rounding",
         features={".e4m3x2": dict(since="7.8", sm=89), ".e5m2x2": dict(since="7.8", sm=89),
                   ".e2m1x2": dict(since="8.6", sm=100, arch="a"), ".e2m3x2": dict(since="8.6", sm=100, arch="a"),
                   ".e3m2x2": dict(since="8.6", sm=100, arch="a"), ".ue8m0x2": dict(since="8.6", sm=100, arch="a"),
                   ".rs": dict(since="8.7", sm=100, arch="a"), ".tf32": dict(since="7.0", sm=80),
                   ".bf16x2": dict(since="7.0", sm=80), ".bf16": dict(since="7.0", sm=80),
                   ".f16x2": dict(sm=80)},
         when=[dict(ntypes=2, args="d:T+ s:T1+ s:T1? s?"),
               # the x4 conversions take their four .f32 sources as one {vector}, then rbits
               dict(types=".e4m3x4 .e5m2x4 .e2m3x4 .e3m2x4 .e2m1x4", ntypes=2, args="d:T+ vp s:b32"),
               dict(types=_BITS, reject=("type", "cvt converts typed values (.u/.s/.f/.bf16 ...), not .b types")),
               dict(types=".e4m3 .e5m2 .e2m3 .e3m2 .e2m1", reject=("type", "8/6/4-bit floats convert in pairs:"
                                                                           " .e4m3x2, .e5m2x2 ...")),
               dict(ntypes=3, lacks=".pack", reject=("type", "three types are for cvt.pack")),
               dict(types=".tf32 .f16x2 .bf16x2", need="rnd", msg="converting to .tf32 or packing halves rounds"),
               dict(ntypes=1, reject=("type", "cvt names the destination and the source type (cvt.dtype.atype)"))]),
]

# --- cvt rounding (PTX ISA 9.7.9.21): which rounding group a conversion of two scalar types needs ---

_CVT_SIZE = {".u8": 8, ".s8": 8, ".u16": 16, ".s16": 16, ".f16": 16, ".bf16": 16, ".u32": 32, ".s32": 32,
             ".f32": 32, ".u64": 64, ".s64": 64, ".f64": 64}
_CVT_FLOAT = {".f16", ".bf16", ".f32", ".f64"}
# (destination kind, source kind, relation of sizes) -> (rounding set required or allowed, required?)
_CVT_ROUNDING = {
    ("f", "f", "narrower"): (ROUND_F + " .rna .rs", True),
    ("f", "f", "same"): (ROUND_I, False),
    ("f", "f", "wider"): ("", False),
    ("i", "f", None): (ROUND_I, True),
    ("f", "i", None): (ROUND_F + " .rna", True),
    ("i", "i", None): ("", False),
}


def cvt_rounding(form, modifiers, operands=()):
    """cvt.dtype.atype between scalar integer/float types: the rounding the pair requires or forbids."""
    all_types = [m for m in modifiers if m in form.groups["type"]]
    if (len(all_types) == 2 and all_types[0].endswith("x2") and all_types[1] == ".f32" and ".rs" not in modifiers
            and len(operands) != 3):
        return [("operand-count", f"cvt{''.join(all_types)} packs two .f32 values: d, a, b", None)]
    types = [m for m in modifiers if m in _CVT_SIZE]
    if len(types) != 2 or len(all_types) != 2:
        return []
    dtype, atype = types
    dk, ak = ("f" if dtype in _CVT_FLOAT else "i"), ("f" if atype in _CVT_FLOAT else "i")
    rel = None
    if dk == ak == "f":
        ds, as_ = _CVT_SIZE[dtype], _CVT_SIZE[atype]
        rel = "narrower" if ds < as_ else "same" if ds == as_ else "wider"
        if dtype != atype and ds == as_:  # f16 <-> bf16: a real narrowing of the format
            rel = "narrower"
    allowed, required = _CVT_ROUNDING[(dk, ak, rel)]
    allowed = set(allowed.split())
    written = [m for m in modifiers if m in form.groups["rnd"]]
    pair = f"{dtype}{atype}"
    if len(operands) != 2 and not (set(modifiers) & {".rs", ".pack", ".frac"}) and dtype in _CVT_SIZE:
        return [("operand-count", f"cvt{pair} takes 2 operands (d, a), got {len(operands)}", None)]
    if not written:
        if required:
            return [("missing-modifier", f"cvt{pair} needs a rounding modifier: {' '.join(sorted(allowed))}", None)]
        return []
    bad = [m for m in written if m not in allowed]
    if bad:
        valid = f"use one of {' '.join(sorted(allowed))}" if allowed else "it takes none"
        return [("modifier-type", f"rounding `{bad[0]}` does not apply to cvt{pair} ({valid})", bad[0])]
    return []


_BITS_SIZE = {".b16": 16, ".b32": 32, ".b64": 64, ".b128": 128}


def mov_pack(form, modifiers, operands=()):
    """mov.bN between a scalar and a {vector}: 2 or 4 elements of N/2 or N/4 bits each."""
    from ptx2py.ptxgrammar.tree.operands import Vector

    size = next((_BITS_SIZE[m] for m in modifiers if m in _BITS_SIZE), None)
    out = []
    for pos, op in enumerate(operands[:2]):
        if size is None or not isinstance(op, Vector):
            continue
        n = len(op.items)
        if n not in (1, 2, 4):
            out.append(("register-count", f"mov.b{size} packs 2 or 4 elements, operand {pos + 1} has {n}", None))
        elif size // n >= 16:
            out.append(("element-type", pos, f"b{size // n}"))
    return out


FORM_RULES = {"cvt_rounding": cvt_rounding, "mov_pack": mov_pack}
