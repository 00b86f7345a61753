"""The CPU engine's execution model: SIMT divergence and reconvergence, calls, state spaces,
warp ops, atomics in a selectable order, cp.async landing at its wait, schedules, and the
located refusal of what is not emulated. Kernels are small PTX written for each behaviour."""

import numpy as np
import pytest

from ptx2py import emulate

HEAD = """.version 8.0
.target sm_80
.address_size 64
{extra}
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{{
	.reg .pred %p<8>;
	.reg .b32 %r<32>;
	.reg .b64 %rd<16>;
	.reg .f32 %f<8>;
	.shared .align 16 .b8 smem[1024];
	.local .align 4 .b8 depot[16];
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u64 %rd2, [k_param_1];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
{body}
	ret;
}}
"""


def launch(block=64, grid=1, out=64, inp=64, init="randint"):
    return {"kernel": "k", "grid": [grid, 1, 1], "block": [block, 1, 1], "shared": 0,
            "args": [{"name": "out", "kind": "pointer", "dtype": "u32", "count": out, "init": "zeros"},
                     {"name": "inp", "kind": "pointer", "dtype": "u32", "count": inp, "init": init}]}


def run(body, extra="", clean=True, **kw):
    opts = {k: kw.pop(k) for k in ("schedule", "sanitize") if k in kw}
    result = emulate.run(HEAD.format(body=body, extra=extra), launch(**kw), filename="k.ptx", **opts)
    if clean:
        assert result.reports == [], [r.render() for r in result.reports]
    return result


def test_if_else_reconverges():
    r = run("""	setp.lt.u32 %p1, %r1, 10;
	@%p1 bra $L__then;
	add.s32 %r2, %r1, 100;
	bra.uni $L__join;
$L__then:
	shl.b32 %r2, %r1, 1;
$L__join:
	add.s32 %r2, %r2, 1;
	st.global.u32 [%rd4], %r2;""")
    t = np.arange(64)
    assert (r.outputs["out"] == np.where(t < 10, 2 * t, t + 100) + 1).all()


