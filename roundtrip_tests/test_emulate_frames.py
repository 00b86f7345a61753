"""Local memory as a call stack and generic addresses of every state space: each device function
activation has its own `.local` frame above its caller's, so a generic pointer into the
caller's frame reads and writes the caller's bytes inside the callee (clang -O0 passes `this`
so), a recursive activation keeps its frame across the inner call, and a `cvta.const` address
reads `.const` data. One small PTX kernel per case; out[tid] is compared with numpy."""

import numpy as np
import pytest

from ptx2py import emulate

HEAD = """.version 8.0
.target sm_80
.address_size 64
{funcs}
.visible .entry k(.param .u64 k_out)
{{
	.local .align 8 .b8 __local_depot0[16];
	.reg .b32 %r<16>;
	.reg .b64 %rd<16>;
	.reg .b64 %SP;
	.reg .b64 %SPL;
	mov.u64 %SPL, __local_depot0;
	cvta.local.u64 %SP, %SPL;
	ld.param.u64 %rd1, [k_out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
{body}
	st.global.u32 [%rd3], %r9;
	ret;
}}
"""

# callee with a frame of its own, reading (and writing) through the caller's generic pointer
PEEK = """.func (.param .b32 peek_ret) peek(.param .b64 peek_p)
{
	.local .align 8 .b8 __local_depot1[16];
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	.reg .b64 %SP;
	.reg .b64 %SPL;
	mov.u64 %SPL, __local_depot1;
	cvta.local.u64 %SP, %SPL;
	ld.param.u64 %rd1, [peek_p];
	st.u64 [%SP+0], %rd1;
	st.u32 [%SP+8], 999;
	ld.u64 %rd2, [%SP+0];
	ld.u32 %r1, [%rd2];
	add.s32 %r2, %r1, 1;
	st.u32 [%rd2+4], %r2;
	st.param.b32 [peek_ret], %r1;
	ret;
}"""
CALL_PEEK = """	st.u32 [%SP+0], %r1;
	{
	.param .b64 param0;
	.param .b32 retval0;
	st.param.b64 [param0], %SP;
	call.uni (retval0), peek, (param0);
	ld.param.b32 %r5, [retval0];
	}
	ld.u32 %r6, [%SP+4];
"""

# sum(n) = n + sum(n - 1), n kept in the activation's own frame across the inner call
SUM = """.func (.param .b32 sum_ret) sum(.param .b32 sum_n)
{
	.local .align 4 .b8 __local_depot2[4];
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %SPL;
	mov.u64 %SPL, __local_depot2;
	ld.param.b32 %r1, [sum_n];
	mov.u32 %r4, 0;
	setp.eq.s32 %p1, %r1, 0;
	@%p1 bra $L__done;
	st.local.u32 [%SPL], %r1;
	add.s32 %r2, %r1, -1;
	{
	.param .b32 param0;
	.param .b32 retval0;
	st.param.b32 [param0], %r2;
	call.uni (retval0), sum, (param0);
	ld.param.b32 %r3, [retval0];
	}
	ld.local.u32 %r5, [%SPL];
	add.s32 %r4, %r3, %r5;
$L__done:
	st.param.b32 [sum_ret], %r4;
	ret;
}"""
CALL_SUM = """	and.b32 %r2, %r1, 7;
	{
	.param .b32 param0;
	.param .b32 retval0;
	st.param.b32 [param0], %r2;
	call.uni (retval0), sum, (param0);
	ld.param.b32 %r9, [retval0];
	}
"""

TABLE = ".const .align 4 .u32 table[8] = {3, 1, 4, 1, 5, 9, 2, 6};"
CONST_GENERIC = """	and.b32 %r2, %r1, 7;
	mul.wide.u32 %rd4, %r2, 4;
	mov.u64 %rd5, table;
	cvta.const.u64 %rd6, %rd5;
	add.s64 %rd7, %rd6, %rd4;
	ld.u32 %r9, [%rd7];
"""

t = np.arange(64)
CASES = {
    "callee reads the caller's local through a generic pointer":
        (PEEK, CALL_PEEK + "\tmov.u32 %r9, %r5;", t),
    "callee writes the caller's local through a generic pointer":
        (PEEK, CALL_PEEK + "\tmov.u32 %r9, %r6;", t + 1),
    "a recursive activation keeps its local frame across the inner call":
        (SUM, CALL_SUM, (t & 7) * ((t & 7) + 1) // 2),
    "a cvta.const address reads .const data":
        (TABLE, CONST_GENERIC, np.array([3, 1, 4, 1, 5, 9, 2, 6])[t & 7]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_frames_and_generic_addresses(name):
    funcs, body, want = CASES[name]
    spec = {"kernel": "k", "grid": [1, 1, 1], "block": [64, 1, 1],
            "args": [{"name": "out", "kind": "pointer", "dtype": "u32", "count": 64, "init": "zeros"}]}
    r = emulate.run(HEAD.format(funcs=funcs, body=body), spec, filename="frames.ptx")
    assert r.reports == [], [x.render() for x in r.reports]
    np.testing.assert_array_equal(r.outputs["out"], want)
