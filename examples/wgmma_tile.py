"""One Hopper warpgroup computes D = A @ B^T for a 64x64x16 f16 tile with a
single `wgmma.mma_async` (f32 accumulators), written by hand (sm_90a).

a: 64x16 f16 row-major; b: 64x16 f16 row-major (B transposed: N x K, as in a
"TN" GEMM); d: 64x64 f32 row-major. Both tiles are staged in shared memory as
8x8 core matrices without swizzle (K-major: 16-byte rows, core matrices
adjacent in K 128 bytes apart, adjacent in M/N 256 bytes apart), which is what
the two matrix descriptors say.

    py2ptx examples/wgmma_tile.py -o wgmma_tile.ptx && ptxas -arch=sm_90a wgmma_tile.ptx
"""

from ptx2py.dsl import *

M = N = 64
K = 16
LEADING_BYTES, STRIDE_BYTES = 128, 256                      # core-matrix offsets in K and in M/N
DESCRIPTOR_BITS = (LEADING_BYTES >> 4) << 16 | (STRIDE_BYTES >> 4) << 32   # no swizzle, base offset 0

ptx.version("8.0")
ptx.target("sm_90a")
ptx.address_size(64)
ptx.blank()

with ptx.entry(
    "wgmma_tile_64x64x16",
    params=[param.u64("a"), param.u64("b"), param.u64("d")],
    visible=True,
    reqntid=(128, 1, 1),
):
    var.shared.align(128).b8("tile_a", dims=(M * K * 2,))
    var.shared.align(128).b8("tile_b", dims=(N * K * 2,))
    p = reg.pred("%p", 2)
    r = reg.b32("%r", 16)
    rd = reg.b64("%rd", 24)
    acc = reg.f32("%acc", 32)

    ptx.mov.u32(r[1], sreg.tid.x)
    ptx.comment(" each thread copies 8 halves (16 bytes) of one row of a and of b")
    ptx.shr.u32(r[2], r[1], 1)                              # row = tid / 2
    ptx.and_.b32(r[3], r[1], 1)                             # which 8-column half of K
    ptx.shl.b32(r[4], r[2], 5)                              # global: row * 32 bytes
    ptx.shl.b32(r[5], r[3], 4)                              #       + half * 16 bytes
    ptx.add.s32(r[6], r[4], r[5])
    ptx.shr.u32(r[7], r[2], 3)                              # shared: (row / 8) * 256
    ptx.shl.b32(r[7], r[7], 8)
    ptx.and_.b32(r[8], r[2], 7)                             #       + (row % 8) * 16
    ptx.shl.b32(r[8], r[8], 4)
    ptx.shl.b32(r[9], r[3], 7)                              #       + half * 128
    ptx.add.s32(r[10], r[7], r[8])
    ptx.add.s32(r[10], r[10], r[9])
    ptx.cvt.u64.u32(rd[1], r[6])
    for i, (name, tile) in enumerate((("a", "tile_a"), ("b", "tile_b"))):
        src, dst = rd[2 + 2 * i], rd[3 + 2 * i]
        v = tuple(r[11 + j] for j in range(4))
        ptx.ld.param.u64(src, [sym(name)])
        ptx.cvta.to.global_.u64(src, src)
        ptx.add.s64(src, src, rd[1])
        ptx.ld.global_.v4.b32(v, [src])
        ptx.mov.u32(r[15], sym(tile))
        ptx.add.s32(r[15], r[15], r[10])
        ptx.st.shared.v4.b32([r[15]], v)
    ptx.comment(" make the generic-proxy stores visible to the tensor cores")
    ptx.fence.proxy.async_.shared__cta()
    ptx.bar.sync(0)

    ptx.comment(" matrix descriptors: (shared address >> 4) | LBO | SBO")
    for i, tile in enumerate(("tile_a", "tile_b")):
        desc = rd[6 + i]
        ptx.mov.u64(desc, sym(tile))
        ptx.shr.u64(desc, desc, 4)
        ptx.and_.b64(desc, desc, imm("0x3FFF"))
        ptx.or_.b64(desc, desc, imm(hex(DESCRIPTOR_BITS)))

    ptx.setp.ne.b32(p[1], 0, 0)                             # scale-d false: D = A @ B
    ptx.wgmma.fence.sync.aligned()
    ptx.wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16(
        tuple(acc[i] for i in range(32)), rd[6], rd[7], p[1], 1, 1, 0, 0
    )
    ptx.wgmma.commit_group.sync.aligned()
    ptx.wgmma.wait_group.sync.aligned(0)

    ptx.comment(" accumulator layout: warp w owns rows 16w..16w+15; lane l holds")
    ptx.comment(" rows 16w + l/4 (+8) and columns 8j + 2(l%4) .. +1 for j = 0..7")
    ptx.shr.u32(r[2], r[1], 5)
    ptx.shl.b32(r[2], r[2], 4)
    ptx.and_.b32(r[3], r[1], 31)
    ptx.shr.u32(r[4], r[3], 2)
    ptx.add.s32(r[2], r[2], r[4])                           # row
    ptx.and_.b32(r[5], r[3], 3)
    ptx.shl.b32(r[5], r[5], 1)                              # column of j = 0
    ptx.mad.lo.s32(r[6], r[2], N, r[5])
    ptx.ld.param.u64(rd[8], [sym("d")])
    ptx.cvta.to.global_.u64(rd[8], rd[8])
    ptx.mul.wide.u32(rd[9], r[6], 4)
    ptx.add.s64(rd[9], rd[8], rd[9])
    for j in range(N // 8):
        top = [rd[9] + 32 * j] if j else [rd[9]]
        ptx.st.global_.v2.f32(top, (acc[4 * j], acc[4 * j + 1]))
        ptx.st.global_.v2.f32([rd[9] + 32 * j + 8 * N * 4], (acc[4 * j + 2], acc[4 * j + 3]))
    ptx.ret()
