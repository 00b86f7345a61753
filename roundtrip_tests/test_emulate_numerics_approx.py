"""The .approx forms stay inside the PTX ISA's stated bounds (reference: Python's math module),
and keep the special values the ISA lists."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numerics_ref import f32, from_f32

from ptx2py.emulate.numerics import ALU

# opcode -> (reference, input range, bound kind, bound)
BOUNDS = {
    "ex2": (lambda x: 2.0 ** x, (-100.0, 100.0), "ulp", 2),
    "lg2": (math.log2, (1e-30, 1e30), "rel", 2.0 ** -22),
    "sin": (math.sin, (-3.14159, 3.14159), "abs", 2.0 ** -20.5),
    "cos": (math.cos, (-3.14159, 3.14159), "abs", 2.0 ** -20.5),
    "tanh": (math.tanh, (-20.0, 20.0), "rel", 2.0 ** -11),
    "rsqrt": (lambda x: 1.0 / math.sqrt(x), (1e-30, 1e30), "rel", 2.0 ** -22.9),
    "sqrt": (math.sqrt, (0.0, 1e30), "rel", 2.0 ** -23),
    "rcp": (lambda x: 1.0 / x, (1e-30, 1e30), "ulp", 1),
}


def run(opcode, vals, mods=frozenset()):
    bits = np.array([f32(v) for v in vals], np.uint32)
    return [from_f32(b) for b in ALU[opcode](frozenset({".approx", ".f32"}) | mods, (".f32",), bits).tolist()]


@pytest.mark.parametrize("opcode", sorted(BOUNDS))
def test_within_isa_bound(opcode):
    ref, (lo, hi), kind, bound = BOUNDS[opcode]

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.floats(float(np.float32(lo)), float(np.float32(hi)), width=32), min_size=1, max_size=32))
    def check(vals):
        if opcode == "lg2":                # near 1 the ISA bound is absolute: its own test
            vals = [v for v in vals if not 0.5 <= v <= 2.0] or [4.0]
        for v, g in zip(vals, run(opcode, vals)):
            want = ref(v)
            if kind == "abs":
                assert abs(g - want) <= bound, (v, g, want)
            elif kind == "ulp":
                assert abs(g - want) <= bound * abs(np.spacing(np.float32(want))), (v, g, want)
            elif want != 0:
                assert abs(g - want) <= bound * abs(want), (v, g, want)
    check()


@pytest.mark.parametrize("opcode,x,want", [
    ("ex2", -math.inf, 0.0), ("ex2", math.inf, math.inf), ("lg2", 0.0, -math.inf), ("lg2", -1.0, math.nan),
    ("lg2", math.inf, math.inf), ("sin", math.inf, math.nan), ("cos", -math.inf, math.nan),
    ("tanh", -math.inf, -1.0), ("rsqrt", 0.0, math.inf), ("rsqrt", -0.0, -math.inf), ("rsqrt", -1.0, math.nan),
    ("rcp", -0.0, -math.inf), ("sqrt", -0.0, -0.0), ("sin", -0.0, -0.0),
])
def test_special_values(opcode, x, want):
    got = run(opcode, [x])[0]
    assert (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want))


def test_ftz_flushes_subnormal_inputs():
    assert run("ex2", [1e-40], frozenset({".ftz"})) == [1.0]
    assert run("rsqrt", [1e-40], frozenset({".ftz"})) == [math.inf]


def test_lg2_absolute_bound_near_one():
    vals = list(np.linspace(0.5, 2.0, 257)[1:-1])
    for v, g in zip(vals, run("lg2", vals)):
        assert abs(g - math.log2(float(np.float32(v)))) <= 2.0 ** -22
