"""Operand decoding through PTX beyond the arithmetic forms: loads that sign- or zero-extend into
wider registers, stores that truncate wider registers, vector loads, register vectors packed and
unpacked by mov, cvt from a wider register, 64-bit immediates, negative address offsets. Each
case is a few PTX lines writing 8-byte slots; expected values come from the PTX ISA's rules
("Operand Size Exceeding Instruction-Type Size", ld/st/mov/cvt) applied here with Python integers
to the input bytes."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from ptx2py.emulate.frontend import run

IN = bytes((0x80 + 37 * i) & 0xFF for i in range(64))       # every byte with its high bit varying


def u(off, n):
    return int.from_bytes(IN[off:off + n], "little")


def s(off, n):
    v = u(off, n)
    return v - (1 << 8 * n) if v >> (8 * n - 1) else v


M64 = (1 << 64) - 1
CASES = [  # (name, PTX lines using %rd1 = input, storing to slot k as [%rd2+8k], expected slot values)
    ("ld.s8 into a 32-bit register sign-extends", "ld.global.s8 %r1, [%rd1+0];\n st.global.b32 [%rd2], %r1;",
     [s(0, 1) & 0xFFFFFFFF]),
    ("ld.u8 into a 32-bit register zero-extends", "ld.global.u8 %r1, [%rd1+0];\n st.global.b32 [%rd2], %r1;",
     [u(0, 1)]),
    ("ld.s16 into a 64-bit register sign-extends", "ld.global.s16 %rd3, [%rd1+2];\n st.global.b64 [%rd2], %rd3;",
     [s(2, 2) & M64]),
    ("ld.s32 into a 64-bit register sign-extends", "ld.global.s32 %rd3, [%rd1+4];\n st.global.b64 [%rd2], %rd3;",
     [s(4, 4) & M64]),
    ("ld.u32 into a 64-bit register zero-extends", "ld.global.u32 %rd3, [%rd1+4];\n st.global.b64 [%rd2], %rd3;",
     [u(4, 4)]),
    ("ld.s8 into a 16-bit register sign-extends", "ld.global.s8 %h1, [%rd1+1];\n st.global.b16 [%rd2], %h1;",
     [s(1, 1) & 0xFFFF]),
    ("ld.v2.s16 sign-extends each element",
     "ld.global.v2.s16 {%r1, %r2}, [%rd1+8];\n st.global.b32 [%rd2], %r1;\n st.global.b32 [%rd2+8], %r2;",
     [s(8, 2) & 0xFFFFFFFF, s(10, 2) & 0xFFFFFFFF]),
    ("ld.v4.u8 zero-extends each element",
     "ld.global.v4.u8 {%r1, %r2, %r3, %r4}, [%rd1+12];\n st.global.b32 [%rd2], %r1;\n"
     " st.global.b32 [%rd2+8], %r2;\n st.global.b32 [%rd2+16], %r3;\n st.global.b32 [%rd2+24], %r4;",
     [u(12 + i, 1) for i in range(4)]),
    ("ld.v2.u64", "ld.global.v2.u64 {%rd3, %rd4}, [%rd1+16];\n st.global.b64 [%rd2], %rd3;\n"
     " st.global.b64 [%rd2+8], %rd4;", [u(16, 8), u(24, 8)]),
    ("st.u8 of a 32-bit register stores its low byte",
     "mov.u32 %r1, 0x1234ABCD;\n st.global.u8 [%rd2], %r1;", [0xCD]),
    ("st.b16 of a 64-bit register stores its low half",
     "mov.u64 %rd3, 0x1122334455667788;\n st.global.b16 [%rd2], %rd3;", [0x7788]),
    ("mov.b64 packs {lo, hi}", "mov.u32 %r1, 0xAABBCCDD;\n mov.u32 %r2, 0x11223344;\n"
     " mov.b64 %rd3, {%r1, %r2};\n st.global.b64 [%rd2], %rd3;", [0x11223344AABBCCDD]),
    ("mov.b64 unpacks into {lo, hi}", "ld.global.b64 %rd3, [%rd1+32];\n mov.b64 {%r1, %r2}, %rd3;\n"
     " st.global.b32 [%rd2], %r1;\n st.global.b32 [%rd2+8], %r2;", [u(32, 4), u(36, 4)]),
    ("mov.b32 packs two 16-bit registers", "ld.global.b16 %h1, [%rd1+40];\n ld.global.b16 %h2, [%rd1+42];\n"
     " mov.b32 %r1, {%h2, %h1};\n st.global.b32 [%rd2], %r1;", [u(42, 2) | u(40, 2) << 16]),
    ("cvt.s32.s8 reads the low byte of a 32-bit register",
     "mov.u32 %r1, 0x1FF80;\n cvt.s32.s8 %r2, %r1;\n st.global.b32 [%rd2], %r2;", [0xFFFFFF80]),
    ("cvt.u32.u8 reads the low byte of a 32-bit register",
     "mov.u32 %r1, 0x1FF80;\n cvt.u32.u8 %r2, %r1;\n st.global.b32 [%rd2], %r2;", [0x80]),
    ("cvt.s64.s16 reads the low half of a 32-bit register",
     "mov.u32 %r1, 0x18001;\n cvt.s64.s16 %rd3, %r1;\n st.global.b64 [%rd2], %rd3;", [(-0x7FFF) & M64]),
    ("mov.u64 of -1 is all ones", "mov.u64 %rd3, -1;\n st.global.b64 [%rd2], %rd3;", [M64]),
    ("mov.u64 of 0x80000000 is not sign-extended", "mov.u64 %rd3, 0x80000000;\n st.global.b64 [%rd2], %rd3;",
     [0x80000000]),
    ("mov.s64 of -2147483648", "mov.s64 %rd3, -2147483648;\n st.global.b64 [%rd2], %rd3;", [(-(1 << 31)) & M64]),
    ("mov.b16 of 0xFFFF", "mov.b16 %h1, 0xFFFF;\n st.global.b16 [%rd2], %h1;", [0xFFFF]),
    ("a negative address offset", "add.s64 %rd3, %rd1, 48;\n ld.global.u32 %r1, [%rd3+-8];\n"
     " st.global.b32 [%rd2], %r1;", [u(40, 4)]),
    ("shl.b64 by a 32-bit register amount", "mov.u64 %rd3, 3;\n mov.u32 %r1, 62;\n shl.b64 %rd4, %rd3, %r1;\n"
     " st.global.b64 [%rd2], %rd4;", [(3 << 62) & M64]),
    ("a 16-bit immediate written negative", "mov.b16 %h1, 5;\n add.s16 %h2, %h1, -7;\n"
     " st.global.b16 [%rd2], %h2;", [0xFFFE]),
]


def _kernel(body: str) -> str:
    return f""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 inp, .param .u64 out)
{{
  .reg .b16 %h<8>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [inp];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  {body}
  ret;
}}
"""


