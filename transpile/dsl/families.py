"""The instruction families of typed calls (transpile/dsl/typed.py): name ->
(leading PTX spelling, operands in PTX order). Operand names follow the PTX
ISA's (`a-desc` -> `a`), or say what the value is (`txCount` -> `bytes`: the bytes a phase expects).

An operand spec is space-separated, each item

    name          required
    name=V        defaulted: V (an int, `sink`, or another operand's name) when omitted
    name?         optional: in the PTX only when given
    name:v        a vector (`{...}`): tells optional operands apart
    ...@C@C       only in the forms where every condition C holds:
                  `.mod` / `!.mod`  the modifier is present / absent
                  `N=a|b`           the N-th modifier after the leading spelling is `.a` or `.b`
                  `~x` / `!~x`      operand x is / is not a vector
"""

from __future__ import annotations

# wgmma A types with imm-scale-a/imm-scale-b, and those also with imm-trans-a/imm-trans-b
# (imm-trans-a only for an A descriptor; a register A is not transposed)
_WG_SCALED = "2=f16|bf16|tf32|e4m3|e5m2"
_WG_TRANS = "2=f16|bf16"
_MBAR = ".mbarrier::complete_tx::bytes"
_HINT = "cache_policy@.L2::cache_hint"

FAMILIES = {
    # matrix multiply-accumulate: c (the addend) defaults to d, accumulate in place
    "mma_sync": ("mma.sync.aligned", "d a b c=d"),
    "wgmma_mma": ("wgmma.mma_async.sync.aligned",
                  f"d a b scale_d scale_a=1@{_WG_SCALED} scale_b=1@{_WG_SCALED}"
                  f" trans_a=0@{_WG_TRANS}@!~a trans_b=0@{_WG_TRANS}"),
    "ldmatrix": ("ldmatrix.sync.aligned", "d addr"),
    "stmatrix": ("stmatrix.sync.aligned", "addr src"),
    # bulk copies (TMA): loads complete on an mbarrier, stores on a bulk group
    "cp_async_bulk": ("cp.async.bulk", f"dst src size mbar@{_MBAR} cta_mask@.multicast::cluster {_HINT}"),
    "cp_async_bulk_tensor": ("cp.async.bulk.tensor",
                             f"dst src mbar@{_MBAR} offsets@.im2col cta_mask@.multicast::cluster {_HINT}"),
    "cp_async_bulk_prefetch": ("cp.async.bulk.prefetch", f"src size {_HINT}"),
    "cp_async_bulk_prefetch_tensor": ("cp.async.bulk.prefetch.tensor", f"src offsets@.im2col {_HINT}"),
    # mbarriers: the arrive state is usually discarded (`_`)
    "mbarrier_init": ("mbarrier.init", "addr count"),
    "mbarrier_inval": ("mbarrier.inval", "addr"),
    "mbarrier_arrive": ("mbarrier.arrive", "state=sink addr count?@!.expect_tx bytes@.expect_tx"),
    "mbarrier_arrive_drop": ("mbarrier.arrive_drop", "state=sink addr count?@!.expect_tx bytes@.expect_tx"),
    "mbarrier_expect_tx": ("mbarrier.expect_tx", "addr bytes"),
    "mbarrier_complete_tx": ("mbarrier.complete_tx", "addr bytes"),
    "mbarrier_test_wait": ("mbarrier.test_wait", "complete addr state@!.parity parity@.parity"),
    "mbarrier_try_wait": ("mbarrier.try_wait", "complete addr state@!.parity parity@.parity hint?"),
    "mbarrier_pending_count": ("mbarrier.pending_count", "count state"),
    # tcgen05 (tensor memory): d/a/b of an mma are [d-tmem], a-desc or [a-tmem], b-desc
    "tcgen05_mma": ("tcgen05.mma",
                    "d a b sp_meta@.sp idesc scale_a@.block_scale scale_b@.block_scale"
                    " disable_output_lane?:v@!.ws enable_input_d scale_input_d?@!.ws zero_col_mask?@.ws"),
    "tcgen05_ld": ("tcgen05.ld", "d redval@.red taddr split_off@.16x32bx2"),
    "tcgen05_st": ("tcgen05.st", "taddr split_off@.16x32bx2 src"),
    "tcgen05_cp": ("tcgen05.cp", "taddr sdesc"),
    "tcgen05_shift": ("tcgen05.shift", "taddr"),
    "tcgen05_commit": ("tcgen05.commit", "mbar cta_mask@.multicast::cluster"),
    "tcgen05_alloc": ("tcgen05.alloc", "dst ncols"),
    "tcgen05_dealloc": ("tcgen05.dealloc", "taddr ncols"),
}

# the old spelling `wgmma_mma(shape=..., dtype=..., atype=..., btype=..., d=..., ...)`:
# these keywords are the modifiers, in order
LEGACY = {"wgmma_mma": ("shape", "dtype", "atype", "btype")}
# earlier operand names, still read: old name -> name
RENAMED = {"tx_count": "bytes"}

# instructions of their own whose spelling starts with a family's leading words
OTHERS = ("cp.async.bulk.commit_group", "cp.async.bulk.wait_group")
