from ptx2py.dsl import *  # noqa: F401,F403

stmatrix_m8n8 = stmatrix.m8n8.x4.shared.b16
tma_load = asm.cp_async_bulk_tensor._2d.shared__cta.global_.mbarrier__complete_tx__bytes
# 0x4000004000000000: the wgmma shared-memory descriptor bits OR-ed into each start address
WGMMA_DESC_BITS = wgmma_desc(sbo=1024, swizzle="128B")
srcmap(38, {1: "kernels.py"})
banner("llvm")
ptx.version("9.4")
ptx.target("sm_90a")
ptx.address_size(64)
ptx.comment(" .globl\tmatmul_tma_kernel // -- Begin function matmul_tma_kernel")
global_smem = var.shared.align(16).b8("global_smem", dims=(None,), extern=True)
ptx.comment(" @matmul_tma_kernel")
tma_desc = [param.align(64).b8[128], *param.u32 * 2, *param.u64 * 2]
gptr = param.u64.ptr.global_.align(1)
matmul_tma_kernel = kernel_name(
    "matmul_tma_kernel",
    params="a_desc a_desc_shape0 a_desc_shape1 a_desc_stride0 a_desc_stride1 b_desc b_desc_shape0 b_desc_shape1 b_desc_stride0 b_desc_stride1 c_desc c_desc_shape0 c_desc_shape1 c_desc_stride0 c_desc_stride1 M N K global_scratch profile_scratch",
)
with matmul_tma_kernel.entry(
    tma_desc * 3, param.u32 * 3, gptr * 2, visible=True, reqntid=256
):
    p, r, rd = regs(pred=48, b32=190, b64=25)
    # the wgmma accumulator (m64n128k16.f32.f16.f16)
    acc = r[125:189]
    loc(256, 0)
    ptx.label(L.func_begin0)
    loc(256, 0)
    ptx.comment(" %bb.0:")
    ptx.ld.param.b32(r[5], [sym(matmul_tma_kernel.K)])
    ptx.mov.b32(r[15], sym(matmul_tma_kernel.a_desc))
    ptx.mov.b32(r[16], sym(matmul_tma_kernel.c_desc))
    label(L.tmp0).at(258, 13).cvt.u64.u32(rd[1], r[16])
    ptx.cvta.param.u64(rd[24], rd[1])
    ptx.mov.b32(r[17], sym(matmul_tma_kernel.b_desc))
    ptx.cvt.u64.u32(rd[2], r[17])
    ptx.cvta.param.u64(rd[15], rd[2])
    ptx.cvt.u64.u32(rd[3], r[15])
    ptx.cvta.param.u64(rd[14], rd[3])
    ptx.mov.u32(r[18], sreg.ctaid.x)
    at(259, 13).mov.u32(r[19], sreg.ctaid.y)
    at(262, 26).shl.b32(r[63], r[18], 7)
    at(263, 26).shl.b32(r[11], r[19], 7)
    at(261, 5).mov.u32(r[1], sreg.tid.x)
    ptx.shr.u32(r[2], r[1], 5)
    ptx.setp.eq.b32(p[10], r[2], 0)
    ptx.elect.sync(pair(r[20], p[11]), -1)
    ptx.and_.pred(p[1], p[10], p[11])
    ptx.mov.b32(r[9], global_smem)
    ptx.add.s32(r[6], r[9], 98304)
    asm.mbarrier_init.shared__cta.b64(addr=[r[6]], count=1, pred=p[1])
    ptx.elect.sync(pair(r[21], p[12]), -1)
    ptx.and_.pred(p[2], p[10], p[12])
    ptx.add.s32(r[7], r[9], 98312)
    asm.mbarrier_init.shared__cta.b64(addr=[r[7]], count=1, pred=p[2])
    ptx.elect.sync(pair(r[22], p[13]), -1)
    ptx.and_.pred(p[3], p[10], p[13])
    ptx.add.s32(r[8], r[9], 98320)
    asm.mbarrier_init.shared__cta.b64(addr=[r[8]], count=1, pred=p[3])
    ptx.setp.lt.s32(p[14], r[5], 1)
    ptx.setp.gt.s32(p[15], r[5], 0)
    ptx.bar.sync(0)
    ptx.and_.b32(r[3], r[1], 255)
    ptx.setp.eq.b32(p[16], r[3], 0)
    ptx.and_.pred(p[4], p[16], p[15])
    asm.mbarrier_arrive.expect_tx.shared__cta.b64(addr=[r[6]], bytes=32768, pred=p[4])
    at(262, 13).bar.sync(0)
    ptx.elect.sync(pair(r[23], p[17]), -1)
    ptx.and_.pred(p[18], p[15], p[17])
    ptx.setp.lt.u32(p[19], r[3], 32)
    ptx.and_.pred(p[5], p[19], p[18])
    ptx.mov.b32(r[122], 0)
    tma_load(dst=[r[9]], src=[rd[14], (r[122], r[63])], mbar=[r[6]], pred=p[5])
    at(263, 13).bar.sync(0)
    ptx.elect.sync(pair(r[24], p[20]), -1)
    ptx.and_.pred(p[21], p[15], p[20])
    ptx.and_.pred(p[6], p[19], p[21])
    ptx.add.s32(r[10], r[9], 49152)
    tma_load(dst=[r[10]], src=[rd[15], (r[122], r[11])], mbar=[r[6]], pred=p[6])
    at(261, 5).setp.gt.s32(p[22], r[5], 64)
    ptx.bar.sync(0)
    ptx.and_.pred(p[7], p[16], p[22])
    asm.mbarrier_arrive.expect_tx.shared__cta.b64(addr=[r[7]], bytes=32768, pred=p[7])
    at(262, 13).bar.sync(0)
    ptx.elect.sync(pair(r[25], p[23]), -1)
    ptx.and_.pred(p[24], p[22], p[23])
    ptx.and_.pred(p[8], p[19], p[24])
    ptx.add.s32(r[12], r[9], 16384)
    at(261, 5).mov.b32(r[13], 64)
    loc(262, 13)
    tma_load(dst=[r[12]], src=[rd[14], (r[13], r[63])], mbar=[r[7]], pred=p[8])
    at(263, 13).bar.sync(0)
    ptx.elect.sync(pair(r[26], p[25]), -1)
    ptx.and_.pred(p[26], p[22], p[25])
    ptx.and_.pred(p[9], p[19], p[26])
    ptx.add.s32(r[14], r[9], 65536)
    tma_load(dst=[r[14]], src=[rd[15], (r[13], r[11])], mbar=[r[7]], pred=p[9])
    ptx.mov.b32(r[125], fimm("0f00000000"))
    for i in range(63):
        ptx.mov.b32(r[i + 126], r[125])
    loc(261, 5)
    with skip_if(p[14], to=L.bb0_3):
        ptx.comment(" %bb.1: // %.lr.ph")
        at(0, 5).add.s32(r[4], r[5], -128)
        ptx.mov.b32(r[125], fimm("0f00000000"))
        ptx.mov.b32(r[124], 1)
        ptx.mov.b32(r[123], -1)
        for i in range(63):
            ptx.mov.b32(r[i + 126], r[125])
        ptx.mov.b32(r[189], r[122])
        # shared-memory offset of the mbarriers, one of 8 bytes per stage
        bar_base = 98304
        # pipeline stage index: counts 3 stages
        stage = r[123]
        # pipeline stage index: counts 3 stages
        stage_1 = r[124]
        # mbarrier phase bit: flips when stage wraps
        phase = r[122]
        with loop(L.bb0_2, while_=p[38]):
            ptx.comment(" =>This Inner Loop Header: Depth=1")
            at(261, 5).setp.lt.s32(p[31], r[189], r[4])
            ptx.add.s32(r[36], stage, 1)
            ptx.setp.gt.s32(p[32], r[36], 2)
            ptx.selp.b32(stage, 0, r[36], p[32])
            ptx.selp.b32(r[37], 1, 0, p[32])
            ptx.xor.b32(phase, phase, r[37])
            ptx.shl.b32(r[38], stage, 3)
            ptx.add.s32(r[39], r[9], r[38])
            ptx.add.s32(r[27], r[39], bar_base)
            mbarrier_wait([r[27]], phase, loc=(1, 264, 5), at=(1, 265, 5))
            at(263, 13).shl.b32(r[40], stage, 14)
            ptx.add.s32(r[41], r[9], r[40])
            ptx.add.s32(r[42], r[41], 49152)
            at(264, 15).bar.sync(0)
            ptx.shr.u32(r[43], r[41], 4)
            ptx.shfl.sync.idx.b32(r[44], r[2], 0, 31, -1)
            ptx.shl.b32(r[45], r[44], 7)
            ptx.and_.b32(r[46], r[45], 512)
            ptx.add.s32(r[47], r[46], r[43])
            ptx.and_.b32(r[48], r[47], 32767)
            ptx.bfe.u32(r[49], r[42], 4, 15)
            ptx.wgmma.fence.sync.aligned()
            ptx.cvt.u64.u32(rd[16], r[48])
            ptx.cvt.u64.u32(rd[17], r[49])
            ptx.or_.b64(rd[5], rd[17], WGMMA_DESC_BITS)
            ptx.or_.b64(rd[4], rd[16], WGMMA_DESC_BITS)
            ptx.mov.pred(p[27], -1)
            asm.here.wgmma_mma.m64n128k16.f32.f16.f16(
                d=acc, a=rd[4], b=rd[5], scale_d=p[27]
            )
            ptx.add.s32(r[50], r[48], 2)
            ptx.cvt.u64.u32(rd[18], r[50])
            ptx.add.s32(r[51], r[49], 2)
            ptx.add.s32(r[52], r[49], 6)
            ptx.cvt.u64.u32(rd[19], r[52])
            ptx.or_.b64(rd[11], rd[19], WGMMA_DESC_BITS)
            ptx.add.s32(r[53], r[48], 6)
            ptx.cvt.u64.u32(rd[20], r[53])
            ptx.or_.b64(rd[10], rd[20], WGMMA_DESC_BITS)
            ptx.add.s32(r[54], r[49], 4)
            ptx.cvt.u64.u32(rd[21], r[54])
            ptx.or_.b64(rd[9], rd[21], WGMMA_DESC_BITS)
            ptx.add.s32(r[55], r[48], 4)
            ptx.cvt.u64.u32(rd[22], r[55])
            ptx.or_.b64(rd[8], rd[22], WGMMA_DESC_BITS)
            ptx.cvt.u64.u32(rd[23], r[51])
            ptx.or_.b64(rd[7], rd[23], WGMMA_DESC_BITS)
            ptx.or_.b64(rd[6], rd[18], WGMMA_DESC_BITS)
            for i in range(3):
                asm.here.wgmma_mma.m64n128k16.f32.f16.f16(
                    d=acc, a=rd[2 * i + 6], b=rd[2 * i + 7], scale_d=p[27]
                )
            ptx.wgmma.commit_group.sync.aligned()
            ptx.cvt.u64.u32(rd[12], r[41])
            ptx.cvt.u64.u32(rd[13], r[42])
            at(261, 5).mov.b32(r[31], 0)
            at(264, 15).mov.b32(r[28], r[31])
            ptx.mov.b32(r[29], r[31])
            ptx.mov.b32(r[30], r[31])
            with asm():
                at(265, 15).wgmma.wait_group.sync.aligned(0)
            at(261, 5).add.s32(r[56], stage_1, 1)
            ptx.setp.gt.s32(p[33], r[56], 2)
            ptx.selp.b32(stage_1, 0, r[56], p[33])
            ptx.shl.b32(r[57], stage_1, 3)
            ptx.add.s32(r[58], r[9], r[57])
            ptx.add.s32(r[32], r[58], bar_base)
            ptx.bar.sync(0)
            ptx.and_.pred(p[28], p[16], p[31])
            at(262, 13).shl.b32(r[59], stage_1, 14)
            ptx.add.s32(r[33], r[9], r[59])
            at(261, 5).add.s32(r[34], r[189], 128)
            at(262, 13).bar.sync(0)
            ptx.elect.sync(pair(r[60], p[34]), -1)
            ptx.and_.pred(p[35], p[31], p[34])
            ptx.and_.pred(p[29], p[19], p[35])
            tma_load(
                dst=[r[33]], src=[rd[14], (r[34], r[63])], mbar=[r[32]], pred=p[29]
            )
            asm.mbarrier_arrive.expect_tx.shared__cta.b64(
                addr=[r[32]], bytes=32768, pred=p[28]
            )
            at(263, 13).add.s32(r[35], r[33], 49152)
            ptx.bar.sync(0)
            ptx.elect.sync(pair(r[61], p[36]), -1)
            ptx.and_.pred(p[37], p[31], p[36])
            ptx.and_.pred(p[30], p[19], p[37])
            tma_load(
                dst=[r[35]], src=[rd[15], (r[34], r[11])], mbar=[r[32]], pred=p[30]
            )
            at(261, 5).add.s32(r[189], r[189], 64)
            ptx.setp.lt.s32(p[38], r[189], r[5])
    ptx.comment(" %._crit_edge")
    with asm():
        at(262, 5).wgmma.wait_group.sync.aligned(0)
    ptx.bar.sync(0)
    for i in range(3):
        ptx.elect.sync(pair(r[i + 65], p[i + 43]), -1)
        ptx.and_.pred(p[i + 39], p[10], p[i + 43])
        asm.mbarrier_inval.shared__cta.b64(addr=[r[i + 6]], pred=p[i + 39])
    at(265, 44).cvt.rn.f16x2.f32(r[68], r[126], r[125])
    for i in range(31):
        ptx.cvt.rn.f16x2.f32(r[i + 69], r[2 * i + 128], r[2 * i + 127])
    at(265, 5).shl.b32(r[100], r[1], 7)
    ptx.and_.b32(r[101], r[100], 1920)
    ptx.shl.b32(r[102], r[1], 6)
    ptx.and_.b32(r[103], r[102], 14336)
    ptx.shl.b32(r[104], r[1], 4)
    ptx.and_.b32(r[105], r[104], 112)
    ptx.and_.b32(r[106], r[1], 16)
    ptx.or_.b32(r[107], r[101], r[105])
    ptx.xor.b32(r[108], r[107], r[106])
    ptx.or_.b32(r[109], r[108], r[103])
    for i in range(3):
        ptx.add.s32(r[2 * i + 110], r[9], r[2 * i + 109])
        stmatrix_m8n8(addr=[r[2 * i + 110]], src=r[4 * i + 68 : 4 * i + 72])
        stmatrix_m8n8(addr=[r[2 * i + 110] + 16384], src=r[4 * i + 84 : 4 * i + 88])
        ptx.xor.b32(r[2 * i + 111], r[109], 32 * i + 32)
    ptx.add.s32(r[116], r[9], r[115])
    stmatrix_m8n8(addr=[r[116]], src=r[80:84])
    stmatrix_m8n8(addr=[r[116] + 16384], src=r[96:100])
    ptx.fence.proxy.async_.shared__cta()
    ptx.bar.sync(0)
    ptx.elect.sync(pair(r[117], p[46]), -1)
    ptx.shfl.sync.idx.b32(r[118], r[2], 0, 31, -1)
    ptx.setp.lt.u32(p[47], r[3], 64)
    ptx.and_.pred(p[42], p[47], p[46])
    ptx.and_.b32(r[119], r[118], 1)
    ptx.shl.b32(r[120], r[119], 14)
    ptx.add.s32(r[64], r[9], r[120])
    ptx.shl.b32(r[121], r[119], 6)
    ptx.or_.b32(r[62], r[121], r[11])
    asm.cp_async_bulk_tensor._2d.global_.shared__cta.bulk_group(
        dst=[rd[24], (r[62], r[63])], src=[r[64]], pred=p[42]
    )
    ptx.cp.async_.bulk.commit_group()
    ptx.cp.async_.bulk.wait_group(0)
    ptx.bar.sync(0)
    at(256, 1).ret()
    ptx.label(L.tmp1)
    ptx.label(L.func_end0)
    ptx.comment(" -- End function")
