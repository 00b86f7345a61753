"""Lookup tables of the IR -> PTX compiler: opcodes per dtype, the one
accumulation table (add/max/min/mul: identity and PTX opcode per dtype), PTX
versions per target, and exact hex spellings of float constants."""
from __future__ import annotations

import math
import struct

import numpy as np

from .dtypes import round_bf16

# Register banks: PTX declaration type and register prefix per IR dtype.
BANK = {"pred": ("pred", "%p"), "f16": ("b16", "%h"), "bf16": ("b16", "%h"),
        "s32": ("b32", "%r"), "u32": ("b32", "%r"), "f32": ("f32", "%f"),
        "u64": ("b64", "%rd")}
BANK_ORDER = ("%p", "%h", "%r", "%f", "%rd")
BANK_DECL = {"%p": "pred", "%h": "b16", "%r": "b32", "%f": "f32", "%rd": "b64"}

# Memory access type (ld/st suffix) per dtype; params use the same except pointers.
MEM = {"f32": "f32", "f16": "b16", "bf16": "b16", "s32": "s32", "u32": "u32"}
PARAM = {"f32": "f32", "f16": "b16", "bf16": "b16", "s32": "s32", "u32": "u32"}
MOV = {"f32": "f32", "f16": "b16", "bf16": "b16", "s32": "b32", "u32": "b32", "pred": "pred"}
SELP = {"f32": "f32", "f16": "b16", "bf16": "b16", "s32": "b32", "u32": "b32"}
ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "s32": 4, "u32": 4}

# THE accumulation table: op -> dtype -> (PTX opcode, identity).  f16/bf16 are
# computed in f32 and rounded back, so they use the f32 row.  Binary add/mul/
# min/max, Accum, WarpShuffle combines and TreeHalve all come through here.
ACCUM = {
    "add": {"f32": ("add.rn.f32", 0.0), "s32": ("add.s32", 0), "u32": ("add.u32", 0)},
    "mul": {"f32": ("mul.rn.f32", 1.0), "s32": ("mul.lo.s32", 1), "u32": ("mul.lo.u32", 1)},
    "max": {"f32": ("max.f32", float("-inf")), "s32": ("max.s32", -2**31), "u32": ("max.u32", 0)},
    "min": {"f32": ("min.f32", float("inf")), "s32": ("min.s32", 2**31 - 1), "u32": ("min.u32", 2**32 - 1)},
}

# Other binary arithmetic: op -> dtype -> opcode (f32 row serves f16/bf16 too).
ARITH = {
    "sub": {"f32": "sub.rn.f32", "s32": "sub.s32", "u32": "sub.u32"},
    "div": {"f32": "div.rn.f32", "s32": "div.s32", "u32": "div.u32"},
    "mod": {"s32": "rem.s32", "u32": "rem.u32"},
}
BITWISE = {"bitand": "and", "bitor": "or", "xor": "xor"}
# Comparisons: float ne is unordered (NaN != x is true, as numpy says).
CMP_F32 = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "neu"}
CMP_INT = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne"}
SWAP_CMP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}

# Float unary ops computed in f32 by one instruction.
UNARY_F32 = {"neg": "neg.f32", "abs": "abs.f32", "sqrt": "sqrt.rn.f32",
             "rsqrt": "rsqrt.approx.f32", "recip": "rcp.rn.f32",
             "ex2": "ex2.approx.ftz.f32", "lg2": "lg2.approx.ftz.f32",
             "sin": "sin.approx.f32", "cos": "cos.approx.f32", "tanh": "tanh.approx.f32",
             "floor": "cvt.rmi.f32.f32", "ceil": "cvt.rpi.f32.f32"}

# PTX ISA version per target (ptxas 13.0 accepts <= 9.0).
VERSIONS = {"sm_80": "7.1", "sm_86": "7.1", "sm_87": "7.4", "sm_89": "7.8",
            "sm_90": "7.8", "sm_90a": "8.0", "sm_100": "8.6", "sm_100a": "8.6",
            "sm_120": "8.7", "sm_120a": "8.7"}


def f32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", np.float32(value)))[0]


def f32_hex(value: float) -> str:
    """Exact PTX spelling of an f32 constant: 0f3F800000."""
    if isinstance(value, float) and math.isnan(value):
        return "0f7FC00000"
    return "0f%08X" % f32_bits(value)


def f16_bits(value: float) -> int:
    return int(np.array(value, np.float32).astype(np.float16).view(np.uint16))


def bf16_bits(value: float) -> int:
    return f32_bits(float(round_bf16(np.float32(value)))) >> 16


LOG2E = f32_hex(math.log2(math.e))   # 0f3FB8AA3B
LN2 = f32_hex(math.log(2.0))         # 0f3F317218
