"""Hopper pipelines on the CPU engine: mbarrier phases, TMA tile loads (1d-5d, swizzle, OOB
fill), and the swizzle pattern against the PTX ISA's description."""

from __future__ import annotations

import numpy as np
import pytest

from ptx2py.emulate.frontend import run
from ptx2py.emulate.tensormaps import swizzle

HEAD = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def _launch(args, block=64, grid=(1, 1, 1), metas=None, shared=0):
    spec = {"kernel": "k", "args": args, "grid": list(grid), "block": [block, 1, 1], "seed": 1, "shared": shared}
    if metas:
        spec["tensordesc_meta"] = metas
    return spec


OUT = {"name": "out", "kind": "pointer", "dtype": "u32", "count": 64, "init": "zeros"}


def _mbar_kernel(body: str) -> str:
    return HEAD + """.visible .entry k(.param .u64 out)
{
  .reg .pred %p<8>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd0, [out];
  cvta.to.global.u64 %rd0, %rd0;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd0, %rd2;
  setp.eq.u32 %p1, %r1, 0;
  mov.u32 %r9, 0;
""" + body + """
  st.global.u32 [%rd3], %r9;
  ret;
}
"""


def _bit(pred: str, bit: int) -> str:
    return f"  selp.u32 %r8, {1 << bit}, 0, {pred};\n  or.b32 %r9, %r9, %r8;\n"


def test_phase_parity_and_state_tokens():
    body = ("  @%p1 mbarrier.init.shared::cta.b64 [bar], 64;\n  bar.sync 0;\n"
            "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n"
            "WAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;\n  @!%p2 bra WAIT;\n"
            "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 1;\n" + _bit("%p3", 0) +
            "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 0;\n" + _bit("%p3", 1) +
            "  mbarrier.test_wait.shared::cta.b64 %p3, [bar], %rd1;\n" + _bit("%p3", 2))
    res = run(_mbar_kernel(body), _launch([OUT]))
    assert res.clean, res.reports
    # phase 0 completed: parity 1 (the current phase) is not, the state of phase 0 is
    assert (res.outputs["out"] == 0b110).all()


def test_expect_tx_and_complete_tx_complete_the_phase_together():
    body = ("  @%p1 mbarrier.init.shared::cta.b64 [bar], 1;\n  bar.sync 0;\n"
            "  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 16;\n"
            "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 0;\n" + _bit("%p3", 0) +
            "  @%p1 mbarrier.complete_tx.shared::cta.b64 [bar], 8;\n"
            "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 0;\n" + _bit("%p3", 1) +
            "  @%p1 mbarrier.complete_tx.shared::cta.b64 [bar], 8;\n"
            "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 0;\n" + _bit("%p3", 2))
    res = run(_mbar_kernel(body), _launch([OUT], block=32))
    assert res.clean, res.reports
    assert res.outputs["out"][0] == 0b100       # thread 0 ran each step in order


def test_arrive_drop_lowers_the_count_of_later_phases():
    body = ("  @%p1 mbarrier.init.shared::cta.b64 [bar], 2;\n  bar.sync 0;\n"
            "  setp.eq.u32 %p4, %r1, 1;\n"
            "  @%p4 mbarrier.arrive_drop.shared::cta.b64 _, [bar];\n"
            "  @%p1 mbarrier.arrive.shared::cta.b64 _, [bar];\n"
            "  @%p1 mbarrier.arrive.shared::cta.b64 _, [bar];\n"
            "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 1;\n" + _bit("%p3", 0))
    res = run(_mbar_kernel(body), _launch([OUT], block=32))
    assert res.clean, res.reports
    assert res.outputs["out"][0] == 1           # phase 1 completed with one arrival


def test_wait_that_can_never_complete_is_a_deadlock_naming_barrier_and_warps():
    body = ("  @%p1 mbarrier.init.shared::cta.b64 [bar], 65;\n  bar.sync 0;\n"
            "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n"
            "WAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;\n  @!%p2 bra WAIT;\n")
    res = run(_mbar_kernel(body), _launch([OUT]))
    [rep] = [r for r in res.reports if r.kind == "deadlock"]
    assert "mbarrier at bar" in rep.message and "1 of 65 arrivals" in rep.message
    assert "warp 0 waits" in rep.message and "warp 1 waits" in rep.message


def test_use_of_an_uninitialised_barrier_is_reported():
    body = "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n"
    res = run(_mbar_kernel(body), _launch([OUT], block=32))
    assert [r.kind for r in res.reports] == ["mbarrier"]
    assert "not an initialised mbarrier" in res.reports[0].message


# --- swizzle ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,span", [(1, 32), (2, 64), (3, 128)])
def test_swizzle_permutes_16_byte_chunks_by_row_as_the_isa_describes(mode, span):
    """PTX ISA "Tensor Swizzling Modes": counting 128-byte rows r and 16-byte chunks c in them,
    the chunks of each `span`-byte segment are permuted: chunk c goes to the chunk whose index
    within the segment is (c XOR r) mod (span / 16); the pattern repeats every span/16 rows."""
    addrs = np.arange(0, 4096, dtype=np.int64)
    got = swizzle(addrs, mode)
    row128, chunk, byte = addrs // 128, (addrs // 16) % 8, addrs % 16
    chunks_in_span = span // 16
    want_chunk = (chunk & ~(chunks_in_span - 1)) | ((chunk ^ row128) & (chunks_in_span - 1))
    want = row128 * 128 + want_chunk * 16 + byte
    assert (got == want).all()
    assert sorted(got.tolist()) == addrs.tolist()        # a permutation of the bytes


