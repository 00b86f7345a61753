"""Vector add, c[i] = a[i] + b[i], written by hand in the ptx2py DSL (sm_80).

    py2ptx examples/vector_add.py -o vector_add.ptx && ptxas -arch=sm_80 vector_add.ptx
"""

from ptx2py.dsl import *

ptx.version("8.0")
ptx.target("sm_80")
ptx.address_size(64)
ptx.blank()

with ptx.entry(
    "vector_add",
    params=[param.u64("a"), param.u64("b"), param.u64("c"), param.u32("n")],
    visible=True,
    maxntid=(256,),
):
    p = reg.pred("%p", 2)
    r = reg.b32("%r", 6)
    f = reg.f32("%f", 4)
    rd = reg.b64("%rd", 11)

    # i = blockIdx.x * blockDim.x + threadIdx.x; threads past n do nothing
    ptx.ld.param.u32(r[1], [sym("n")])
    ptx.mov.u32(r[2], sreg.ctaid.x)
    ptx.mov.u32(r[3], sreg.ntid.x)
    ptx.mov.u32(r[4], sreg.tid.x)
    ptx.mad.lo.s32(r[5], r[2], r[3], r[4])
    ptx.setp.ge.u32(p[1], r[5], r[1])
    ptx.bra.uni(sym("$L_done"), pred=p[1])

    # the three buffers, as global addresses of element i
    ptx.ld.param.u64(rd[1], [sym("a")])
    ptx.ld.param.u64(rd[2], [sym("b")])
    ptx.ld.param.u64(rd[3], [sym("c")])
    ptx.mul.wide.u32(rd[4], r[5], 4)
    for k in range(3):
        ptx.cvta.to.global_.u64(rd[5 + k], rd[1 + k])
        ptx.add.s64(rd[8 + k], rd[5 + k], rd[4])

    ptx.ld.global_.nc.f32(f[1], [rd[8]])
    ptx.ld.global_.nc.f32(f[2], [rd[9]])
    ptx.add.f32(f[3], f[1], f[2])
    ptx.st.global_.f32([rd[10]], f[3])
    ptx.label("$L_done")
    ptx.ret()