def test_loop_with_per_lane_trip_counts():
    r = run("""	mov.u32 %r2, 0;
	mov.u32 %r3, 0;
$L__loop:
	setp.gt.u32 %p1, %r3, %r1;
	@%p1 bra $L__done;
	add.s32 %r2, %r2, %r3;
	add.s32 %r3, %r3, 1;
	bra.uni $L__loop;
$L__done:
	st.global.u32 [%rd4], %r2;""")
    t = np.arange(64)
    assert (r.outputs["out"] == t * (t + 1) // 2).all()


def test_call_with_params_and_return():
    extra = """.func (.param .b32 f_ret) f(.param .b32 f_a, .param .b32 f_b)
{
	.reg .b32 %r<4>;
	ld.param.b32 %r1, [f_a];
	ld.param.b32 %r2, [f_b];
	mad.lo.s32 %r3, %r1, %r2, 7;
	st.param.b32 [f_ret], %r3;
	ret;
}"""
    r = run("""	{
	.param .b32 param0;
	.param .b32 param1;
	.param .b32 retval0;
	st.param.b32 [param0], %r1;
	st.param.b32 [param1], 3;
	call.uni (retval0), f, (param0, param1);
	ld.param.b32 %r2, [retval0];
	}
	st.global.u32 [%rd4], %r2;""", extra=extra)
    assert (r.outputs["out"] == np.arange(64) * 3 + 7).all()


def test_divergent_return_from_device_function():
    extra = """.func (.param .b32 g_ret) g(.param .b32 g_a)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	ld.param.b32 %r1, [g_a];
	st.param.b32 [g_ret], 1;
	setp.lt.u32 %p1, %r1, 5;
	@%p1 ret;
	st.param.b32 [g_ret], 2;
	ret;
}"""
    r = run("""	{
	.param .b32 param0;
	.param .b32 retval0;
	st.param.b32 [param0], %r1;
	call (retval0), g, (param0);
	ld.param.b32 %r2, [retval0];
	}
	st.global.u32 [%rd4], %r2;""", extra=extra)
    assert (r.outputs["out"] == np.where(np.arange(64) < 5, 1, 2)).all()


def test_local_generic_and_shared_addressing():
    r = run("""	mov.u64 %rd6, depot;
	st.local.u32 [%rd6+4], %r1;
	cvta.local.u64 %rd7, %rd6;
	ld.u32 %r2, [%rd7+4];
	mov.u32 %r3, smem;
	shl.b32 %r4, %r1, 2;
	add.s32 %r5, %r3, %r4;
	cvt.u64.u32 %rd8, %r5;
	cvta.shared.u64 %rd9, %rd8;
	st.u32 [%rd9], %r2;
	bar.sync 0;
	ld.shared.u32 %r6, [%r5];
	add.s32 %r6, %r6, %r6;
	st.global.u32 [%rd4], %r6;""")
    assert (r.outputs["out"] == 2 * np.arange(64)).all()


def test_one_access_whose_lanes_span_spaces_and_buffers():
    """Even lanes read their local word through a generic address, odd lanes inp[tid] (global);
    then even lanes read inp and odd lanes out (two buffers in one ld.global)."""
    r = run("""	mov.u64 %rd6, depot;
	st.local.u32 [%rd6+4], %r1;
	cvta.local.u64 %rd7, %rd6;
	add.s64 %rd7, %rd7, 4;
	and.b32 %r2, %r1, 1;
	setp.eq.u32 %p1, %r2, 0;
	selp.b64 %rd8, %rd7, %rd5, %p1;
	ld.u32 %r3, [%rd8];
	selp.b64 %rd9, %rd5, %rd4, %p1;
	ld.global.u32 %r4, [%rd9];
	add.s32 %r5, %r3, %r4;
	st.global.u32 [%rd4], %r5;""")
    tid = np.arange(64, dtype=np.uint32)
    inp = r.outputs["inp"].astype(np.uint32)
    even = tid % 2 == 0
    assert (r.outputs["out"] == np.where(even, tid + inp, inp)).all()


def test_callee_writes_through_a_generic_pointer_to_the_callers_local_array():
    """nvcc -G passes fragments and arrays by pointer to the caller's stack frame: the callee,
    with locals of its own, must write the caller's memory (one local address space for every
    frame, as a thread's local memory is on the GPU)."""
    extra = """.func h(.param .b64 h_p, .param .b32 h_v)
{
	.local .align 4 .b8 own[8];
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	mov.u64 %rd3, own;
	st.local.u32 [%rd3], 99;
	ld.param.u64 %rd1, [h_p];
	ld.param.b32 %r1, [h_v];
	st.u32 [%rd1+8], %r1;
	ret;
}"""
    r = run("""	mov.u64 %rd6, depot;
	st.local.u32 [%rd6], 5;
	cvta.local.u64 %rd7, %rd6;
	{
	.param .b64 param0;
	.param .b32 param1;
	st.param.b64 [param0], %rd7;
	st.param.b32 [param1], %r1;
	call.uni h, (param0, param1);
	}
	ld.local.u32 %r2, [%rd6+8];
	ld.local.u32 %r3, [%rd6];
	add.s32 %r2, %r2, %r3;
	st.global.u32 [%rd4], %r2;""", extra=extra)
    assert (r.outputs["out"] == np.arange(64) + 5).all()


def test_vote_ballot_and_shfl_in_a_warp():
    r = run("""	and.b32 %r2, %r1, 1;
	setp.eq.u32 %p1, %r2, 1;
	vote.sync.ballot.b32 %r3, %p1, 0xffffffff;
	shfl.sync.idx.b32 %r4, %r1, 3, 31, 0xffffffff;
	add.s32 %r5, %r3, %r4;
	st.global.u32 [%rd4], %r5;""", block=32, out=32)
    assert (r.outputs["out"] == 0xAAAAAAAA + 3).all()


def test_atomic_add_counts_every_thread_and_returns_distinct_old_values():
    r = run("""	atom.global.add.u32 %r2, [%rd1+256], 1;
	st.global.u32 [%rd4], %r2;""", block=64, out=65)
    assert r.outputs["out"][64] == 64
    assert sorted(r.outputs["out"][:64]) == list(range(64))


@pytest.mark.parametrize("schedule,winner", [("inorder", 63), ("reverse", 0)])
def test_atomic_exchange_order_follows_the_schedule(schedule, winner):
    r = run("""	atom.global.exch.b32 %r2, [%rd1+256], %r1;""", block=64, out=65, schedule=schedule)
    assert r.outputs["out"][64] == winner


def test_cp_async_lands_at_its_wait_not_before():
    body = """	shl.b32 %r2, %r1, 2;
	mov.u32 %r3, smem;
	add.s32 %r4, %r3, %r2;
	cp.async.ca.shared.global [%r4], [%rd5], 4;
	cp.async.commit_group;
	{wait}
	bar.sync 0;
	ld.shared.u32 %r5, [%r4];
	st.global.u32 [%rd4], %r5;"""
    good = run(body.format(wait="cp.async.wait_group 0;"), block=32, out=32)
    inp = np.random.default_rng(0)
    bad = run(body.format(wait=""), block=32, out=32, clean=False)
    assert (good.outputs["out"] == good.outputs["inp"][:32]).all() and good.outputs["inp"][:32].any()
    assert (bad.outputs["out"] == 0).all()                 # the copy had not landed: old contents
    assert {r.kind for r in bad.reports} >= {"async-read"}
    del inp


def test_schedule_orders_warps():
    body = """	st.global.u32 [%rd1+256], %r1;"""
    first = run(body, block=64, out=65, schedule="inorder").outputs["out"][64]
    last = run(body, block=64, out=65, schedule="reverse").outputs["out"][64]
    assert first == 63 and last == 31          # the last warp to run writes last (lane 31 of warp 0)


def test_bar_red_popc_counts_predicates_across_warps():
    r = run("""	setp.lt.u32 %p1, %r1, 40;
	bar.red.popc.u32 %r2, 0, %p1;
	st.global.u32 [%rd4], %r2;""")
    assert (r.outputs["out"] == 40).all()


def test_special_registers_of_a_2d_block():
    src = HEAD.format(extra="", body="""	mov.u32 %r2, %tid.y;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %laneid;
	mov.u32 %r5, %warpid;
	mad.lo.s32 %r6, %r2, %r3, %r1;
	mul.wide.u32 %rd6, %r6, 4;
	add.s64 %rd7, %rd1, %rd6;
	shl.b32 %r7, %r5, 8;
	add.s32 %r8, %r7, %r4;
	st.global.u32 [%rd7], %r8;""")
    spec = launch(out=64)
    spec["block"] = [16, 4, 1]
    out = emulate.run(src, spec).outputs["out"]
    lin = np.arange(64)
    assert (out == (lin // 32) * 256 + lin % 32).all()


def test_unemulated_instruction_is_a_located_error():
    with pytest.raises(emulate.NotEmulated) as e:
        run("""	brkpt;""")
    assert str(e.value).startswith("k.ptx:") and "error: not emulated: brkpt" in str(e.value)
    line = int(str(e.value).split(":")[1])
    assert HEAD.format(body="\tbrkpt;", extra="").splitlines()[line - 1].strip() == "brkpt;"


def test_brx_idx_jump_table_diverges_and_reconverges():
    r = run("""	and.b32 %r2, %r1, 3;
$L__table:
	.branchtargets $L__c0, $L__c1, $L__c2, $L__c3;
	brx.idx %r2, $L__table;
$L__c0:
	mov.u32 %r3, 10;
	bra.uni $L__join;
$L__c1:
	mov.u32 %r3, 11;
	bra.uni $L__join;
$L__c2:
	mov.u32 %r3, 12;
	bra.uni $L__join;
$L__c3:
	mov.u32 %r3, 13;
$L__join:
	add.s32 %r3, %r3, %r1;
	st.global.u32 [%rd4], %r3;""")
    t = np.arange(64)
    assert (r.outputs["out"] == 10 + t % 4 + t).all()


def test_early_exit_lanes_do_not_block_a_later_barrier():
    r = run("""	setp.ge.u32 %p1, %r1, 40;
	@%p1 exit;
	st.shared.u32 [smem], %r1;
	bar.sync 0;
	st.global.u32 [%rd4], 7;""", clean=False)
    assert (r.outputs["out"][:40] == 7).all() and (r.outputs["out"][40:] == 0).all()
    assert "deadlock" not in {x.kind for x in r.reports}


def test_isspacep_tells_windows_apart():
    r = run("""	mov.u32 %r2, smem;
	cvt.u64.u32 %rd6, %r2;
	cvta.shared.u64 %rd7, %rd6;
	isspacep.shared %p1, %rd7;
	isspacep.global %p2, %rd1;
	isspacep.shared %p3, %rd1;
	selp.u32 %r3, 1, 0, %p1;
	selp.u32 %r4, 2, 0, %p2;
	selp.u32 %r5, 4, 0, %p3;
	add.s32 %r6, %r3, %r4;
	add.s32 %r6, %r6, %r5;
	st.global.u32 [%rd4], %r6;""")
    assert (r.outputs["out"] == 3).all()


# CTA 1 sets a flag in inp[0] that CTA 0 spins on: one CTA at a time, the in-order schedule never
# lets CTA 1 run (the step limit ends the run); two resident CTAs interleave and both finish.
SPIN_ON_OTHER_CTA = """
	mov.u32 %r2, %ctaid.x;
	setp.eq.u32 %p1, %r2, 1;
	@%p1 bra $L__set;
$L__spin:
	ld.volatile.global.u32 %r3, [%rd2];
	setp.ne.u32 %p2, %r3, 77;
	@%p2 bra $L__spin;
	st.global.u32 [%rd4], %r3;
	bra.uni $L__end;
$L__set:
	st.volatile.global.u32 [%rd2], 77;
$L__end:
"""


def _spin(**kw):
    return emulate.run(HEAD.format(body=SPIN_ON_OTHER_CTA, extra=""),
                       launch(block=32, grid=2, out=32, inp=32, init="zeros"), filename="k.ptx",
                       max_steps=20_000, **kw)


def test_ctas_run_one_at_a_time_by_default():
    result = _spin()
    assert [r.kind for r in result.reports] == ["trap"] and "step limit" in result.reports[0].message


@pytest.mark.parametrize("schedule", ["inorder", "reverse", "random:3"])
def test_resident_ctas_interleave_so_a_cta_can_wait_for_another(schedule):
    result = _spin(resident_ctas=2, schedule=schedule)
    assert result.reports == [], [r.render() for r in result.reports]
    assert (result.outputs["out"] == 77).all()


RET_FUNCS = """
.func (.param .b32 func_retval0) wide(.param .b32 wide_param_0)
{
	.reg .b32 %r<4>;
	ld.param.b32 %r1, [wide_param_0];
	add.s32 %r2, %r1, 100000;
	st.param.b32 [func_retval0+0], %r2;
	ret;
}
.func (.param .b16 func_retval0) narrow(.param .b32 narrow_param_0)
{
	.reg .b16 %h<2>;
	.reg .b32 %r<2>;
	ld.param.b32 %r1, [narrow_param_0];
	cvt.u16.u32 %h1, %r1;
	st.param.b16 [func_retval0+0], %h1;
	ret;
}
"""

# each call's { } block declares its own retval0, 4 bytes then 2 (as nvcc -G writes them)
TWO_RETVAL_SIZES = """
	{
	.param .b32 param0;
	st.param.b32 [param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), wide, (param0);
	ld.param.b32 %r2, [retval0+0];
	}
	{
	.param .b32 param0;
	st.param.b32 [param0+0], %r1;
	.param .b16 retval0;
	call.uni (retval0), narrow, (param0);
	ld.param.b16 %rs1, [retval0+0];
	}
	cvt.u32.u16 %r3, %rs1;
	add.s32 %r4, %r2, %r3;
	st.global.u32 [%rd4], %r4;
"""


def test_call_blocks_may_declare_one_param_name_with_different_sizes():
    body = "\t.reg .b16 %rs<2>;\n" + TWO_RETVAL_SIZES
    out = run(body, extra=RET_FUNCS, block=32, out=32, inp=32).outputs["out"]
    assert list(out) == [2 * t + 100000 for t in range(32)]


def test_single_window_names_a_space_only_when_every_address_is_in_it():
    """memory.single_window (the shortcut of a generic access) against the per-address window
    codes, on addresses at and around every window edge and the const base."""
    from ptx2py.emulate import memory as M

    names = np.array(M.WINDOWS + ("const",), dtype=object)
    edges = [0, 5, M.GLOBAL_BASE, M.CONST_BASE - 1, M.CONST_BASE, M.CONST_BASE + 7, 2 ** 64 - 1]
    for base in (M.SHARED_WINDOW, M.LOCAL_WINDOW, M.PARAM_WINDOW):
        edges += [base - 1, base, base + 1, base + M.WINDOW_SIZE - 1, base + M.WINDOW_SIZE]
    edges = np.array(edges, np.uint64)
    rng = np.random.default_rng(3)
    named = 0
    for _ in range(3000):
        a = rng.choice(edges, int(rng.integers(1, 5)))
        codes = M.window_codes(a)
        codes[(codes == 0) & (a >= np.uint64(M.CONST_BASE))] = len(M.WINDOWS)
        spaces = set(names[codes])
        got = M.single_window(a)
        assert got is None or spaces == {got}
        named += got is not None
    assert named > 300                   # (None only sends an access down the general split)
