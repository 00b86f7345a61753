"""The .approx transcendentals: ex2 lg2 sin cos tanh rsqrt (and rcp/sqrt/div.approx in
float_ops) — PTX ISA 9.7.3.

The hardware's special-function unit is not documented bit for bit, so these are not bit-exact:
each result is the exact function computed in f64 and rounded to nearest in the destination format
(within 0.5 ulp plus f64 libm's error), which lies inside every bound the ISA states. The bounds
are kept here as data and printed in docs/emulate_coverage.md; `ACCURACY` is what the table says.
"""

from __future__ import annotations

import numpy as np

from .errors import accept, refuse
from .float_ops import approx_seed_f64
from .floatbits import decode, encode, fmt_of
from .formats import round_to
from .half_ops import PACKED, join, split
from .registry import handles

# opcode -> (exact function on f64, {format: the ISA's stated accuracy})
FUNCTIONS = {
    "ex2": (np.exp2, {"f32": "max 2 ulp from the correctly rounded result (ISA)",
                      "f16": "f16 form: ISA bound not restated here",
                      "bf16": "bf16 form: ISA bound not restated here"}),
    "lg2": (np.log2, {"f32": "max abs. error 2^-22 for x in (0.5, 2), else max rel. error 2^-22 (ISA)"}),
    "sin": (np.sin, {"f32": "max abs. error 2^-20.5 in [-2pi, 2pi], 2^-14.7 in [-100pi, 100pi] (ISA)"}),
    "cos": (np.cos, {"f32": "max abs. error 2^-20.5 in [-2pi, 2pi], 2^-14.7 in [-100pi, 100pi] (ISA)"}),
    "tanh": (np.tanh, {"f32": "max rel. error 2^-11 (ISA)", "f16": "f16 form: ISA bound not restated here",
                       "bf16": "bf16 form: ISA bound not restated here"}),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), {"f32": "max rel. error 2^-22.9 (ISA)",
                                           "f64": "rsqrt.approx.ftz.f64: a 20-bit-fraction seed (ISA)"}),
}
ACCURACY = "rounded to nearest from f64 (<= 0.5 ulp + 2^-52 rel.), inside the ISA bound"


def _approx(opcode):
    fn, bounds = FUNCTIONS[opcode]

    def lane(mods, fmt, bits):
        ftz = ".ftz" in mods
        x = decode(bits, fmt, ftz)
        if opcode == "rsqrt":
            x = np.where(x < 0, np.nan, x)          # rsqrt(-0) = -inf through 1/sqrt(-0)
        out = np.asarray(fn(x), np.float64)
        if opcode in ("sin", "cos"):
            out = np.where(np.isinf(x), np.nan, out)
        if fmt != "f32":                            # f32: encode's cast rounds to nearest
            out = round_to(out, fmt, "rn")
        return encode(out, fmt, ftz)

    def handler(mods, types, a):
        accept(opcode, mods, types, {".approx", ".ftz"})
        if ".approx" not in mods:
            refuse(opcode, mods, types, "only the .approx form exists")
        if opcode == "rsqrt" and types == (".f64",):
            if ".ftz" not in mods:
                refuse(opcode, mods, types, "rsqrt.approx.f64 has no stated accuracy to stay within")
            return approx_seed_f64(fn, a)
        packed = PACKED.get(types[0])
        fmt = fmt_of(packed[0] if packed else types[0])
        if fmt not in bounds:
            refuse(opcode, mods, types, f"no .approx form for .{fmt} is emulated")
        if packed is None:
            return lane(mods, fmt, a)
        _, width, lanes = packed
        return join([lane(mods, fmt, x) for x in split(a, width, lanes)], width)
    return handler


for _opcode in FUNCTIONS:
    handles(_opcode, "float", "half", quiet=True)(_approx(_opcode))
