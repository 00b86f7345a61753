"""Sum reduction: each warp folds its 32 values with butterfly shuffles, then
lane 0 adds the warp's sum into *out atomically (sm_80).

    py2ptx examples/warp_reduce.py -o warp_reduce.ptx && ptxas -arch=sm_80 warp_reduce.ptx
"""

from ptx2py.dsl import *

ptx.version("8.0")
ptx.target("sm_80")
ptx.address_size(64)
ptx.blank()

with ptx.entry(
    "warp_sum",
    params=[param.u64("x"), param.u64("out"), param.u32("n")],
    visible=True,
    maxntid=(256,),
):
    p = reg.pred("%p", 3)
    r = reg.b32("%r", 8)
    f = reg.f32("%f", 12)
    rd = reg.b64("%rd", 6)

    ptx.ld.param.u64(rd[1], [sym("x")])
    ptx.ld.param.u64(rd[2], [sym("out")])
    ptx.ld.param.u32(r[1], [sym("n")])
    ptx.mov.u32(r[2], sreg.ctaid.x)
    ptx.mov.u32(r[3], sreg.ntid.x)
    ptx.mov.u32(r[4], sreg.tid.x)
    ptx.mad.lo.s32(r[5], r[2], r[3], r[4])

    ptx.comment(" threads past n contribute 0 but still join the shuffles")
    ptx.mov.f32(f[1], fimm("0f00000000"))
    ptx.setp.lt.u32(p[1], r[5], r[1])
    ptx.cvta.to.global_.u64(rd[3], rd[1])
    ptx.mul.wide.u32(rd[4], r[5], 4)
    ptx.add.s64(rd[5], rd[3], rd[4])
    ptx.ld.global_.f32(f[1], [rd[5]], pred=p[1])

    ptx.comment(" butterfly: after 5 steps every lane holds the warp's sum")
    for step, width in enumerate((16, 8, 4, 2, 1)):
        value, other, total = f[1 + 2 * step], f[2 + 2 * step], f[3 + 2 * step]
        ptx.shfl.sync.bfly.b32(other, value, width, 31, -1)
        ptx.add.f32(total, value, other)

    ptx.and_.b32(r[6], r[4], 31)
    ptx.setp.eq.u32(p[2], r[6], 0)
    ptx.cvta.to.global_.u64(rd[3], rd[2])
    ptx.red.global_.add.f32([rd[3]], f[11], pred=p[2])
    ptx.ret()
