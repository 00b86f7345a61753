"""TMA tensor coordinates are signed (PTX ISA, cp.async.bulk.tensor: "tensorCoords ... .s32"):
a box that starts before the tensor loads its in-bounds part and fills the rest, a store at
negative coordinates writes its in-bounds part. Run through PTX; expected values are numpy
slices of the inputs."""

from __future__ import annotations

import numpy as np
import pytest

from ptx2py.emulate.frontend import run

HEAD = ".version 8.6\n.target sm_90a\n.address_size 64\n"


def _kernel(box_bytes: int) -> str:
    """Thread 0 loads the box at (c0, c1) of `src` into shared memory, copies it raw to `out`,
    and stores it with TMA at the same coordinates of `dst`."""
    copies = "".join(f"  ld.shared.v4.u32 {{%r2, %r3, %r4, %r5}}, [smem+{16 * c}];\n"
                     f"  st.global.v4.u32 [%rd0+{16 * c}], {{%r2, %r3, %r4, %r5}};\n"
                     for c in range(box_bytes // 16))
    return HEAD + f""".visible .entry k(
  .param .align 64 .b8 k_src[128],
  .param .u32 k_src_s0, .param .u32 k_src_s1, .param .u64 k_src_t0, .param .u64 k_src_t1,
  .param .align 64 .b8 k_dst[128],
  .param .u32 k_dst_s0, .param .u32 k_dst_s1, .param .u64 k_dst_t0, .param .u64 k_dst_t1,
  .param .u64 out,
  .param .u32 k_c0,
  .param .u32 k_c1
)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<8>;
  .shared .align 8 .b64 bar;
  .shared .align 1024 .b8 smem[{box_bytes}];
  ld.param.u64 %rd0, [out];
  cvta.to.global.u64 %rd0, %rd0;
  mov.u64 %rd1, k_src;
  cvta.param.u64 %rd1, %rd1;
  mov.u64 %rd2, k_dst;
  cvta.param.u64 %rd2, %rd2;
  ld.param.u32 %r20, [k_c0];
  ld.param.u32 %r21, [k_c1];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mbarrier.init.shared::cta.b64 [bar], 1;
  fence.proxy.async.shared::cta;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], {box_bytes};
  cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [smem], [%rd1, {{%r20, %r21}}], [bar];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
  @!%p2 bra WAIT;
{copies}  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd2, {{%r20, %r21}}], [smem];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
DONE:
  ret;
}}
"""


def _desc(name, shape, box, init):
    return {"name": name, "kind": "tma-descriptor", "dtype": "fp32", "shape": shape,
            "strides": [shape[1], 1], "block_shape": box, "count": shape[0] * shape[1], "init": init}


META = {"swizzle": 0, "elem_size": 4, "elem_type": 7, "fp4_padded": False, "is_im2col": False}

CASES = [  # (c0 innermost, c1): boxes hanging over every edge and corner, and wholly outside
    (-3, -2), (-1, 0), (0, -3), (-2, 7), (10, -1), (-1, -1), (5, 6),
    (-4, 0), (-100, 3), (2, -2147483648),
]


def _expected(src, box, c0, c1):
    """The box as numpy reads it: the tensor's elements where in bounds, zero elsewhere."""
    want = np.zeros(box, src.dtype)
    rows, cols = src.shape
    for i in range(box[0]):
        for j in range(box[1]):
            y, x = c1 + i, c0 + j
            if 0 <= y < rows and 0 <= x < cols:
                want[i, j] = src[y, x]
    return want


@pytest.mark.parametrize("c0,c1", CASES)
def test_tma_box_at_negative_coordinates_loads_and_stores_its_in_bounds_part(c0, c1):
    shape, box = [10, 12], [4, 4]
    box_bytes = 4 * 4 * 4
    args = [_desc("src", shape, box, "randn"), _desc("dst", shape, box, "zeros"),
            {"name": "out", "kind": "pointer", "dtype": "u8", "count": box_bytes, "init": "zeros"},
            {"name": "c0", "kind": "scalar", "dtype": "i32", "value": c0},
            {"name": "c1", "kind": "scalar", "dtype": "i32", "value": c1}]
    spec = {"kernel": "k", "args": args, "grid": [1, 1, 1], "block": [32, 1, 1], "seed": 3, "shared": 0,
            "tensordesc_meta": [dict(META, block_size=box), dict(META, block_size=box)]}
    res = run(_kernel(box_bytes), spec)
    assert res.clean, res.reports
    src = res.outputs["src"].reshape(shape)
    want = _expected(src, box, c0, c1)
    assert np.array_equal(res.outputs["out"].view(np.float32).reshape(box), want)
    # the store writes exactly the in-bounds elements of the box (dst starts all zero)
    written = np.zeros(shape, np.float32)
    for i in range(box[0]):
        for j in range(box[1]):
            y, x = c1 + i, c0 + j
            if 0 <= y < shape[0] and 0 <= x < shape[1]:
                written[y, x] = src[y, x]
    assert np.array_equal(res.outputs["dst"].reshape(shape), written)


def _nan_fill_kernel() -> str:
    """A 2d fp32 tensor map built in global memory with tensormap.replace, OOB fill NaN
    (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA), then one box loaded at (c0, c1)."""
    fields = [("global_address", "b64", None, "%rd3"), ("rank", "b32", None, "1"), ("elemtype", "b32", None, "7"),
              ("fill_mode", "b32", None, "1"), ("global_dim", "b32", 0, "12"), ("global_dim", "b32", 1, "10"),
              ("global_stride", "b64", 0, "48"), ("box_dim", "b32", 0, "4"), ("box_dim", "b32", 1, "4"),
              ("element_stride", "b32", 0, "1"), ("element_stride", "b32", 1, "1")]
    replaces = "".join(f"  tensormap.replace.tile.{f}.global.b1024.{t} [%rd4], {'' if o is None else f'{o}, '}{v};\n"
                       for f, t, o, v in fields)
    return HEAD + f""".visible .entry k(.param .u64 src, .param .u64 map, .param .u64 out, .param .u32 k_c0,
  .param .u32 k_c1)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<8>;
  .shared .align 8 .b64 bar;
  .shared .align 1024 .b8 smem[64];
  ld.param.u64 %rd3, [src];
  ld.param.u64 %rd4, [map];
  ld.param.u64 %rd0, [out];
  ld.param.u32 %r20, [k_c0];
  ld.param.u32 %r21, [k_c1];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
{replaces}  fence.proxy.tensormap::generic.release.gpu;
  fence.proxy.tensormap::generic.acquire.gpu [%rd4], 128;
  mbarrier.init.shared::cta.b64 [bar], 1;
  fence.proxy.async.shared::cta;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 64;
  cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [smem], [%rd4, {{%r20, %r21}}], [bar];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
  @!%p2 bra WAIT;
""" + "".join(f"  ld.shared.v4.u32 {{%r2, %r3, %r4, %r5}}, [smem+{16 * c}];\n"
              f"  st.global.v4.u32 [%rd0+{16 * c}], {{%r2, %r3, %r4, %r5}};\n" for c in range(4)) + """DONE:
  ret;
}
"""


@pytest.mark.parametrize("c0,c1", [(-3, -2), (10, 8), (-1, 4), (2, 3)])
def test_tma_box_at_negative_coordinates_fills_outside_elements_with_the_maps_nan(c0, c1):
    args = [{"name": "src", "kind": "pointer", "dtype": "fp32", "count": 120, "init": "randn"},
            {"name": "map", "kind": "pointer", "dtype": "u8", "count": 128, "init": "zeros"},
            {"name": "out", "kind": "pointer", "dtype": "fp32", "count": 16, "init": "zeros"},
            {"name": "c0", "kind": "scalar", "dtype": "i32", "value": c0},
            {"name": "c1", "kind": "scalar", "dtype": "i32", "value": c1}]
    spec = {"kernel": "k", "args": args, "grid": [1, 1, 1], "block": [32, 1, 1], "seed": 5, "shared": 0}
    res = run(_nan_fill_kernel(), spec)
    assert res.clean, res.reports
    src = res.outputs["src"].reshape(10, 12)
    got = res.outputs["out"].reshape(4, 4)
    for i in range(4):
        for j in range(4):
            y, x = c1 + i, c0 + j
            if 0 <= y < 10 and 0 <= x < 12:
                assert got[i, j] == src[y, x]
            else:
                assert np.isnan(got[i, j])
