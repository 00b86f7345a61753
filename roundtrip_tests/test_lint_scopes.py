"""lint resolves names per `{ }` block as ptxas does (lint/declarations.py): the innermost
declaration wins, a block's names end with it, sibling blocks are independent, a register is
visible from its declaration on, a label throughout its block, a parameter may be shadowed in an
inner block but not re-declared in the body. Each hand-written case carries ptxas' verdict (and is
put to ptxas again where it is installed); the header intrinsics are compiled by nvcc here."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from ptx2py.lint import lint_text

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

# (name, body lines, line ptxas blames or None where it accepts); line numbers count from the
# module's first line (HEAD is 3 lines, the kernel's `{` is line 5)
CASES = [
    ("nested shadow, outer use after", ".visible .entry k()\n{\n.reg .b32 %r1;\n{\n.reg .b16 %r1;\nmov.u16 %r1, 1;\n}\n"
     "mov.u32 %r1, 2;\nret;\n}", None),
    ("inner type used with the outer's", ".visible .entry k()\n{\n.reg .b32 %r1;\n{\n.reg .b16 %r1;\n"
     "mov.u32 %r1, 1;\n}\nret;\n}", 9),
    ("sibling blocks, other types", ".visible .entry k()\n{\n{\n.reg .b32 c;\nmov.u32 c, 1;\n}\n{\n.reg .b16 c;\n"
     "mov.u16 c, 2;\n}\nret;\n}", None),
    ("use after the block closes", ".visible .entry k()\n{\n{\n.reg .b32 %r1;\nmov.u32 %r1, 1;\n}\nmov.u32 %r1, 2;\n"
     "ret;\n}", 10),
    ("sibling's name", ".visible .entry k()\n{\n{\n.reg .b32 x;\nmov.u32 x, 1;\n}\n{\n.reg .b16 y;\nmov.u16 x, 2;\n}\n"
     "ret;\n}", 12),
    ("no space: .reg.b32", ".visible .entry k()\n{\n.reg.b16 h;\n{.reg.b32 h;\nmov.b32 h, 1;\n}\nmov.b16 h, 2;\n"
     "ret;\n}", None),
    ("use before the declaration", ".visible .entry k()\n{\nmov.u32 %r1, 1;\n.reg .b32 %r1;\nret;\n}", 6),
    ("declared twice in one block", ".visible .entry k()\n{\n.reg .b32 %r1;\n.reg .b16 %r1;\nret;\n}", 7),
    ("parameter re-declared in the body", ".func f(.reg .b32 %a)\n{\n.reg .b32 %a;\nret;\n}", 6),
    ("parameter shadowed in an inner block", ".func f(.reg .b32 %a)\n{\n{\n.reg .b16 %a;\nmov.u16 %a, 1;\n}\n"
     "mov.u32 %a, 2;\nret;\n}", None),
    ("kernel parameter shadowed by a register", ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd;\n{\n"
     ".reg .b64 p;\nmov.u64 p, 1;\n}\nld.param.u64 %rd, [p];\nret;\n}", None),
    ("prefix declarations shadow", ".visible .entry k()\n{\n.reg .b32 %r<3>;\n{\n.reg .b16 %r<3>;\n"
     "mov.u16 %r1, 1;\n}\nmov.u32 %r1, 2;\nret;\n}", None),
    ("a name and a prefix in one block", ".visible .entry k()\n{\n.reg .b32 %r<3>;\n.reg .b16 %r1;\nret;\n}", 7),
    ("label in an inner block", ".visible .entry k()\n{\nbra L1;\n{\nL1:\nret;\n}\n}", 6),
    ("labels in sibling blocks", ".visible .entry k()\n{\n{\nL1:\nbra L1;\n}\n{\nL1:\nret;\n}\n}", None),
    ("branch out to an enclosing label", ".visible .entry k()\n{\nL0:\n{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"
     "@p bra L0;\n}\nret;\n}", None),
    ("variables per block", ".visible .entry k()\n{\n.reg .b64 %rd;\n{\n.local .b32 x;\nmov.u64 %rd, x;\n}\n{\n"
     ".shared .b32 x;\nmov.u64 %rd, x;\n}\nret;\n}", None),
    ("variable after its block", ".visible .entry k()\n{\n.reg .b64 %rd;\n{\n.local .b32 x;\n}\nmov.u64 %rd, x;\n"
     "ret;\n}", 10),
]


def _lint_lines(text: str) -> set[int]:
    return {v.line for v in lint_text(text, "s.ptx") if v.severity == "error"}


@pytest.mark.parametrize("name, body, line", CASES, ids=[c[0] for c in CASES])
def test_scope_case(name, body, line):
    lines = _lint_lines(HEAD + body + "\n")
    assert lines == (set() if line is None else {line}), lines


from conftest import PTXAS  # noqa: E402  (the project's tool search: ptx2py.verify.tools)

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
@pytest.mark.parametrize("name, body, line", CASES, ids=[c[0] for c in CASES])
def test_scope_case_verdict_is_ptxas(name, body, line, tmp_path):
    path = tmp_path / "s.ptx"
    path.write_text(HEAD + body + "\n")
    r = subprocess.run([PTXAS, "-arch", "sm_80", str(path), "-o", str(tmp_path / "s.o")], capture_output=True,
                       text=True)
    blamed = {int(n) for n in re.findall(r"line (\d+);", r.stdout + r.stderr)}
    assert (r.returncode == 0) == (line is None) and (line is None or line in blamed), r.stderr


HEADER_KERNEL = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void k(__half* a, __half2* a2, __nv_bfloat16* b, __nv_bfloat162* b2, float* f,
                  unsigned long long* g) {
  int i = threadIdx.x;
  a[i] = hexp(a[i]) + hexp2(a[i + 1]) + hlog(a[i + 2]) + hsin(a[i + 3]) + hcos(a[i + 4]) + hrcp(a[i + 5])
         + htanh_approx(a[i + 6]) + __float2half_rn(f[i]) + __hdiv(a[i + 7], a[i + 8]);
  a2[i] = h2exp(a2[i]) + h2log(a2[i + 1]) + h2sin(a2[i + 2]) + __hmax2(a2[i + 3], a2[i + 4])
          + __hfma2_relu(a2[i], a2[i + 1], a2[i + 2]) + __h2div(a2[i + 5], a2[i + 6]);
  b[i] = hexp(b[i]) + hlog2(b[i + 1]) + hsin(b[i + 2]) + __float2bfloat16(f[i + 1]) + hrsqrt(b[i + 3])
         + __hdiv(b[i + 4], b[i + 5]);
  b2[i] = h2exp(b2[i]) + h2cos(b2[i + 1]) + __hmin2(b2[i + 2], b2[i + 3]) + __h2div(b2[i + 4], b2[i + 5]);
  f[i] = __half2float(a[i]) + __bfloat162float(b[i]) + __low2float(a2[i]);
  unsigned long long gid;
  asm("mov.u64 %0, %%gridid;" : "=l"(gid));
  g[i] = gid;
}
"""


