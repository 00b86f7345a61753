"""Invariant 5 for the asynchronous pipelines: every form the engine does not emulate stops the run
with a located `not emulated` error naming it (cases/emulate/pipeline_refusals.txt), never a result."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptx2py.emulate.errors import NotEmulated
from ptx2py.emulate.frontend import run

CASES = Path(__file__).parent / "cases" / "emulate" / "pipeline_refusals.txt"
KERNEL = """.version 8.7
.target sm_100a
.address_size 64

.visible .entry k()
{
\t.reg .b32 %r<16>;
\t.reg .b64 %rd<8>;
\t.reg .b16 %rs<4>;
\t.shared .align 8 .b8 s[1024];
\t{INSTR}
\tret;
}
"""
LAUNCH = {"kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "shared": 0, "args": []}


def _cases():
    for line in CASES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            want, instr = (x.strip() for x in line.split("|", 1))
            yield pytest.param(want, instr, id=instr.split()[0])


@pytest.mark.parametrize("want,instr", list(_cases()))
def test_unemulated_pipeline_form_is_refused_at_its_line(want, instr):
    with pytest.raises(NotEmulated) as info:
        run(KERNEL.replace("{INSTR}", instr), LAUNCH, filename="k.ptx")
    message = str(info.value)
    assert message.startswith("k.ptx:11:2: error: not emulated: "), message
    assert want in message, message