ptx.file(1, "/work/main/corpus/src/triton/kernels.py")
with ptx.section(".debug_abbrev"):
    data_b8(
        "01 Abbreviation Code|11 DW_TAG_compile_unit|00 DW_CHILDREN_no|25 DW_AT_producer|08 DW_FORM_string|13 DW_AT_language|05 DW_FORM_data2|03 DW_AT_name|08 DW_FORM_string|10 DW_AT_stmt_list|06 DW_FORM_data4|1b DW_AT_comp_dir|08 DW_FORM_string|00 EOM(1)|00 EOM(2)|00 EOM(3)"
    )
with ptx.section(".debug_info"):
    ptx.data.b32(61, note=" Length of Unit")
    data_b8("02 DWARF version number|00")
    ptx.data.b32(secref(".debug_abbrev"), note=" Offset Into Abbrev. Section")
    data_b8("08 Address Size (in bytes)|01 Abbrev [1] 0xb:0x36 DW_TAG_compile_unit")
    data_b8("74 DW_AT_producer|72|69|74|6f|6e|00|02 DW_AT_language|00")
    data_b8("6b DW_AT_name|65|72|6e|65|6c|73|2e|70|79|00")
    ptx.data.b32(secref(".debug_line"), note=" DW_AT_stmt_list")
    data_b8("2f DW_AT_comp_dir|77|6f|72|6b|2f|6d|61|69|6e|2f|63|6f|72|70|75|73|2f|73")
    data_b8("72|63|2f|74|72|69|74|6f|6e|00")