# --- TMA tile loads -------------------------------------------------------------------------------------
def _tma_kernel(rank: int, box_bytes: int) -> str:
    shape_params = "".join(f"  .param .u32 k_s{i},\n" for i in range(rank))
    stride_params = "".join(f"  .param .u64 k_t{i},\n" for i in range(rank))
    coords = ", ".join(f"%r{20 + i}" for i in range(rank))
    loads = "".join(f"  ld.param.u32 %r{20 + i}, [k_c{i}];\n" for i in range(rank))
    coord_params = ",\n".join(f"  .param .u32 k_c{i}" for i in range(rank))
    copies = "".join(f"  @%p1 ld.shared.v4.u32 {{%r2, %r3, %r4, %r5}}, [smem+{16 * c}];\n"
                     f"  @%p1 st.global.v4.u32 [%rd0+{16 * c}], {{%r2, %r3, %r4, %r5}};\n"
                     for c in range(box_bytes // 16))
    return HEAD + f""".visible .entry k(
  .param .align 64 .b8 k_map[128],
{shape_params}{stride_params}  .param .u64 out,
{coord_params}
)
{{
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<8>;
  .shared .align 8 .b64 bar;
  .shared .align 1024 .b8 smem[{box_bytes}];
  ld.param.u64 %rd0, [out];
  cvta.to.global.u64 %rd0, %rd0;
  mov.u64 %rd1, k_map;
  cvta.param.u64 %rd1, %rd1;
{loads}  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [bar], 1;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], {box_bytes};
  @%p1 cp.async.bulk.tensor.{rank}d.shared::cta.global.mbarrier::complete_tx::bytes [smem], [%rd1, {{{coords}}}], [bar];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
  @!%p2 bra WAIT;
{copies}  ret;
}}
"""


CASES = [  # shape (outermost first), box (outermost first), coords (innermost first), dtype, swizzle
    ([100], [32], [80], "fp32", 0),
    ([40, 64], [16, 64], [0, 32], "fp16", 3),
    ([9, 40, 32], [2, 8, 32], [0, 36, 8], "fp16", 2),
    ([3, 5, 7, 16], [2, 2, 4, 16], [0, 5, 4, 2], "fp16", 1),
    ([2, 3, 4, 5, 8], [2, 2, 2, 2, 8], [0, 4, 2, 1, 1], "fp32", 0),
]


@pytest.mark.parametrize("shape,box,coords,dtype,sw", CASES)
def test_tma_tile_load_matches_numpy_slice_with_zero_fill(shape, box, coords, dtype, sw):
    rank = len(shape)
    esize = 4 if dtype == "fp32" else 2
    box_bytes = int(np.prod(box)) * esize
    strides = [int(np.prod(shape[i + 1:])) for i in range(rank)]
    args = [{"name": "src", "kind": "tma-descriptor", "dtype": dtype, "shape": shape, "strides": strides,
             "block_shape": box, "count": int(np.prod(shape)), "init": "randn"},
            {"name": "out", "kind": "pointer", "dtype": "u8", "count": box_bytes, "init": "zeros"}]
    args += [{"name": f"c{i}", "kind": "scalar", "dtype": "i32", "value": c} for i, c in enumerate(coords)]
    meta = {"swizzle": sw, "elem_size": esize, "elem_type": 7 if dtype == "fp32" else 6, "block_size": box,
            "fp4_padded": False, "is_im2col": False}
    res = run(_tma_kernel(rank, box_bytes), _launch(args, block=32, metas=[meta]))
    assert res.clean, res.reports
    src = res.outputs["src"].reshape(shape)
    want = np.zeros(box, src.dtype)                  # the box, zero outside the tensor
    region = tuple(slice(c, c + b) for c, b in zip(reversed(coords), box))
    part = src[region]
    want[tuple(slice(0, n) for n in part.shape)] = part
    raw = res.outputs["out"].view(np.uint8)
    # undo the swizzle with the ISA's chunk formula (independent of emulate.tensormaps)
    addrs = np.arange(box_bytes)
    if sw:
        chunks = 2 ** sw
        row, chunk = addrs // 128, (addrs // 16) % 8
        chunk = (chunk & ~(chunks - 1)) | ((chunk ^ row) & (chunks - 1))
        addrs = row * 128 + chunk * 16 + addrs % 16
    got = raw[addrs].view(src.dtype).reshape(box)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("count,ok", [(40, True), (232, True), (41, False), (16, False)])
def test_setmaxnreg_is_checked_and_has_no_effect(count, ok):
    from ptx2py.emulate.errors import NotEmulated

    text = HEAD + (".visible .entry k(.param .u64 out)\n{\n"
                   f"  setmaxnreg.dec.sync.aligned.u32 {count};\n  ret;\n}}\n")
    if ok:
        assert run(text, _launch([OUT], block=128)).clean
    else:
        with pytest.raises(NotEmulated, match="setmaxnreg"):
            run(text, _launch([OUT], block=128))

