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
