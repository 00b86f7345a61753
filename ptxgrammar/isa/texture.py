"""Texture, sampler and surface instructions (PTX ISA 9.7.10-11): tex, tld4, txq, istypep,
suld, sust, sured, suq."""

_TEX_GEOM = ".1d .2d .3d .a1d .a2d .cube .acube .2dms .a2dms"
_SURF_GEOM = ".1d .2d .3d .a1d .a2d"
_CLAMP = ".trap .clamp .zero"

FORMS = [
    dict(op="tex", groups={"mode": ".base .level .grad", "geom": _TEX_GEOM, "vec": ".v2 .v4",
                           "type": ".u32 .s32 .f16 .f32 .f16x2", "nodep": ".nodep"},
         max={"type": 2}, required=("geom", "vec", "type"), args="v ts x? x? x?", rule="texture_coordinates",
         when=[dict(ntypes=1, reject=("type", "tex names the result and the coordinate types"))]),
    dict(op="tld4", groups={"comp": ".r .g .b .a", "geom": ".2d .a2d .cube .acube", "vec": ".v4",
                            "type": ".u32 .s32 .f32"},
         max={"type": 2}, required=("comp", "geom", "vec", "type"), args="v ts x? x?", rule="texture_coordinates"),
    dict(op="txq", groups={"level": ".level",
                           "what": ".width .height .depth .channel_data_type .channel_order .normalized_coords"
                                   " .array_size .num_mipmap_levels .num_samples .filter_mode .addr_mode_0"
                                   " .addr_mode_1 .addr_mode_2 .force_unnormalized_coords",
                           "type": ".b32"}, required=("what", "type"), args="d:b32 a s?"),
    dict(op="istypep", groups={"type": ".texref .samplerref .surfref"}, required=("type",), args="p x"),
    dict(op="suld", select=(".b",), groups={"geom": _SURF_GEOM, "cop": ".ca .cg .cs .cv", "vec": ".v2 .v4",
                                            "type": ".b8 .b16 .b32 .b64", "clamp": _CLAMP},
         required=("geom", "type", "clamp"), args="x ta", rule="texture_coordinates"),  # ptxas: a vector, no .vN
    dict(op="sust", select=(".b",), groups={"geom": _SURF_GEOM, "cop": ".wb .cg .cs .wt", "vec": ".v2 .v4",
                                            "type": ".b8 .b16 .b32 .b64", "clamp": _CLAMP},
         required=("geom", "type", "clamp"), args="ta x", rule="texture_coordinates"),
    dict(op="sust", select=(".p",), groups={"geom": _SURF_GEOM, "cop": ".wb .cg .cs .wt", "vec": ".v2 .v4",
                                            "type": ".b32 .u32 .s32 .f32", "clamp": _CLAMP},
         required=("geom", "type", "clamp"), args="ta x", rule="texture_coordinates"),
    *[dict(op="sured", select=(kind,), groups={"op": ".add .min .max .and .or", "geom": _SURF_GEOM,
                                               "type": types, "clamp": _CLAMP},
           required=("op", "geom", "type", "clamp"), args="ta s:T", rule="texture_coordinates")
      for kind, types in ((".b", ".u32 .u64 .s32 .b32 .s64"), (".p", ".b32 .b64"))],
    dict(op="suq", groups={"what": ".width .height .depth .channel_data_type .channel_order .array_size"
                                   " .memory_layout", "type": ".b32"}, required=("what", "type"), args="d:b32 a"),
]


# coordinates per geometry (PTX ISA 9.7.10.3, 9.7.11): .3d and the arrays/cubes pad to 4
GEOMETRY_COORDS = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 2, ".a2d": 4, ".cube": 4, ".acube": 4, ".2dms": 4,
                   ".a2dms": 4}


def texture_coordinates(form, modifiers, operands=()):
    from ptx2py.ptxgrammar.tree.operands import Address, Vector

    geom = next((m for m in modifiers if m in GEOMETRY_COORDS), None)
    if geom is None:
        return []
    want = GEOMETRY_COORDS[geom]
    for pos, op in enumerate(operands):
        if isinstance(op, Address) and len(op.items) in (2, 3) and isinstance(op.items[-1], Vector):
            got = len(op.items[-1].items)
            if got < want:  # ptxas lets a .1d/.2d texture take a longer vector
                return [("register-count", f"{geom} takes {want} coordinates, operand {pos + 1} has {got}", geom)]
    return []


FORM_RULES = {"texture_coordinates": texture_coordinates}
