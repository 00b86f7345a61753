"""PTX value semantics on numpy arrays of raw bits: `ALU[opcode](mods, types, *srcs, **extra)`.

See docs/emulate_coverage.md for what is implemented and at what accuracy. Handlers live in one
module per family; importing them registers them in ALU.
"""

from .errors import NotEmulated
from .registry import ALU
from . import int_ops, bit_ops, float_ops, compare, cvt, half_ops, approx  # noqa: F401,E402  (registration)

__all__ = ["ALU", "NotEmulated"]
