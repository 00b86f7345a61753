"""PTX value semantics on numpy arrays of raw bits: `ALU[opcode](mods, types, *srcs, **extra)`.

See docs/emulate_coverage.md for what is implemented and at what accuracy. Handlers live in one
module per family; importing them registers them in ALU.
"""

from . import approx, bit_ops, compare, cvt, float_ops, half_ops, int_ops  # noqa: F401,E402  (registration)
from .errors import NotEmulated
from .registry import ALU

__all__ = ["ALU", "NotEmulated"]
