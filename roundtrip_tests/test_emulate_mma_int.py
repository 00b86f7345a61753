"""Integer mma.sync (s8/u8 m16n8k16/k32, s4/u4 m16n8k32/k64, .satfinite) through PTX against an
exact numpy int64 reference; fragments packed here from the PTX ISA's layout tables ("Matrix
Fragments for mma.m16n8k*", integer types), and a Triton int8 tl.dot compiled for sm_80."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptx2py.emulate.frontend import run

HEAD = ".version 7.0\n.target sm_80\n.address_size 64\n"
BITS = {"s8": 8, "u8": 8, "s4": 4, "u4": 4}


def _a_pos(lane, i, per):
    """(row, col) of A element i of a lane: rows groupID / groupID+8 alternate every `per`
    elements, columns threadID_in_group*per + i%per, the next half of K every 2*per elements."""
    g, t = lane >> 2, lane & 3
    return g + 8 * ((i // per) % 2), t * per + i % per + 4 * per * (i // (2 * per))


def _b_pos(lane, i, per):
    g, t = lane >> 2, lane & 3
    return t * per + i % per + 4 * per * (i // per), g


def _pack(mat, n_elems, pos, bits):
    per = 32 // bits
    regs = np.zeros((32, n_elems // per), np.uint32)
    for lane in range(32):
        for i in range(n_elems):
            v = int(mat[pos(lane, i, per)]) & ((1 << bits) - 1)
            regs[lane, i // per] |= np.uint32(v << (bits * (i % per)))
    return regs


def _kernel(shape, at, bt, na, nb, sat):
    names = lambda p, n: ", ".join(f"%{p}{i}" for i in range(n))  # noqa: E731
    loads = "".join(f"  ld.global.b32 %a{i}, [%rd1+{4 * i}];\n" for i in range(na))
    loads += "".join(f"  ld.global.b32 %b{i}, [%rd1+{4 * (na + i)}];\n" for i in range(nb))
    loads += "".join(f"  ld.global.b32 %c{i}, [%rd1+{4 * (na + nb + i)}];\n" for i in range(4))
    stores = "".join(f"  st.global.b32 [%rd2+{4 * i}], %d{i};\n" for i in range(4))
    operands = ", ".join("{" + names(p, n) + "}" for p, n in (("d", 4), ("a", na), ("b", nb), ("c", 4)))
    return HEAD + f""".visible .entry k(.param .u64 inp, .param .u64 out)
{{
  .reg .b32 %a<{na}>, %b<{nb}>, %c<4>, %d<4>, %r<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [inp];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, {4 * (na + nb + 4)};
  add.s64 %rd1, %rd1, %rd3;
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd2, %rd2, %rd3;
{loads}  mma.sync.aligned.{shape}.row.col{'.satfinite' if sat else ''}.s32.{at}.{bt}.s32 {operands};
{stores}  ret;
}}
"""


def _values(rng, ty, shape):
    bits = BITS[ty]
    lo, hi = (-(1 << (bits - 1)), 1 << (bits - 1)) if ty[0] == "s" else (0, 1 << bits)
    v = rng.integers(lo, hi, shape)
    v.flat[:3] = [lo, hi - 1, lo]         # the extremes
    return v


CASES = [("m16n8k16", "s8", "s8"), ("m16n8k16", "u8", "s8"), ("m16n8k32", "s8", "s8"), ("m16n8k32", "u8", "u8"),
         ("m16n8k32", "s8", "u8"), ("m16n8k32", "s4", "s4"), ("m16n8k32", "u4", "s4"), ("m16n8k64", "s4", "u4"),
         ("m16n8k64", "u4", "u4")]


@pytest.mark.parametrize("sat", [False, True])
@pytest.mark.parametrize("shape,at,bt", CASES)
def test_integer_mma_sync_is_exact_and_wraps_or_saturates(shape, at, bt, sat):
    k = int(shape.split("k")[1])
    rng = np.random.default_rng(k + BITS[at] + sat)
    A, B = _values(rng, at, (16, k)), _values(rng, bt, (k, 8))
    C = rng.integers(-(1 << 31), 1 << 31, (16, 8))
    C[0, :] = (1 << 31) - 1 - rng.integers(0, 50, 8)      # row 0 overflows upward, row 8 downward
    C[8, :] = -(1 << 31) + rng.integers(0, 50, 8)
    A[0, :], B[:, 0] = A.max(), B.max()                  # D[0, 0] past INT32_MAX
    na, nb = 16 * k // 32 * BITS[at] // 32, 8 * k // 32 * BITS[bt] // 32
    ra = _pack(A, 16 * k // 32, _a_pos, BITS[at])
    rb = _pack(B, 8 * k // 32, _b_pos, BITS[bt])
    rc = np.zeros((32, 4), np.uint32)
    for lane in range(32):
        for i in range(4):
            rc[lane, i] = np.int64(C[(lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)]) & 0xFFFFFFFF
    inp = np.concatenate([ra, rb, rc], 1).reshape(-1)
    assert ra.shape[1] == na and rb.shape[1] == nb
    spec = {"kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "seed": 0,
            "args": [{"name": "inp", "kind": "pointer", "dtype": "u32", "count": inp.size, "init": "zeros"},
                     {"name": "out", "kind": "pointer", "dtype": "u32", "count": 128, "init": "zeros"}]}
    res = run(_kernel(shape, at, bt, na, nb, sat), spec, {"inp": inp})
    assert res.clean, res.reports
    exact = C + A @ B                                        # int64, exact
    want = np.clip(exact, -(1 << 31), (1 << 31) - 1) if sat else (exact + (1 << 31)) % (1 << 32) - (1 << 31)
    out = res.outputs["out"].reshape(32, 4).view(np.int32)
    got = np.zeros((16, 8), np.int64)
    for lane in range(32):
        for i in range(4):
            got[(lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)] = out[lane, i]
    assert np.array_equal(got, want)
    assert (exact > (1 << 31) - 1).any() or (exact < -(1 << 31)).any()     # the case overflows somewhere


INT8_DOT = '''
import triton
import triton.language as tl


@triton.jit
def int8_matmul(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b, out_dtype=tl.int32))
'''


def test_triton_int8_dot_for_sm80_runs_and_matches_numpy(tmp_path):
    pytest.importorskip("triton")
    src = tmp_path / "int8dot.py"
    src.write_text(INT8_DOT)
    root = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "ptx2py.cli", "from-triton", f"{src}::int8_matmul", "--signature", "*i8,*i8,*i32",
           "--constexprs", "BM=32,BN=32,BK=64", "--num-warps", "4", "--target", "sm_80", "--arg", "a_ptr=2048",
           "--arg", "b_ptr=2048", "--arg", "c_ptr=1024:zeros", "--grid", "1,1,1", "-o", str(tmp_path / "k.py")]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env={"PYTHONPATH": str(root),
                                                                                "PATH": "/usr/bin:/bin",
                                                                                "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "k.ptx").read_text()
    assert "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32" in text
    res = run(text, json.loads((tmp_path / "k.json").read_text()))
    assert res.clean, res.reports
    a = res.outputs["a_ptr"].astype(np.int64).reshape(32, 64)
    b = res.outputs["b_ptr"].astype(np.int64).reshape(64, 32)
    assert a.min() < 0 < a.max()
    assert np.array_equal(res.outputs["c_ptr"].reshape(32, 32), a @ b)


# --- wgmma with s8/u8 inputs -------------------------------------------------------------------------------
def _core_matrix_image(mat, lbo=128, sbo=256):
    """Bytes of a K-major operand (rows x 32 one-byte elements) in the canonical layout without
    swizzle (PTX ISA "Shared Memory Matrix Layout"): 8x16-byte core matrices, the next K chunk
    `lbo` bytes on, the next 8 rows `sbo` bytes on."""
    rows, kb = mat.shape
    img = np.zeros(rows // 8 * sbo, np.uint8)
    for r in range(rows):
        for j in range(kb):
            img[(r // 8) * sbo + (j // 16) * lbo + (r % 8) * 16 + j % 16] = np.uint8(int(mat[r, j]) & 0xFF)
    return img


def _wgmma_kernel(at, bt, sat):
    desc_bits = (128 >> 4) << 16 | (256 >> 4) << 32
    return ".version 8.4\n.target sm_90a\n.address_size 64\n" + f""".visible .entry k(.param .u64 ga, .param .u64 gb,
  .param .u64 gc, .param .u64 out)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<20>;
  .shared .align 128 .b8 sa[2048];
  .shared .align 128 .b8 sb[256];
  ld.param.u64 %rd1, [ga];
  ld.param.u64 %rd2, [gb];
  ld.param.u64 %rd3, [gc];
  ld.param.u64 %rd4, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd5, %r1, 16;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd6];
  mov.u32 %r6, sa;
  shl.b32 %r7, %r1, 4;
  add.s32 %r8, %r6, %r7;
  st.shared.v4.u32 [%r8], {{%r2, %r3, %r4, %r5}};
  setp.lt.u32 %p1, %r1, 16;
  add.s64 %rd7, %rd2, %rd5;
  @%p1 ld.global.v4.u32 {{%r2, %r3, %r4, %r5}}, [%rd7];
  mov.u32 %r9, sb;
  add.s32 %r8, %r9, %r7;
  @%p1 st.shared.v4.u32 [%r8], {{%r2, %r3, %r4, %r5}};
  add.s64 %rd8, %rd3, %rd5;
  ld.global.v4.u32 {{%r10, %r11, %r12, %r13}}, [%rd8];
  fence.proxy.async.shared::cta;
  bar.sync 0;
  shr.u32 %r20, %r6, 4;
  cvt.u64.u32 %rd10, %r20;
  or.b64 %rd10, %rd10, {desc_bits};
  shr.u32 %r21, %r9, 4;
  cvt.u64.u32 %rd11, %r21;
  or.b64 %rd11, %rd11, {desc_bits};
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k32{'.satfinite' if sat else ''}.s32.{at}.{bt} {{%r10, %r11, %r12, %r13}},
    %rd10, %rd11, 1;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  add.s64 %rd9, %rd4, %rd5;
  st.global.v4.u32 [%rd9], {{%r10, %r11, %r12, %r13}};
  ret;
}}
"""


@pytest.mark.parametrize("at,bt,sat", [("s8", "s8", False), ("s8", "s8", True), ("u8", "s8", True),
                                       ("u8", "u8", False), ("s8", "u8", True)])
def test_wgmma_with_integer_inputs_is_exact_and_wraps_or_saturates(at, bt, sat):
    rng = np.random.default_rng(len(at + bt) + sat)
    A, B = _values(rng, at, (64, 32)), _values(rng, bt, (8, 32))       # B as [N, K], K-major
    A[0, :], B[0, :] = A.max(), B.max()
    C = rng.integers(-(1 << 31), 1 << 31, (64, 8))
    C[0, :] = (1 << 31) - 1 - rng.integers(0, 50, 8)
    rc = np.zeros((128, 4), np.int64)
    for tid in range(128):
        warp, lane = tid // 32, tid % 32
        for i in range(4):
            rc[tid, i] = C[16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1), 2 * (lane & 3) + (i & 1)]
    inputs = {"ga": _core_matrix_image(A), "gb": _core_matrix_image(B),
              "gc": (rc & 0xFFFFFFFF).astype(np.uint32).view(np.uint8)}
    spec = {"kernel": "k", "grid": [1, 1, 1], "block": [128, 1, 1], "seed": 0,
            "args": [{"name": n, "kind": "pointer", "dtype": "u8", "count": int(v.size), "init": "zeros"}
                     for n, v in inputs.items()] +
                    [{"name": "out", "kind": "pointer", "dtype": "u32", "count": 512, "init": "zeros"}]}
    res = run(_wgmma_kernel(at, bt, sat), spec, inputs)
    assert res.clean, res.reports
    exact = C + A @ B.T
    want = np.clip(exact, -(1 << 31), (1 << 31) - 1) if sat else (exact + (1 << 31)) % (1 << 32) - (1 << 31)
    out = res.outputs["out"].view(np.int32).reshape(128, 4)
    got = np.zeros((64, 8), np.int64)
    for tid in range(128):
        warp, lane = tid // 32, tid % 32
        for i in range(4):
            got[16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1), 2 * (lane & 3) + (i & 1)] = out[tid, i]
    assert (exact[0] > (1 << 31) - 1).any()
    assert np.array_equal(got, want)


# --- tcgen05.mma kind::i8 ---------------------------------------------------------------------------------
SM100 = Path(__file__).resolve().parent.parent / "corpus" / "ptx" / "nvcc" / "tcgen05_sm100.sm_100a.ptx"
F8_IDESC = 135266320        # the kernel's kind::f8f6f4 descriptor: f32 D, e4m3 A and B, N = 64, M = 128


@pytest.mark.parametrize("at,bt", [(1, 1), (0, 1), (0, 0)])       # 0 = u8, 1 = s8 (instruction descriptor)
def test_tcgen05_mma_kind_i8_is_exact(at, bt):
    """The nvcc tmem_roundtrip kernel with its one tcgen05.mma made kind::i8 (descriptor: s32 D,
    A/B u8 or s8): tiles of in[i % 64] / in[i % 32] bytes through 128B-swizzled descriptors, the
    first 8 accumulator columns of each row back through tcgen05.ld."""
    import copy

    side = json.loads((SM100.parent.parent.parent / "launch" / "nvcc" / (SM100.stem + ".json")).read_text())
    spec = copy.deepcopy(next(k for k in side["kernels"] if k["kernel"] == "tmem_roundtrip"))
    spec["seed"] = side["seed"]
    idesc = (F8_IDESC & ~(0x3F << 4)) | 2 << 4 | at << 7 | bt << 10
    text = SM100.read_text()
    assert f"mov.b32 \t%r29, {F8_IDESC};" in text
    text = text.replace(f"mov.b32 \t%r29, {F8_IDESC};", f"mov.b32 \t%r29, {idesc};")
    text = text.replace("tcgen05.mma.cta_group::1.kind::f8f6f4 [%r7]", "tcgen05.mma.cta_group::1.kind::i8 [%r7]")
    res = run(text, spec, filename=SM100.name)
    assert res.clean, res.reports
    x = (res.outputs["in"] & 0xFF).astype(np.int64)
    signed = lambda v, s: np.where(v >= 128, v - 256, v) if s else v  # noqa: E731
    rows, j = np.arange(128)[:, None], np.arange(32)[None, :]
    swz = j ^ ((rows & 7) << 4)                # the kernel's 128B swizzle, as the fp8 test reads it
    a, b = signed(x[swz % 64], at), signed(x[swz[:64] % 32], bt)
    want = (a @ b.T)[:, :8]
    assert np.array_equal(res.outputs["out"].view(np.int32).reshape(128, 8), want)
