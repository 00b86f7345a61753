"""Registers named along the data flow (sugar/flownames.py): an address into a named base, what
is loaded from it, a comparison of named values, a running value and a loop's counter, a shuffle's
constant operands. Each name is renamed by hand and the PTX must stay byte-identical (the oracle
is the PTX text itself), and no reference to a named register is left numbered."""

from __future__ import annotations

import re

import pytest
from test_sugar_regnames import _rename

import ptx2py
from ptx2py import transpile

# an nvcc-style kernel: a strided sum over x, a warp shuffle, stores from lane 0 (the sum, and the
# thread's global index blockIdx.x * blockDim.x + threadIdx.x)
PTX = "\n".join([
    ".version 8.0", ".target sm_80", ".address_size 64", "", "\t// .globl\tk", ".visible .entry k(",
    "\t.param .u64 k_param_0,", "\t.param .u64 k_param_1,", "\t.param .u32 k_param_2", ")", "{",
    "\t.reg .pred \t%p<5>;", "\t.reg .b32 \t%r<14>;", "\t.reg .f32 \t%f<6>;", "\t.reg .b64 \t%rd<9>;", "",
    "\tld.param.u64 \t%rd1, [k_param_0];", "\tld.param.u64 \t%rd2, [k_param_1];",
    "\tld.param.u32 \t%r1, [k_param_2];", "\tcvta.to.global.u64 \t%rd3, %rd1;", "\tmov.u32 \t%r2, %tid.x;",
    "\tmul.wide.u32 \t%rd4, %r2, 4;", "\tadd.s64 \t%rd5, %rd3, %rd4;", "\tmov.f32 \t%f1, 0f00000000;",
    "\tmov.u32 \t%r3, 0;", "$L__BB0_1:", "\tld.global.f32 \t%f2, [%rd5];", "\tadd.f32 \t%f1, %f1, %f2;",
    "\tadd.s64 \t%rd5, %rd5, 512;", "\tadd.s32 \t%r3, %r3, 1;", "\tsetp.lt.s32 \t%p1, %r3, %r1;",
    "\t@%p1 bra \t$L__BB0_1;", "\tmov.b32 \t%r4, %f1;", "\tmov.u32 \t%r5, 31;", "\tmov.u32 \t%r6, 16;",
    "\tmov.u32 \t%r7, -1;", "\tshfl.sync.down.b32 \t%r8|%p2, %r4, %r6, %r5, %r7;", "\tmov.b32 \t%f3, %r8;",
    "\tadd.f32 \t%f4, %f1, %f3;", "\tadd.s64 \t%rd6, %rd3, 8;", "\tld.global.u64 \t%rd6, [%rd6];",
    "\tsetp.ne.s32 \t%p3, %r2, 0;", "\t@%p3 bra \t$L__BB0_3;", "\tcvta.to.global.u64 \t%rd7, %rd2;",
    "\tst.global.f32 \t[%rd7], %f4;", "\tst.global.u64 \t[%rd7+8], %rd6;", "\tmov.u32 \t%r10, %ctaid.x;",
    "\tmov.u32 \t%r11, %ntid.x;", "\tmad.lo.s32 \t%r12, %r10, %r11, %r2;",
    "\tst.global.u32 \t[%rd7+16], %r12;", "$L__BB0_3:", "\tret;", "", "}", ""])


@pytest.fixture(scope="module")
def kernel():
    return ptx2py.ptx_to_python(PTX, sugar=True)


# role -> (its name, the register it names)
ROLES = {
    "address into a parameter's buffer, bumped in the loop": ("param_0_ptr", "rd[5]"),
    "value loaded from that address": ("param_0_val", "f[2]"),
    "running sum": ("acc", "f[1]"),
    "loop counter": ("iv", "r[3]"),
    "comparison of named values (the loop's test)": ("iv_lt_param_2", "p[1]"),
    "comparison with a constant": ("tid_x_ne_0", "p[3]"),
    "shuffle lane offset": ("delta16", "r[6]"),
    "shuffle clamp": ("clamp", "r[5]"),
    "shuffle member mask": ("mask", "r[7]"),
    "value stored to a parameter's buffer": ("param_1_val", "f[4]"),
    "global thread index": ("gid_x", "r[12]"),
}


def test_the_kernel_round_trips(kernel):
    assert transpile.python_to_ptx(kernel) == PTX


@pytest.mark.parametrize("role", ROLES)
def test_a_flow_role_is_written_in_every_reference_and_renames_freely(kernel, role):
    name, reg = ROLES[role]
    assert f"{name} := {reg}" in kernel, (role, kernel)
    assert len(re.findall(rf"(?<![\w.]){re.escape(reg)}", kernel)) == 1, f"{reg} is still numbered outside its binding"
    assert len(re.findall(rf"(?<![\w.]){re.escape(name)}(?!\w)", kernel)) >= 2, "the name is used after its binding"
    renamed = _rename(kernel, name, "edited_" + name)
    assert renamed != kernel
    assert transpile.python_to_ptx(renamed) == PTX


def test_a_register_whose_definitions_disagree_stays_numbered(kernel):
    """`%rd6` is an address into x, then the word loaded from there: neither name fits both."""
    assert "ptx.ld.global_.u64(rd[6], [rd[6]])" in kernel, kernel


def test_a_bitcast_for_a_shuffle_is_not_taken_for_an_address(kernel):
    """`mov.b32 %r4, %f1` copies a float's bits: %f1 is no address, so %r4 is no `_ptr`."""
    assert "ptx.mov.b32(r[4], acc)" in kernel, kernel
