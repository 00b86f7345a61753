"""Short function heads (sugar/param_types.py), period-1 table loops (sugar/repeat.py) and
LLVM's `.debug_str` entries as one call (sugar/debugstr.py): each re-emits the input bytes."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT
from test_sugar import roundtrips

import ptx2py
from ptx2py import ptxgrammar, transpile
from ptx2py.transpile.format import black_format

CORPUS = ROOT / "corpus" / "ptx"


def _sugar(rel: str):
    text = ptxgrammar.read_ptx(CORPUS / rel)
    src = roundtrips(text)
    assert black_format(src) == src
    return text, src


# --- function heads -------------------------------------------------------------------

@pytest.mark.parametrize("rel, alias, head", [
    # Triton's pointer lists: one name for the pointer type both runs use
    ("triton/matmul_fp32_64x64x32_w4s3_sm80.ptx", "gptr = param.u64.ptr.global_.align(1)\n",
     "with matmul_kernel.entry(gptr * 3, param.u32 * 9, gptr * 2, visible=True, reqntid=128):\n"),
    # Triton's tensor descriptors: the CUtensorMap, its shape and strides, three times
    ("triton/matmul_persistent_tma_fp16_sm90.ptx",
     "tma_desc = [param.align(64).b8[128], *param.u32 * 2, *param.u64 * 2]\n",
     "with matmul_persistent_tma_kernel.entry(\n"
     "    tma_desc * 3, param.u32 * 3, gptr * 2, visible=True, reqntid=256\n):\n"),
    # nvcc's mangled names and generic pointers, the alias shared by the module's kernels
    ("nvcc/atomics.sm_100a.ptx", "ptr = param.u64.ptr.align(1)\n",
     "with atomic_zoo.entry(ptr * 5, param.u32, visible=True, globl=True):\n"),
])
def test_short_heads_reemit_the_input(rel, alias, head):
    _, src = _sugar(rel)
    assert alias in src and head in src
    assert src.index(alias) < src.index(head)


def test_scalars_and_a_single_run_keep_their_type_spelled_out():
    # one pointer run fits its line: a name would cost a line and save none
    _, src = _sugar("pallas/matmul_f32_32x32x32_sm90.ptx")
    assert "with matmul_kernel.entry(param.u64.ptr.global_.align(1) * 5, visible=True, reqntid=128):\n" in src
    assert "gptr" not in src
    _, src = _sugar("nvcc/cub_block.sm_90a.ptx")
    assert "with block_reduce_sum.entry(param.u64 * 2, visible=True, globl=True):\n" in src
    assert " = param." not in src


def test_parameter_names_by_role_still_name_the_parameters():
    _, src = _sugar("triton/matmul_fp32_64x64x32_w4s3_sm80.ptx")
    assert "sym(matmul_kernel.param_5)" in src or "sym(matmul_kernel.K)" in src


@pytest.mark.parametrize("rel, old, new", [
    ("triton/matmul_fp32_64x64x32_w4s3_sm80.ptx", "gptr", "global_pointer"),
    ("triton/matmul_persistent_tma_fp16_sm90.ptx", "tma_desc", "tensor_descriptor"),
    ("nvcc/atomics.sm_100a.ptx", "ptr", "pointer"),
])
def test_a_renamed_alias_reemits_the_same_ptx(rel, old, new):
    text, src = _sugar(rel)
    renamed = re.sub(rf"(?<![\w.]){old}(?!\w)", new, src)
    assert renamed != src and f"{new} = " in renamed
    assert transpile.python_to_ptx(renamed) == text


def test_an_alias_is_a_plain_type_a_hand_written_head_can_use():
    src = (
        "from ptx2py.dsl import *\n"
        'ptx.version("8.0")\nptx.target("sm_90a")\nptx.address_size(64)\n'
        "desc = [param.align(64).b8[128], *param.u32 * 2]\n"
        'k = kernel_name("k", params=7)\n'
        "with k.entry(desc * 2, param.u64, visible=True):\n    ptx.ret()\n"
    )
    ptx = transpile.python_to_ptx(src)
    assert ".param .align 64 .b8 k_param_3[128]" in ptx
    assert [m.group(1) for m in re.finditer(r"\.param (.*?) k_param_\d+", ptx)] == [
        ".align 64 .b8", ".u32", ".u32", ".align 64 .b8", ".u32", ".u32", ".u64"]


# --- period-1 table loops -------------------------------------------------------------------

def _module(body_lines):
    body = "".join(f"\t{line}\n" for line in body_lines)
    return (".version 8.0\n.target sm_80\n.address_size 64\n\n"
            ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
            "\t.reg .b32 \t%r<300>;\n\t.reg .b64 \t%rd<300>;\n\n"
            "\tld.param.u64 \t%rd61, [k_param_0];\n" + body + "\tret;\n\n}\n")


def _mads(regs):
    return [f"mad.wide.s32 \t%rd{62 + k}, %r{x}, 4, %rd61;" for k, x in enumerate(regs)]


def test_one_instruction_over_a_list_of_registers_is_one_loop():
    text = _module(_mads([81, 83, 85, 86, 88, 89, 90, 91]))
    src = roundtrips(text)
    assert ("    for i, x in enumerate((r[81], r[83], r[85], r[86], r[88], r[89], r[90], r[91])):\n"
            "        ptx.mad.wide.s32(rd[i + 62], x, 4, param_0)\n") in src
    assert src.count("mad.wide") == 1


def test_too_few_repetitions_stay_flat():
    text = _module(_mads([81, 86, 83, 97, 70]))   # five: a header and a body save three lines
    src = roundtrips(text)
    assert "enumerate" not in src and src.count("ptx.mad.wide.s32(") == 5


def test_a_column_too_long_for_one_header_line_stays_flat():
    regs = [181, 186, 183, 197, 170, 199, 171, 193, 177, 175, 211, 230]   # no three affine
    text = _module(_mads(regs))
    src = roundtrips(text)
    assert "enumerate" not in src and src.count("ptx.mad.wide.s32(") == len(regs)


def test_a_table_loop_reinstantiates_the_same_statements():
    regs = [81, 83, 85, 86, 88, 89, 90, 91]
    text = _module(_mads(regs))
    sugared = ptx2py.ptx_to_python(text, sugar=True)
    plain = ptx2py.ptx_to_python(text, sugar=False)
    assert "enumerate" in sugared
    assert transpile.python_to_ptx(sugared) == transpile.python_to_ptx(plain) == text


# --- LLVM's .debug_str ---------------------------------------------------------------------

def test_an_llvm_debug_string_is_one_call():
    text, src = _sugar("triton/atomic_sum_fp32_sm90.ptx")
    assert '    debug_str(L.info_string0, b"atomic_sum_kernel", row=1, offset=0)\n' in src
    assert "string offset" not in src


def test_a_note_that_names_another_string_stays_rows():
    text = ptxgrammar.read_ptx(CORPUS / "triton" / "atomic_sum_fp32_sm90.ptx")
    edited = text.replace("// string offset=0 ; atomic_sum_kernel", "// string offset=0 ; atomic_sum_kernex")
    assert edited != text
    src = roundtrips(edited)
    assert "debug_str(" not in src and "atomic_sum_kernex" in src