@pytest.mark.skipif(NVCC is None or PTXAS is None, reason="nvcc/ptxas are not installed")
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
def test_header_intrinsics_lint_clean(arch, tmp_path):
    """CUDA's fp16/bf16 intrinsics as nvcc writes them: nested and sibling inline-asm blocks
    re-declare `spc`, `ulp`, `p`, `r`, `h` with other types; ptxas accepts the file, so must lint."""
    src, ptx = tmp_path / "h.cu", tmp_path / "h.ptx"
    src.write_text(HEADER_KERNEL)
    subprocess.run([NVCC, f"-arch={arch}", "-ptx", str(src), "-o", str(ptx)], check=True, capture_output=True)
    text = ptx.read_text()
    # the file really has a name declared with two types in nested or sibling blocks
    types_of: dict[str, set[str]] = {}
    for rtype, names in re.findall(r"\.reg\s*(\.\w+)\s+([^;<]+);", text):
        for name in names.split(","):
            types_of.setdefault(name.strip(), set()).add(rtype)
    assert any(len(t) > 1 for t in types_of.values()), types_of
    subprocess.run([PTXAS, "-arch", arch, str(ptx), "-o", str(tmp_path / "h.o")], check=True, capture_output=True)
    found = [str(v) for v in lint_text(text, "h.ptx") if v.severity == "error"]
    assert found == []
