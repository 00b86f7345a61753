"""`asm.here.<insn>` (transpile/dsl/structured.py): the inline-asm bracket with the current
`.loc` written again inside it, as LLVM/Triton write it; sugar/srcloc.py spells a bracket's
`.loc` that way exactly when it repeats the `.loc` before it, sugar/aliases.py carries it into
an alias (`cp_async = asm.here.cp.async_...`), and a moved call repeats the `.loc` of its new
place (what Triton would write there)."""

from __future__ import annotations

import pytest
from conftest import ROOT

import ptx2py
from ptx2py import transpile
from ptx2py.transpile.dsl.errors import DSLError

HEAD = '''from ptx2py.dsl import *  # noqa: F401,F403

srcmap(38, {1: "k.py"})
ptx.version("8.0")
ptx.target("sm_80")
ptx.address_size(64)
with ptx.entry("k", params=[], visible=True):
    r, rd = regs(b32=40, b64=40)
'''
TAIL = '''    ptx.ret()
ptx.file(1, "/src/k.py")
'''


def _ptx(body: str) -> list:
    """The kernel body's lines of the PTX `body` (indented DSL statements) records."""
    out = transpile.python_to_ptx(HEAD + body + TAIL).split("\n")
    return [" ".join(line.split()) for line in out[out.index("{") + 3:out.index("}")]]


def _loc(line, col):
    return f".loc 1 {line} {col} // k.py:{line}:{col}"


BEGIN, END = "// begin inline asm", "// end inline asm"


def test_here_repeats_the_current_loc_inside_the_bracket():
    got = _ptx('    at(5, 3).add.s32(r[1], r[2], 1)\n    asm.here.mov.u32(r[3], 0)\n')
    assert got == [_loc(5, 3), "add.s32 %r1, %r2, 1;", BEGIN, _loc(5, 3), "mov.u32 %r3, 0;", "", END, "ret;"]


def test_without_here_the_bracket_has_no_loc_as_before():
    got = _ptx('    at(5, 3).add.s32(r[1], r[2], 1)\n    asm.mov.u32(r[3], 0)\n')
    assert got == [_loc(5, 3), "add.s32 %r1, %r2, 1;", BEGIN, "mov.u32 %r3, 0;", "", END, "ret;"]


def test_a_moved_call_repeats_the_loc_of_its_new_place():
    got = _ptx('    at(5, 3).add.s32(r[1], r[2], 1)\n    at(9, 7).add.s32(r[2], r[2], 1)\n'
               '    asm.here.mov.u32(r[3], 0)\n')
    assert got[4:6] == [BEGIN, _loc(9, 7)]


def test_in_a_loop_each_iteration_repeats_its_own_loc():
    got = _ptx('    for i in range(3):\n        at(5 + i, 1).add.s32(r[i], r[9], 1)\n'
               '        asm.here.mov.u32(r[i + 10], 0)\n')
    assert [x for x in got if x.startswith(".loc")] == [_loc(5, 1), _loc(5, 1), _loc(6, 1), _loc(6, 1),
                                                        _loc(7, 1), _loc(7, 1)]


def test_an_alias_call_says_where_else_or_none():
    body = ('    mov_u32 = asm.here.mov.u32\n    at(5, 3).add.s32(r[1], r[2], 1)\n    mov_u32(r[3], 0)\n'
            '    mov_u32(r[4], 0, inside=(8, 2))\n    mov_u32(r[5], 0, inside=None)\n')
    got = _ptx(body)
    assert got[2:] == [BEGIN, _loc(5, 3), "mov.u32 %r3, 0;", "", END, BEGIN, _loc(8, 2), "mov.u32 %r4, 0;", "", END,
                       BEGIN, "mov.u32 %r5, 0;", "", END, "ret;"]


def test_here_with_no_loc_before_it_is_a_located_error():
    with pytest.raises(DSLError, match=r"<string>:9:5: error: asm.here: no .loc before it"):
        transpile.python_to_ptx(HEAD + '    asm.here.mov.u32(r[3], 0)\n' + TAIL)


MATMUL = ROOT / "corpus" / "ptx" / "triton" / "matmul_fp32_64x64x32_w4s3_sm80.ptx"


def test_triton_cp_async_reads_as_the_instruction_alone():
    """Every `cp.async` of the fp32 matmul repeats the current `.loc` inside its bracket:
    the alias carries `here`, so no call names a location, in loops or not."""
    text = MATMUL.read_text()
    src = ptx2py.ptx_to_python(text, sugar=True, filename=str(MATMUL))
    assert transpile.python_to_ptx(src) == text
    assert "cp_async = asm.here.cp.async_.ca.shared.global_\n" in src
    calls = [line for line in src.split("\n") if line.strip().startswith("cp_async(")]
    assert len(calls) > 10 and not any("inside=" in line for line in calls)
    assert "asm.at(" not in src and "inside=" not in src


def test_moving_a_cp_async_call_in_the_matmul_moves_its_loc_with_it():
    """Swapped with the `ptx.add.s32` after it, the call and its bracket (and the repeated
    `.loc` inside) move as one unit; moved below the next `at(...)` line, it repeats that one."""
    text = MATMUL.read_text()
    lines = ptx2py.ptx_to_python(text, sugar=True, filename=str(MATMUL)).split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("    cp_async("))
    assert lines[k + 1].startswith("    ptx.add.s32(")
    swapped = lines[:k] + [lines[k + 1], lines[k]] + lines[k + 2:]
    out = transpile.python_to_ptx("\n".join(swapped)).split("\n")
    orig = text.split("\n")
    b = orig.index("\t// begin inline asm")
    assert orig[b + 4] == "\t// end inline asm"
    assert out[b:b + 6] == [orig[b + 5], *orig[b:b + 5]]  # the add, then the whole bracket
    after = next(i for i in range(k, len(lines)) if lines[i].startswith("    at(242, 13)."))
    moved = lines[:k] + lines[k + 1:after + 1] + [lines[k]] + lines[after + 1:]
    out = transpile.python_to_ptx("\n".join(moved)).split("\n")
    i = out.index(orig[b + 2])  # the moved cp.async
    assert out[i - 2] == "\t// begin inline asm" and "\t.loc\t1 242 13 " in out[i - 1]
    assert "\t.loc\t1 241 13 " in orig[b + 1]  # where it was


def test_a_bracket_of_statements_repeats_the_current_loc_first():
    got = _ptx('    at(5, 3).add.s32(r[1], r[2], 1)\n    with asm.here():\n        ptx.mov.u32(r[3], 0)\n'
               '        ptx.mov.u32(r[4], 0)\n')
    assert got[2:] == [BEGIN, _loc(5, 3), "mov.u32 %r3, 0;", "mov.u32 %r4, 0;", "", END, "ret;"]
    got = _ptx('    at(5, 3).add.s32(r[1], r[2], 1)\n    with at(6, 1).asm.here():\n        ptx.mov.u32(r[3], 0)\n')
    assert got[2:5] == [_loc(6, 1), BEGIN, _loc(6, 1)]