ptx.empty_section(".debug_macinfo")

# Layout of the PTX text (whitespace, markers), keyed by statement; py2ptx reads it first.
style = {
    ("asm", "Address", "[", "Register", "w"): "",
    ("asm", "Register", "w", "Vector", "}"): "",
    ("asm", "Vector", ",", "Register", "w"): "",
    ("asm", "Vector", "{", "Register", "w"): "",
}
ptx.style("llvm", style)
trivia = {
    ("f639b85b32b8", "e809e1e442d1", "46ac9a9f8df3"): {"fmt": {20: " "}},
    ("94c08fc3701c", "2ee467630d29", "b7acf4ac629d"): {"fmt": {20: " "}},
    "1c6e2a81e49b": {"fmt": {16: " "}},
    "34c6b3dfbc21": {"lines": ["\t// begin inline asm", "\t"]},
    "}34c6b3dfbc21": {"after": ["", "", "\t// end inline asm"]},
    "9f64c48c8c58": {
        "lines": [
            None,
            "\t// wait for regs: %r125,%r126,%r127,%r128,%r129,%r130,%r131,%r132,%r133,%r134,%r135,%r136,%r137,%r138,%r139,%r140,%r141,%r142,%r143,%r144,%r145,%r146,%r147,%r148,%r149,%r150,%r151,%r152,%r153,%r154,%r155,%r156,%r157,%r158,%r159,%r160,%r161,%r162,%r163,%r164,%r165,%r166,%r167,%r168,%r169,%r170,%r171,%r172,%r173,%r174,%r175,%r176,%r177,%r178,%r179,%r180,%r181,%r182,%r183,%r184,%r185,%r186,%r187,%r188,%rd12,%r28,%r29,%rd13,%r30,%r31",
        ]
    },
    "18761e88a71b": {
        "lines": [
            None,
            "\t// wait for regs: %r125,%r126,%r127,%r128,%r129,%r130,%r131,%r132,%r133,%r134,%r135,%r136,%r137,%r138,%r139,%r140,%r141,%r142,%r143,%r144,%r145,%r146,%r147,%r148,%r149,%r150,%r151,%r152,%r153,%r154,%r155,%r156,%r157,%r158,%r159,%r160,%r161,%r162,%r163,%r164,%r165,%r166,%r167,%r168,%r169,%r170,%r171,%r172,%r173,%r174,%r175,%r176,%r177,%r178,%r179,%r180,%r181,%r182,%r183,%r184,%r185,%r186,%r187,%r188",
        ]
    },
}
ptx.trivia(trivia)
