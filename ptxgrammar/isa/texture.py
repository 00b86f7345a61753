"""Texture, sampler and surface instructions (PTX ISA 9.7.10-11): tex, tld4, txq, istypep,
suld, sust, sured, suq."""

_TEX_GEOM = ".1d .2d .3d .a1d .a2d .cube .acube .2dms .a2dms"
_SURF_GEOM = ".1d .2d .3d .a1d .a2d"
_CLAMP = ".trap .clamp .zero"

FORMS = [
    dict(op="tex", groups={"mode": ".base .level .grad", "geom": _TEX_GEOM, "vec": ".v2 .v4",
                           "type": ".u32 .s32 .f16 .f32 .f16x2", "nodep": ".nodep"},
         max={"type": 2}, required=("geom", "vec", "type"), args="x a x? x? x?",  # d: {vector} or d|p
         when=[dict(ntypes=1, reject=("type", "tex names the result and the coordinate types"))]),
    dict(op="tld4", groups={"comp": ".r .g .b .a", "geom": ".2d .a2d .cube .acube", "vec": ".v4",
                            "type": ".u32 .s32 .f32"},
         max={"type": 2}, required=("comp", "geom", "vec", "type"), args="x a x? x?"),
    dict(op="txq", groups={"level": ".level",
                           "what": ".width .height .depth .channel_data_type .channel_order .normalized_coords"
                                   " .array_size .num_mipmap_levels .num_samples .filter_mode .addr_mode_0"
                                   " .addr_mode_1 .addr_mode_2 .force_unnormalized_coords",
                           "type": ".b32"}, required=("what", "type"), args="d:b32 a s?"),
    dict(op="istypep", groups={"type": ".texref .samplerref .surfref"}, required=("type",), args="p x"),
    dict(op="suld", select=(".b",), groups={"geom": _SURF_GEOM, "cop": ".ca .cg .cs .cv", "vec": ".v2 .v4",
                                            "type": ".b8 .b16 .b32 .b64", "clamp": _CLAMP},
         required=("geom", "type", "clamp"), args="x a"),  # ptxas takes a vector without .vN here
    dict(op="sust", select=(".b",), groups={"geom": _SURF_GEOM, "cop": ".wb .cg .cs .wt", "vec": ".v2 .v4",
                                            "type": ".b8 .b16 .b32 .b64", "clamp": _CLAMP},
         required=("geom", "type", "clamp"), args="a x"),
    dict(op="sust", select=(".p",), groups={"geom": _SURF_GEOM, "cop": ".wb .cg .cs .wt", "vec": ".v2 .v4",
                                            "type": ".b32 .u32 .s32 .f32", "clamp": _CLAMP},
         required=("geom", "type", "clamp"), args="a x"),
    *[dict(op="sured", select=(kind,), groups={"op": ".add .min .max .and .or", "geom": _SURF_GEOM,
                                               "type": types, "clamp": _CLAMP},
           required=("op", "geom", "type", "clamp"), args="a s:T")
      for kind, types in ((".b", ".u32 .u64 .s32 .b32 .s64"), (".p", ".b32 .b64"))],
    dict(op="suq", groups={"what": ".width .height .depth .channel_data_type .channel_order .array_size"
                                   " .memory_layout", "type": ".b32"}, required=("what", "type"), args="d:b32 a"),
]