def _spec():
    return {"kernel": "k", "grid": [1, 1, 1], "block": [1, 1, 1], "seed": 0,
            "args": [{"name": "inp", "kind": "pointer", "dtype": "u8", "count": 64, "init": "zeros"},
                     {"name": "out", "kind": "pointer", "dtype": "u64", "count": 4, "init": "zeros"}]}


@pytest.mark.parametrize("name,body,want", CASES, ids=[c[0] for c in CASES])
def test_operand_decoding_through_ptx(name, body, want):
    res = run(_kernel(body), _spec(), {"inp": np.frombuffer(IN, np.uint8)})
    assert res.clean, res.reports
    assert [int(v) for v in res.outputs["out"][:len(want)]] == want


@pytest.mark.slow
def test_every_decoding_kernel_assembles_with_ptxas(tmp_path):
    from ptx2py.verify.tools import require_ptxas

    tool, _ = require_ptxas((8, 0))
    rejected = []
    for name, body, _ in CASES:
        src = tmp_path / "k.ptx"
        src.write_text(_kernel(body))
        r = subprocess.run([tool.path, "-arch=sm_80", str(src), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True)
        if r.returncode:
            rejected.append(f"{name}: {r.stderr.strip()[:200]}")
    assert not rejected, "\n".join(rejected)
