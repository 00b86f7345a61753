"""A comment on the line after a label stays on its own line through --sugar, whatever blanks
end the label's line (found by the long fuzz run: the comment moved up onto the label's line)."""

from __future__ import annotations

import pytest

from ptx2py.roundtrip.pipeline import outcome

KERNEL = """.version 6.5
.target sm_75
.address_size 64

.visible .entry k(
\t.param .u32 k_param_0
)
{
\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<3>;

\tld.param.u32 \t%r1, [k_param_0];
\tsetp.ge.s32 \t%p1, %r1, 4;
\t@%p1 bra \tLBB0_2;
\tadd.s32 \t%r2, %r1, 1;
LBB0_2:{label_end}// %exit
\tret;
}
"""


@pytest.mark.parametrize("label_end", [" " * 30 + "\n   ", " \t\n", "\n", "\n   ", " " * 31],
                         ids=["blanks-then-indented", "blank-tab", "bare", "indented", "same-line"])
def test_the_comment_after_a_label_keeps_its_line(label_end):
    text = KERNEL.replace("{label_end}", label_end)
    assert outcome(text, "k.ptx", sugar=True) == ("identical", None)
