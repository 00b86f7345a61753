"""Instruction spellings the DSL accepts (the table behind `ptx.<opcode>.<modifier>...`).

OPCODES: every PTX ISA 9.0 opcode. MODIFIERS: the dot-words seen on instructions
(collected from the corpus, the external corpus and the syntax probes, then
reviewed). A spelling outside the table is a DSLError in hand-written Python;
the generator writes `ptx.insn("opcode", (".mod", ...), ...)` for PTX the
parser accepted but the table does not know, so the round trip never depends
on the table.
"""

import functools
import re

OPCODES = frozenset(
    """
    abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind
    bmsk bra brev brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp
    createpolicy cvt cvta discard div dp2a dp4a elect ex2 exit fence fma fns
    getctarank griddepcontrol isspacep istypep ld ldmatrix ldu lg2 lop3 mad mad24
    madc mapa match max mbarrier membar min mma mov movmatrix mul mul24 multimem
    nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret
    rsqrt sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st
    stackrestore stacksave stmatrix sub subc suld suq sured sust szext tanh tcgen05
    tensormap testp tex tld4 trap txq vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4
    vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote vset vset2 vset4 vshl
    vshr vsub vsub2 vsub4 wgmma wmma xor
    """.split()
)

MODIFIERS = frozenset(
    """
    .128x128b .128x256b .16x128b .16x256b .16x32bx2 .16x64b .1d .2d .32x128b
    .32x32b .3d .4d .4x256b .5d .64x128b .L1::evict_last .L1::no_allocate .L2
    .L2::128B .L2::256B .L2::64B .L2::cache_hint .L2::evict_first .L2::evict_last
    .L2::evict_normal .L2::evict_unchanged .NaN .a .a2d .abs .acc::f32 .acq_rel
    .acquire .add .alias .aligned .all .alloc .and .any .approx .arrive
    .arrive_drop .ashift .async .b .b1 .b1024 .b128 .b16 .b32 .b4x16_p64 .b64
    .b6x16_p32 .b8 .b8x16 .ballot .bf16 .bf16x2 .bfly .block32 .block_scale
    .box_dim .bulk .bulk_group .ca .cas .cg .clamp .cluster .col
    .collector::a::discard .collector::a::fill .collector::a::lastuse
    .collector::a::use .collector::b0::fill .commit .commit_group .complete_tx
    .const .cp .cp_fenceproxy .cs .cta .cta_group::1 .cta_group::2 .d .dealloc .dec
    .down .e2m1x2 .e2m1x4 .e2m3x2 .e3m2x2 .e4m3 .e4m3x2 .e4m3x4 .e5m2 .e5m2x2
    .element_stride .elemtype .eq .exch .expect_tx .f16 .f16x2 .f32 .f32x2 .f4e
    .f64 .fence .fence::after_thread_sync .fence::before_thread_sync .fill_mode
    .filter_mode .fractional .ftz .full .ge .get_first_ctaid .get_first_ctaid::x
    .get_first_ctaid::y .get_first_ctaid::z .geu .gl .global .global_address
    .global_dim .global_stride .gpu .grad .gt .height .hi .idx .im2col
    .im2col_no_offs .inc .init .interleave_layout .inval .is_canceled .kind::f16
    .kind::f8f6f4 .kind::i8 .kind::mxf4 .kind::mxf4nvf4 .kind::mxf8f6f4 .kind::tf32
    .l .launch_dependents .ld .ld_reduce .le .leu .level .lo .load .local .lt .ltu
    .lu .m16n16k16 .m16n16k8 .m16n8k16 .m16n8k32 .m16n8k8 .m64n128k16 .m64n256k16
    .m64n256k256 .m64n256k8 .m64n64k16 .m64n64k32 .m64n8k16 .m64n8k256 .m64n8k32
    .m64n8k8 .m8n8 .m8n8k4 .max .mbarrier .mbarrier::arrive::one
    .mbarrier::complete_tx::bytes .mbarrier_init .min .mma .mma_async .mmio
    .multicast::cluster .multicast::cluster::all .nc .ne .noComplete .noftz .noinc
    .or .p .pack::16b .param .param::entry .parity .pending_count .popc .pred
    .prefetch .proxy .query_cancel .r .rank .read .red .reduce .relaxed .release
    .relinquish_alloc_permit .relu .replace .rm .rn .rna .row .rs .rz .s16 .s32
    .s64 .s8 .sat .satfinite .sc .scale_vec::4X .shared .shared::cluster
    .shared::cta .shift .sp .sp::ordered_metadata .st .store .swizzle_mode .sync
    .sys .tensor .tensormap .tensormap::generic .test_wait .texref .tf32 .tile .to
    .trans .trap .try_cancel .try_wait .u16 .u32 .u64 .u8 .ue8m0x2 .uni
    .unpack::16b .up .v2 .v4 .v8 .volatile .wait .wait::ld .wait::st .wait_all
    .wait_group .warp .warpx2::01_23 .warpx2::02_13 .warpx4 .wb .weak .wide .width
    .wrap .ws .x1 .x128 .x16 .x2 .x32 .x4 .x64 .x8 .xor .zero
    """.split()
)

# Matrix shapes form a family, not a list: every `.mMnNkK` / `.mMnN` the ISA's
# mma/wmma/wgmma/ldmatrix/stmatrix shape tables can name.
_SHAPE = re.compile(r"\.m[0-9]{1,3}n[0-9]{1,3}(k[0-9]{1,3})?\Z")


def is_modifier(word: str) -> bool:
    """A dot-word the DSL accepts on an instruction: listed, a matrix shape, or one
    the ISA tables name in a modifier group (`cvt.rzi`, `add.rp`: valid, if rare)."""
    return word in MODIFIERS or _SHAPE.match(word) is not None or word in _isa_modifiers()


@functools.cache
def _isa_modifiers() -> frozenset:
    # Loaded on the first word outside MODIFIERS, so importing the DSL stays cheap.
    from .spec import load

    return frozenset(word for forms in load().values() for form in forms
                     for words in form.groups.values() for word in words)
