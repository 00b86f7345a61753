"""Float literals by value, re-encoded to the exact bits PTX spells (`0f` + 8 hex digits for f32,
`0d` + 16 for f64), and the constants kernels use most, by name:

    f32(LOG2E)     # 0f3FB8AA3B: log2(e), exp(x) = exp2(x * LOG2E)
    f32(1.0)       # 0f3F800000
    f32(-INF)      # 0fFF800000
    f64(0.5)       # 0d3FE0000000000000

The value is rounded to the nearest float of that width (round to nearest even), as a C cast does.
"""

from __future__ import annotations

import math
import struct

from .errors import DSLError
from .operands import Lit, fimm

LOG2E = math.log2(math.e)
LN2 = math.log(2.0)
INF = math.inf


def f32(value: float) -> Lit:
    """The f32 literal nearest `value`, spelled `0fXXXXXXXX` (upper-case hex)."""
    try:
        bits = struct.unpack(">I", struct.pack(">f", value))[0]
    except (OverflowError, struct.error) as e:
        raise DSLError(f"f32({value!r}): {e}") from None
    return fimm("0f%08X" % bits)


def f64(value: float) -> Lit:
    """The f64 literal of `value`, spelled `0dXXXXXXXXXXXXXXXX` (upper-case hex)."""
    try:
        bits = struct.unpack(">Q", struct.pack(">d", value))[0]
    except struct.error as e:
        raise DSLError(f"f64({value!r}): {e}") from None
    return fimm("0d%016X" % bits)


__all__ = ["f32", "f64", "LOG2E", "LN2", "INF"]
