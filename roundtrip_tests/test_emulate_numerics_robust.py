"""Any form, well-formed or not, either computes or raises NotEmulated naming it — no other error
(the engine turns NotEmulated into `file:line:col: error: not emulated: ...`) — and never writes
into its operands (the engine passes its register arrays)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptx2py.emulate.numerics import ALU, NotEmulated
from ptx2py.emulate.numerics.coverage import SOURCES
from ptx2py.emulate.numerics.dtypes import TYPES, UINT

MODIFIERS = [".rn", ".rz", ".rm", ".rp", ".rna", ".rni", ".rzi", ".rmi", ".rpi", ".ftz", ".sat", ".relu",
             ".satfinite", ".approx", ".full", ".lo", ".hi", ".wide", ".cc", ".NaN", ".xorsign.abs", ".abs",
             ".eq", ".lt", ".geu", ".nan", ".hs", ".and", ".or", ".l", ".r", ".wrap", ".clamp", ".f4e",
             ".rc16", ".shiftamt", ".finite", ".subnormal", ".pack", ".rs", ".oob", ".bogus"]
TYPE_NAMES = sorted(TYPES)


def operand(type_name, rng):
    t = TYPES[type_name]
    if t.kind == "pred":
        return rng.integers(0, 2, 4).astype(bool)
    width = t.width if t.width in UINT else 32
    return rng.integers(0, 2 ** min(width, 63), 4, dtype=np.uint64).astype(UINT[width])


FORMS = (st.sampled_from(sorted(SOURCES)), st.lists(st.sampled_from(TYPE_NAMES), min_size=1, max_size=2),
         st.sets(st.sampled_from(MODIFIERS), max_size=3), st.integers(0, 2 ** 32 - 1), st.integers(-1, 1))


def computes_or_refuses(opcode, types, mods, seed, extra_srcs):
    rng = np.random.default_rng(seed)
    n = max(1, SOURCES[opcode] + extra_srcs)
    srcs = [operand(types[-1] if opcode in ("cvt", "set") else types[0], rng) for _ in range(n)]
    kw = {"cc": np.zeros(4, bool)} if opcode in ("addc", "subc", "madc") else {}
    before = [s.copy() for s in srcs]
    try:
        ALU[opcode](frozenset(mods) | set(types), tuple(types), *srcs, **kw)
    except NotEmulated as exc:
        assert str(exc).startswith(opcode), exc
    assert all(np.array_equal(b, s) for b, s in zip(before, srcs)), "a handler wrote into its inputs"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*FORMS)
def test_every_form_computes_or_refuses(opcode, types, mods, seed, extra_srcs):
    computes_or_refuses(opcode, types, mods, seed, extra_srcs)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*FORMS)
def test_every_form_computes_or_refuses_long(opcode, types, mods, seed, extra_srcs):
    computes_or_refuses(opcode, types, mods, seed, extra_srcs)
