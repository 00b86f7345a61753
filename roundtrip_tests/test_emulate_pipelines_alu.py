"""Engine-side operand decoding fixed alongside the pipelines: setp on packed halves (one
predicate per half), mixed-precision add/sub/fma.f32.{f16,bf16} (narrow sources, f32 c), set
with .and/.or/.xor (the combining predicate applied), and the packed types of the numerics
(.f32x2) known to the engine."""

from __future__ import annotations

import numpy as np
import pytest

from ptx2py.emulate.frontend import run

HEAD = ".version 8.6\n.target sm_100a\n.address_size 64\n"


def _one(body: str, regs: str = "") -> np.ndarray:
    text = HEAD + """.visible .entry k(.param .u64 out)
{
  .reg .pred %p<8>;
  .reg .b16 %h<8>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd0, [out];
  cvta.to.global.u64 %rd0, %rd0;
""" + body + """
  st.global.u32 [%rd0], %r9;
  ret;
}
"""
    spec = {"kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "seed": 0,
            "args": [{"name": "out", "kind": "pointer", "dtype": "u32", "count": 1, "init": "zeros"}]}
    res = run(text, spec)
    assert res.clean, res.reports
    return res.outputs["out"]


def test_setp_on_f16x2_gives_one_predicate_per_half():
    # lows: 1.0 < 2.0 (true); highs: 2.0 < 1.0 (false)
    out = _one("  mov.b32 %r1, 0x40003c00;\n  mov.b32 %r2, 0x3c004000;\n"
               "  setp.lt.f16x2 %p1|%p2, %r1, %r2;\n"
               "  selp.u32 %r3, 1, 0, %p1;\n  selp.u32 %r4, 2, 0, %p2;\n  or.b32 %r9, %r3, %r4;\n")
    assert out[0] == 1


def test_setp_f16x2_combined_with_a_predicate_per_half():
    out = _one("  mov.b32 %r1, 0x40003c00;\n  mov.b32 %r2, 0x3c004000;\n  setp.eq.u32 %p3, 0, 0;\n"
               "  setp.lt.or.f16x2 %p1|%p2, %r1, %r2, %p3;\n"
               "  selp.u32 %r3, 1, 0, %p1;\n  selp.u32 %r4, 2, 0, %p2;\n  or.b32 %r9, %r3, %r4;\n")
    assert out[0] == 3                    # both halves OR true


@pytest.mark.parametrize("op,want", [("add", 3.5), ("sub", -0.5)])
def test_mixed_precision_add_sub_read_c_as_f32(op, want):
    # a = 1.5 (f16 0x3e00), c = 2.0 (f32): add -> 3.5; sub -> a - c = -0.5
    out = _one(f"  mov.b16 %h1, 0x3e00;\n  mov.b32 %r1, 0x40000000;\n  {op}.rn.f32.f16 %r9, %h1, %r1;\n")
    assert out.view(np.float32)[0] == want


def test_mixed_precision_fma_bf16():
    # 1.5 * 2.0 + 0.25 with bf16 a, b and f32 c
    out = _one("  mov.b16 %h1, 0x3fc0;\n  mov.b16 %h2, 0x4000;\n  mov.b32 %r1, 0x3e800000;\n"
               "  fma.rn.f32.bf16 %r9, %h1, %h2, %r1;\n")
    assert out.view(np.float32)[0] == 3.25


@pytest.mark.parametrize("combine,c,want", [(".and", 0, 0), (".and", 1, 0xFFFFFFFF), (".or", 0, 0xFFFFFFFF),
                                            (".xor", 1, 0)])
def test_set_applies_its_combining_predicate(combine, c, want):
    out = _one(f"  setp.eq.u32 %p3, {c}, 1;\n  mov.u32 %r1, 1;\n  mov.u32 %r2, 3;\n"
               f"  set.lt{combine}.u32.s32 %r9, %r1, %r2, %p3;\n")
    assert out[0] == want


def test_f32x2_add_is_emulated():
    out = _one("  mov.b64 %rd1, {0x3f800000, 0x40000000};\n  mov.b64 %rd2, {0x40400000, 0x40800000};\n"
               "  add.rn.f32x2 %rd3, %rd1, %rd2;\n  mov.b64 {%r8, %r9}, %rd3;\n")
    assert out.view(np.float32)[0] == 6.0      # high lane: 2 + 4


@pytest.mark.parametrize("mods,want", [(".max", 30.0), (".min", -31.0), (".max.abs", 31.0), (".min.abs", 0.0)])
def test_redux_sync_f32_min_max(mods, want):
    # lane i holds (i even ? i : -i) as f32
    out = _one("  mov.u32 %r1, %laneid;\n  and.b32 %r2, %r1, 1;\n  cvt.rn.f32.u32 %r3, %r1;\n"
               "  neg.f32 %r4, %r3;\n  setp.eq.u32 %p1, %r2, 0;\n  selp.b32 %r5, %r3, %r4, %p1;\n"
               f"  redux.sync{mods}.f32 %r9, %r5, -1;\n")
    assert out.view(np.float32)[0] == want
