"""Warp-specialised roles marked where the kernel sets them: a Python comment before each
`setmaxnreg` (the PTX does not change):

    # producer warps from here: setmaxnreg.dec gives up registers (40 per thread)
    asm.setmaxnreg.dec.sync.aligned.u32(40)
    # consumer warps from here: setmaxnreg.inc takes registers (232 per thread)

Warp-specialised kernels (CUTLASS, FlashAttention-3, Triton's warp specialisation) branch on the
warp-group index into a producer that only issues TMA loads and so needs few registers, and
consumers that run the MMAs and take the registers it frees: the direction of `setmaxnreg`
says which branch is which.
"""

from __future__ import annotations

from .ir import Call, stmt

# the setmaxnreg direction -> the role it marks (PTX ISA: .dec releases, .inc requests registers)
_ROLES = (("setmaxnreg.dec", "producer warps from here: setmaxnreg.dec gives up registers"),
          ("setmaxnreg.inc", "consumer warps from here: setmaxnreg.inc takes registers"))


def _role(s):
    e = s.expr
    if e.__class__ is not Call or s.prefix or s.trailer:
        return None
    for lead, note in _ROLES:
        if f".{lead}." in f".{e.head}.":
            count = e.items[0] if len(e.items) == 1 and e.items[0].__class__ is str and e.items[0].isdigit() else None
            return note + (f" ({count} per thread)" if count else "")
    return None


def run(stmts, ctx):
    """Pass: a comment naming the role before each `setmaxnreg`."""
    out = []
    for s in stmts:
        note = _role(s) if s.depth > 0 else None
        if note is not None and not (out and out[-1].expr == f"# {note}"):
            out.append(stmt(f"# {note}", s.depth))
        out.append(s)
    return out
