"""C = A @ B for row-major f32 matrices (M x K times K x N), one 16x16 tile of C
per block, staged through shared memory: each K step loads a tile of A and of B,
waits at a barrier, accumulates 16 products, and waits again (sm_80).
Sizes are multiples of 16.

    py2ptx examples/tiled_matmul.py -o tiled_matmul.ptx && ptxas -arch=sm_80 tiled_matmul.ptx
"""

from ptx2py.dsl import *

TILE = 16

ptx.version("8.0")
ptx.target("sm_80")
ptx.address_size(64)
ptx.blank()

with ptx.entry(
    "tiled_matmul",
    params=[param.u64("a"), param.u64("b"), param.u64("c"), param.u32("m"), param.u32("n"), param.u32("k")],
    visible=True,
    reqntid=(TILE, TILE, 1),
):
    var.shared.align(4).f32("tile_a", dims=(TILE * TILE,))
    var.shared.align(4).f32("tile_b", dims=(TILE * TILE,))
    p = reg.pred("%p", 2)
    r = reg.b32("%r", 24)
    f = reg.f32("%f", 4 + 2 * TILE)
    rd = reg.b64("%rd", 12)

    ptx.ld.param.u64(rd[1], [sym("a")])
    ptx.ld.param.u64(rd[2], [sym("b")])
    ptx.ld.param.u64(rd[3], [sym("c")])
    ptx.ld.param.u32(r[1], [sym("n")])
    ptx.ld.param.u32(r[2], [sym("k")])
    ptx.cvta.to.global_.u64(rd[4], rd[1])
    ptx.cvta.to.global_.u64(rd[5], rd[2])
    ptx.cvta.to.global_.u64(rd[6], rd[3])

    ptx.comment(" row = blockIdx.y*16 + ty, col = blockIdx.x*16 + tx")
    ptx.mov.u32(r[3], sreg.tid.x)
    ptx.mov.u32(r[4], sreg.tid.y)
    ptx.mov.u32(r[5], sreg.ctaid.x)
    ptx.mov.u32(r[6], sreg.ctaid.y)
    ptx.shl.b32(r[7], r[6], 4)
    ptx.add.s32(r[7], r[7], r[4])
    ptx.shl.b32(r[8], r[5], 4)
    ptx.add.s32(r[8], r[8], r[3])

    ptx.comment(" shared addresses of this thread's slot and of its row / column")
    ptx.mov.u32(r[9], sym("tile_a"))
    ptx.mov.u32(r[10], sym("tile_b"))
    ptx.shl.b32(r[11], r[4], 6)
    ptx.shl.b32(r[12], r[3], 2)
    ptx.add.s32(r[13], r[11], r[12])
    ptx.add.s32(r[14], r[9], r[13])
    ptx.add.s32(r[15], r[10], r[13])
    ptx.add.s32(r[16], r[9], r[11])
    ptx.add.s32(r[17], r[10], r[12])

    acc = f[1]
    ptx.mov.f32(acc, fimm("0f00000000"))
    ptx.mov.u32(r[18], 0)
    ptx.label("$L_k_loop")
    ptx.comment(" A[row, k0 + tx] and B[k0 + ty, col] into shared memory")
    ptx.add.s32(r[19], r[18], r[3])
    ptx.mad.lo.s32(r[20], r[7], r[2], r[19])
    ptx.mul.wide.u32(rd[7], r[20], 4)
    ptx.add.s64(rd[8], rd[4], rd[7])
    ptx.ld.global_.f32(f[2], [rd[8]])
    ptx.st.shared.f32([r[14]], f[2])
    ptx.add.s32(r[21], r[18], r[4])
    ptx.mad.lo.s32(r[22], r[21], r[1], r[8])
    ptx.mul.wide.u32(rd[9], r[22], 4)
    ptx.add.s64(rd[10], rd[5], rd[9])
    ptx.ld.global_.f32(f[3], [rd[10]])
    ptx.st.shared.f32([r[15]], f[3])
    ptx.bar.sync(0)
    for i in range(TILE):
        a_i, b_i = f[4 + 2 * i], f[5 + 2 * i]
        ptx.ld.shared.f32(a_i, [r[16] + 4 * i] if i else [r[16]])
        ptx.ld.shared.f32(b_i, [r[17] + 64 * i] if i else [r[17]])
        ptx.fma.rn.f32(acc, a_i, b_i, acc)
    ptx.bar.sync(0)
    ptx.add.s32(r[18], r[18], TILE)
    ptx.setp.lt.u32(p[1], r[18], r[2])
    ptx.bra.uni(sym("$L_k_loop"), pred=p[1])

    ptx.mad.lo.s32(r[23], r[7], r[1], r[8])
    ptx.mul.wide.u32(rd[11], r[23], 4)
    ptx.add.s64(rd[11], rd[6], rd[11])
    ptx.st.global_.f32([rd[11]], acc)
    ptx.ret()
