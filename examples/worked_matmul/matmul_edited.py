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
    ptx.ld.param.b32(K := r[5], [sym(matmul_tma_kernel.K)])
    ptx.mov.b32(a_desc_addr := r[15], sym(matmul_tma_kernel.a_desc))
    ptx.mov.b32(c_desc_addr := r[16], sym(matmul_tma_kernel.c_desc))
    label(L.tmp0).at(258, 13).cvt.u64.u32(c_desc_addr_64 := rd[1], c_desc_addr)
    ptx.cvta.param.u64(c_desc_addr_64_p := rd[24], c_desc_addr_64)
    ptx.mov.b32(b_desc_addr := r[17], sym(matmul_tma_kernel.b_desc))
    ptx.cvt.u64.u32(b_desc_addr_64 := rd[2], b_desc_addr)
    ptx.cvta.param.u64(b_desc_addr_64_p := rd[15], b_desc_addr_64)
    ptx.cvt.u64.u32(a_desc_addr_64 := rd[3], a_desc_addr)
    ptx.cvta.param.u64(a_desc_addr_64_p := rd[14], a_desc_addr_64)
    ptx.mov.u32(ctaid_x := r[18], sreg.ctaid.x)
    at(259, 13).mov.u32(ctaid_y := r[19], sreg.ctaid.y)
    at(262, 26).shl.b32(a_1 := r[63], ctaid_x, 7)
    at(263, 26).shl.b32(b_1 := r[11], ctaid_y, 7)
    at(261, 5).mov.u32(tid_x := r[1], sreg.tid.x)
    ptx.shr.u32(k_1 := r[2], tid_x, 5)
    ptx.setp.eq.b32(k_2 := p[10], k_1, 0)
    ptx.elect.sync(pair(k_3 := r[20], k_4 := p[11]), -1)
    ptx.and_.pred(k_5 := p[1], k_2, k_4)
    ptx.mov.b32(global_smem_addr := r[9], global_smem)
    ptx.add.s32(bar := r[6], global_smem_addr, 98304)
    asm.mbarrier_init.shared__cta.b64(addr=[bar], count=1, pred=k_5)
    ptx.elect.sync(pair(k_6 := r[21], k_7 := p[12]), -1)
    ptx.and_.pred(k_8 := p[2], k_2, k_7)
    ptx.add.s32(bar_1 := r[7], global_smem_addr, 98312)
    asm.mbarrier_init.shared__cta.b64(addr=[bar_1], count=1, pred=k_8)
    ptx.elect.sync(pair(k_9 := r[22], k_10 := p[13]), -1)
    ptx.and_.pred(k_11 := p[3], k_2, k_10)
    ptx.add.s32(bar_2 := r[8], global_smem_addr, 98320)
    asm.mbarrier_init.shared__cta.b64(addr=[bar_2], count=1, pred=k_11)
    ptx.setp.lt.s32(k_12 := p[14], K, 1)
    ptx.setp.gt.s32(k_13 := p[15], K, 0)
    ptx.bar.sync(0)
    ptx.and_.b32(k_14 := r[3], tid_x, 255)
    ptx.setp.eq.b32(k_15 := p[16], k_14, 0)
    ptx.and_.pred(k_16 := p[4], k_15, k_13)
    asm.mbarrier_arrive.expect_tx.shared__cta.b64(addr=[bar], bytes=32768, pred=k_16)
    at(262, 13).bar.sync(0)
    ptx.elect.sync(pair(a_2 := r[23], a_3 := p[17]), -1)
    ptx.and_.pred(a_4 := p[18], k_13, a_3)
    ptx.setp.lt.u32(a_5 := p[19], k_14, 32)
    ptx.and_.pred(a_6 := p[5], a_5, a_4)
    ptx.mov.b32(phase := r[122], 0)
    tma_load(
        dst=[global_smem_addr],
        src=[a_desc_addr_64_p, (phase, a_1)],
        mbar=[bar],
        pred=a_6,
    )
    at(263, 13).bar.sync(0)
    ptx.elect.sync(pair(b_2 := r[24], b_3 := p[20]), -1)
    ptx.and_.pred(b_4 := p[21], k_13, b_3)
    ptx.and_.pred(b_5 := p[6], a_5, b_4)
    ptx.add.s32(b_6 := r[10], global_smem_addr, 49152)
    tma_load(dst=[b_6], src=[b_desc_addr_64_p, (phase, b_1)], mbar=[bar], pred=b_5)
    at(261, 5).setp.gt.s32(k_17 := p[22], K, 64)
    ptx.bar.sync(0)
    ptx.and_.pred(k_18 := p[7], k_15, k_17)
    asm.mbarrier_arrive.expect_tx.shared__cta.b64(addr=[bar_1], bytes=32768, pred=k_18)
    at(262, 13).bar.sync(0)
    ptx.elect.sync(pair(a_7 := r[25], a_8 := p[23]), -1)
    ptx.and_.pred(a_9 := p[24], k_17, a_8)
    ptx.and_.pred(a_10 := p[8], a_5, a_9)
    ptx.add.s32(a_11 := r[12], global_smem_addr, 16384)
    at(261, 5).mov.b32(k_19 := r[13], 64)
    loc(262, 13)
    tma_load(dst=[a_11], src=[a_desc_addr_64_p, (k_19, a_1)], mbar=[bar_1], pred=a_10)
    at(263, 13).bar.sync(0)
    ptx.elect.sync(pair(b_7 := r[26], b_8 := p[25]), -1)
    ptx.and_.pred(b_9 := p[26], k_17, b_8)
    ptx.and_.pred(b_10 := p[9], a_5, b_9)
    ptx.add.s32(b_11 := r[14], global_smem_addr, 65536)
    tma_load(dst=[b_11], src=[b_desc_addr_64_p, (k_19, b_1)], mbar=[bar_1], pred=b_10)
    ptx.mov.b32(acc[0], f32(0.0))
    for i in range(63):
        ptx.mov.b32(r[i + 126], acc[0])
    loc(261, 5)
    with skip_if(k_12, to=L.bb0_3):
        ptx.comment(" %bb.1: // %.lr.ph")
        at(0, 5).add.s32(r[4], K, -128)
        ptx.mov.b32(acc[0], f32(0.0))
        ptx.mov.b32(stage_1 := r[124], 1)
        ptx.mov.b32(stage := r[123], -1)
        for i in range(63):
            ptx.mov.b32(r[i + 126], acc[0])
        ptx.mov.b32(iv := r[189], phase)
        # shared-memory offset of the mbarriers, one of 8 bytes per stage
        bar_base = 98304
        # stage: pipeline stage index: counts 3 stages
        # stage_1: pipeline stage index: counts 3 stages
        # phase: mbarrier phase bit: flips when stage wraps
        with loop(L.bb0_2, while_=(k_32 := p[38])):
            ptx.comment(" =>This Inner Loop Header: Depth=1")
            at(261, 5).setp.lt.s32(k_20 := p[31], iv, r[4])
            ptx.add.s32(k_21 := r[36], stage, 1)
            ptx.setp.gt.s32(k_22 := p[32], k_21, 2)
            ptx.selp.b32(stage, 0, k_21, k_22)
            ptx.selp.b32(k_23 := r[37], 1, 0, k_22)
            ptx.xor.b32(phase, phase, k_23)
            ptx.shl.b32(k_24 := r[38], stage, 3)
            ptx.add.s32(k_25 := r[39], global_smem_addr, k_24)
            ptx.add.s32(bar_3 := r[27], k_25, bar_base)
            mbarrier_wait([bar_3], phase, loc=(1, 264, 5), at=(1, 265, 5))
            at(263, 13).shl.b32(b_12 := r[40], stage, 14)
            ptx.add.s32(b_13 := r[41], global_smem_addr, b_12)
            ptx.add.s32(b := r[42], b_13, 49152)
            at(264, 15).bar.sync(0)
            ptx.shr.u32(acc_1 := r[43], b_13, 4)
            ptx.shfl.sync.idx.b32(acc_2 := r[44], k_1, 0, 31, -1)
            ptx.shl.b32(acc_3 := r[45], acc_2, 7)
            ptx.and_.b32(acc_4 := r[46], acc_3, 512)
            ptx.add.s32(acc_5 := r[47], acc_4, acc_1)
            ptx.and_.b32(acc_6 := r[48], acc_5, 32767)
            ptx.bfe.u32(acc_7 := r[49], b, 4, 15)
            ptx.wgmma.fence.sync.aligned()
            ptx.cvt.u64.u32(acc_8 := rd[16], acc_6)
            ptx.cvt.u64.u32(acc_9 := rd[17], acc_7)
            ptx.or_.b64(acc_10 := rd[5], acc_9, WGMMA_DESC_BITS)
            ptx.or_.b64(acc_11 := rd[4], acc_8, WGMMA_DESC_BITS)
            ptx.mov.pred(acc_12 := p[27], -1)
            asm.here.wgmma_mma.m64n128k16.f32.f16.f16(
                d=acc, a=acc_11, b=acc_10, scale_d=acc_12
            )
            ptx.add.s32(acc_13 := r[50], acc_6, 2)
            ptx.cvt.u64.u32(acc_14 := rd[18], acc_13)
            ptx.add.s32(acc_15 := r[51], acc_7, 2)
            ptx.add.s32(acc_16 := r[52], acc_7, 6)
            ptx.cvt.u64.u32(acc_17 := rd[19], acc_16)
            ptx.or_.b64(acc_18 := rd[11], acc_17, WGMMA_DESC_BITS)
            ptx.add.s32(acc_19 := r[53], acc_6, 6)
            ptx.cvt.u64.u32(acc_20 := rd[20], acc_19)
            ptx.or_.b64(acc_21 := rd[10], acc_20, WGMMA_DESC_BITS)
            ptx.add.s32(acc_22 := r[54], acc_7, 4)
            ptx.cvt.u64.u32(acc_23 := rd[21], acc_22)
            ptx.or_.b64(acc_24 := rd[9], acc_23, WGMMA_DESC_BITS)
            ptx.add.s32(acc_25 := r[55], acc_6, 4)
            ptx.cvt.u64.u32(acc_26 := rd[22], acc_25)
            ptx.or_.b64(acc_27 := rd[8], acc_26, WGMMA_DESC_BITS)
            ptx.cvt.u64.u32(acc_28 := rd[23], acc_15)
            ptx.or_.b64(acc_29 := rd[7], acc_28, WGMMA_DESC_BITS)
            ptx.or_.b64(acc_30 := rd[6], acc_14, WGMMA_DESC_BITS)
            for i in range(3):
                asm.here.wgmma_mma.m64n128k16.f32.f16.f16(
                    d=acc, a=rd[2 * i + 6], b=rd[2 * i + 7], scale_d=acc_12
                )
            ptx.wgmma.commit_group.sync.aligned()
            ptx.cvt.u64.u32(acc_31 := rd[12], b_13)
            ptx.cvt.u64.u32(acc_32 := rd[13], b)
            at(261, 5).mov.b32(k_26 := r[31], 0)
            at(264, 15).mov.b32(acc_33 := r[28], k_26)
            ptx.mov.b32(acc_34 := r[29], k_26)
            ptx.mov.b32(acc_ := r[30], k_26)
            with asm():
                at(265, 15).wgmma.wait_group.sync.aligned(0)
            at(261, 5).add.s32(k_27 := r[56], stage_1, 1)
            ptx.setp.gt.s32(k_28 := p[33], k_27, 2)
            ptx.selp.b32(stage_1, 0, k_27, k_28)
            ptx.shl.b32(k_29 := r[57], stage_1, 3)
            ptx.add.s32(k_30 := r[58], global_smem_addr, k_29)
            ptx.add.s32(bar_4 := r[32], k_30, bar_base)
            ptx.bar.sync(0)
            ptx.and_.pred(k_31 := p[28], k_15, k_20)
            at(262, 13).shl.b32(a_12 := r[59], stage_1, 14)
            ptx.add.s32(a := r[33], global_smem_addr, a_12)
            at(261, 5).add.s32(k := r[34], iv, 128)
            at(262, 13).bar.sync(0)
            ptx.elect.sync(pair(a_13 := r[60], a_14 := p[34]), -1)
            ptx.and_.pred(a_15 := p[35], k_20, a_14)
            ptx.and_.pred(a_16 := p[29], a_5, a_15)
            tma_load(dst=[a], src=[a_desc_addr_64_p, (k, a_1)], mbar=[bar_4], pred=a_16)
            asm.mbarrier_arrive.expect_tx.shared__cta.b64(
                addr=[bar_4], bytes=32768, pred=k_31
            )
            at(263, 13).add.s32(b_14 := r[35], a, 49152)
            ptx.bar.sync(0)
            ptx.elect.sync(pair(b_15 := r[61], b_16 := p[36]), -1)
            ptx.and_.pred(b_17 := p[37], k_20, b_16)
            ptx.and_.pred(b_18 := p[30], a_5, b_17)
            tma_load(
                dst=[b_14], src=[b_desc_addr_64_p, (k, b_1)], mbar=[bar_4], pred=b_18
            )
            at(261, 5).add.s32(iv, iv, 64)
            ptx.setp.lt.s32(k_32, iv, K)
    ptx.comment(" %._crit_edge")
    with asm():
        at(262, 5).wgmma.wait_group.sync.aligned(0)
    ptx.bar.sync(0)
    for i in range(3):
        ptx.elect.sync(pair(r[i + 65], p[i + 43]), -1)
        ptx.and_.pred(p[i + 39], k_2, p[i + 43])
        asm.mbarrier_inval.shared__cta.b64(addr=[r[i + 6]], pred=p[i + 39])
    at(265, 44).cvt.rn.f16x2.f32(r[68], acc[1], acc[0])
    for i in range(31):
        ptx.cvt.rn.f16x2.f32(r[i + 69], r[2 * i + 128], r[2 * i + 127])
    at(265, 5).shl.b32(r[100], tid_x, 7)
    ptx.and_.b32(r[101], r[100], 1920)
    ptx.shl.b32(r[102], tid_x, 6)
    ptx.and_.b32(r[103], r[102], 14336)
    ptx.shl.b32(r[104], tid_x, 4)
    ptx.and_.b32(r[105], r[104], 112)
    ptx.and_.b32(r[106], tid_x, 16)
    ptx.or_.b32(r[107], r[101], r[105])
    ptx.xor.b32(r[108], r[107], r[106])
    ptx.or_.b32(global_smem_off := r[109], r[108], r[103])
    for i in range(3):
        ptx.add.s32(r[2 * i + 110], global_smem_addr, r[2 * i + 109])
        stmatrix_m8n8(addr=[r[2 * i + 110]], src=r[4 * i + 68 : 4 * i + 72])
        stmatrix_m8n8(addr=[r[2 * i + 110] + 16384], src=r[4 * i + 84 : 4 * i + 88])
        ptx.xor.b32(r[2 * i + 111], global_smem_off, 32 * i + 32)
    ptx.add.s32(r[116], global_smem_addr, global_smem_off_3 := r[115])
    stmatrix_m8n8(addr=[r[116]], src=r[80:84])
    stmatrix_m8n8(addr=[r[116] + 16384], src=r[96:100])
    ptx.fence.proxy.async_.shared__cta()
    ptx.bar.sync(0)
    ptx.elect.sync(pair(r[117], p[46]), -1)
    ptx.shfl.sync.idx.b32(r[118], k_1, 0, 31, -1)
    ptx.setp.lt.u32(k_14_lt_64 := p[47], k_14, 64)
    ptx.and_.pred(p[42], k_14_lt_64, p[46])
    ptx.and_.b32(global_smem_idx := r[119], r[118], 1)
    ptx.shl.b32(global_smem_off_4 := r[120], global_smem_idx, 14)
    ptx.add.s32(global_smem_ptr_4 := r[64], global_smem_addr, global_smem_off_4)
    ptx.shl.b32(r[121], global_smem_idx, 6)
    ptx.or_.b32(r[62], r[121], b_1)
    asm.cp_async_bulk_tensor._2d.global_.shared__cta.bulk_group(
        dst=[c_desc_addr_64_p, (r[62], a_1)], src=[global_smem_ptr_4], pred=p[42]
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
