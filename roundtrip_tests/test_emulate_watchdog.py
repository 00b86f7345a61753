"""The engine's watchdog (emulate/watchdog.py): a kernel that never ends stops with exit 1 and a
located report naming its loop (back edge and head; Python lines for DSL input) or its call
chain, instead of hanging; a long kernel that does end is not cut short."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ptx2py import emulate
from ptx2py.cli import ptx2py_main

ROOT = Path(__file__).resolve().parent.parent
HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
ENDLESS_LOOP = HEAD + """.visible .entry spin(.param .u64 spin_param_0)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [spin_param_0];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, 0;
$L__loop:
	add.s32 %r2, %r2, 1;
	setp.ne.s32 %p1, %r2, %r2;
	@!%p1 bra $L__loop;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r2;
	ret;
}
"""
LOOP_BACK_EDGE, LOOP_HEAD = 16, 14          # the lines of `@!%p1 bra $L__loop;` and of its first instruction
FINITE_LOOP = ENDLESS_LOOP.replace("setp.ne.s32 %p1, %r2, %r2;", "setp.ge.s32 %p1, %r2, 3000;")
ENDLESS_RECURSION = HEAD + """.func (.param .b32 ret0) down(.param .b32 n)
{
	.reg .b32 %r<4>;
	ld.param.b32 %r1, [n];
	add.s32 %r2, %r1, 1;
	{
	.param .b32 a0;
	.param .b32 r0;
	st.param.b32 [a0], %r2;
	call (r0), down, (a0);
	ld.param.b32 %r3, [r0];
	}
	st.param.b32 [ret0], %r3;
	ret;
}
.visible .entry spin(.param .u64 spin_param_0)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [spin_param_0];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	{
	.param .b32 a0;
	.param .b32 r0;
	st.param.b32 [a0], %r1;
	call (r0), down, (a0);
	ld.param.b32 %r2, [r0];
	}
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r2;
	ret;
}
"""
RECURSIVE_CALL, ENTRY_CALL = 13, 30


def launch(blocks: int = 2, threads: int = 128) -> dict:
    return {"kernel": "spin", "grid": [blocks, 1, 1], "block": [threads, 1, 1],
            "args": [{"name": "out", "kind": "pointer", "dtype": "u32", "count": blocks * threads, "init": "zeros"}]}


def files(tmp_path, text: str, blocks: int = 2) -> tuple[Path, Path]:
    (tmp_path / "k.ptx").write_text(text)
    (tmp_path / "k.json").write_text(json.dumps(launch(blocks)))
    return tmp_path / "k.ptx", tmp_path / "k.json"


def test_an_endless_loop_stops_with_its_back_edge_and_head(tmp_path, capsys):
    ptx, side = files(tmp_path, ENDLESS_LOOP)
    assert ptx2py_main(["run", str(ptx), "--launch", str(side), "--max-steps", "20000"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{ptx}:{LOOP_BACK_EDGE}:2: error: trap: step limit of 20,000 warp-instructions")
    assert f"back edge `@!%p1 bra $L__loop;` is at {ptx}:{LOOP_BACK_EDGE}:2" in err
    assert f"its head at {ptx}:{LOOP_HEAD}:2" in err and "Traceback" not in err


def test_an_endless_recursion_stops_with_its_call_chain(tmp_path, capsys):
    ptx, side = files(tmp_path, ENDLESS_RECURSION)
    assert ptx2py_main(["run", str(ptx), "--launch", str(side)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{ptx}:{RECURSIVE_CALL}:2: error: trap: call depth limit of 1000 reached")
    assert f"spin -> down (called at {ptx}:{ENTRY_CALL}:2) -> down (called at {ptx}:{RECURSIVE_CALL}:2 x1000)" in err


def test_the_loop_of_a_dsl_module_is_named_by_its_python_lines(tmp_path, capsys):
    ptx, side = files(tmp_path, ENDLESS_LOOP)
    assert ptx2py_main([str(ptx), "-o", str(tmp_path / "k.py")]) == 0
    source = (tmp_path / "k.py").read_text().splitlines()
    branch = next(i for i, line in enumerate(source, 1) if "ptx.bra(" in line)
    capsys.readouterr()
    assert ptx2py_main(["run", str(tmp_path / "k.py"), "--launch", str(side), "--max-steps", "20000"]) == 1
    err = capsys.readouterr().err
    assert f"is at {tmp_path / 'k.py'}:{branch} (PTX line {LOOP_BACK_EDGE})" in err


def test_the_budget_is_per_block_and_a_loop_that_ends_is_not_cut():
    # each block runs 4 warps x 3000 x 3 = 36,000 warp-instructions: more than QUANTUM, less than
    # the budget per block, less than the launch's total
    result = emulate.run(FINITE_LOOP, launch(blocks=3), max_steps=40_000)
    assert result.clean, [r.render() for r in result.reports]
    assert result.stats["warp_instructions"] > 2 * 40_000
    assert (result.outputs["out"][:128] == 3000).all()          # every block stores at its %tid.x
    cut = emulate.run(FINITE_LOOP, launch(blocks=1), max_steps=30_000)
    assert [r.kind for r in cut.reports] == ["trap"] and "step limit of 30,000" in cut.reports[0].message


def test_verify_and_run_take_the_step_budget():
    for command in ("run", "verify"):
        proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), command, "--help"], capture_output=True,
                              text=True, cwd=ROOT)
        assert proc.returncode == 0 and "--max-steps N" in proc.stdout and "1,000,000" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("text", [ENDLESS_LOOP, ENDLESS_RECURSION], ids=["loop", "recursion"])
def test_with_the_default_budget_a_hang_ends_within_30_s_of_cpu(tmp_path, text):
    ptx, side = files(tmp_path, text, blocks=64)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), "run", str(ptx), "--launch", str(side)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert proc.returncode == 1 and ": error: trap: " in proc.stderr
    assert cpu < 30, f"{cpu:.1f} s of CPU"
