"""Video instructions (PTX ISA 9.7.17): scalar vadd/vsub/vabsdiff/vmin/vmax/vshl/vshr/vmad/vset
and the SIMD forms vadd2/vadd4 ... vset2/vset4. Operand byte/half selectors (`%r1.b0`) are
register components."""

_VT = ".u32 .s32"
_OP2 = ".add .min .max"
_CMP = ".eq .ne .lt .le .gt .ge"


def _scalar(op, extra=None):
    return dict(op=op, groups={"type": _VT, "sat": ".sat", "op2": _OP2, **(extra or {})}, max={"type": 3},
                required=("type",), args="d s s s?", since="2.0", sm=20,
                when=[dict(has=_OP2, args="d s s s", msg="a secondary operation takes c")])


def _simd(op, extra=None):
    return dict(op=op, groups={"type": _VT, "sat": ".sat", "add": ".add", **(extra or {})}, max={"type": 3},
                required=("type",), args="d s s s", since="3.0", sm=30)


FORMS = [
    *[_scalar(op) for op in ("vadd", "vsub", "vabsdiff", "vmin", "vmax")],
    *[_scalar(op, {"mode": ".clamp .wrap"}) for op in ("vshl", "vshr")],
    dict(op="vmad", groups={"type": _VT, "po": ".po", "sat": ".sat", "scale": ".shr7 .shr15"}, max={"type": 3},
         required=("type",), args="d s s s", since="2.0", sm=20),
    dict(op="vset", groups={"type": _VT, "cmp": _CMP, "op2": _OP2}, max={"type": 2}, required=("type", "cmp"),
         args="d s s s?", since="2.0", sm=20),
    *[_simd(f"{op}{n}") for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax") for n in (2, 4)],
    *[dict(op=f"vset{n}", groups={"type": _VT, "cmp": _CMP, "add": ".add"}, max={"type": 2},
           required=("type", "cmp"), args="d s s s", since="3.0", sm=30) for n in (2, 4)],
]
