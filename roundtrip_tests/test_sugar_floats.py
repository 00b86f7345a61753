"""Float literals spelled by value (sugar/floats.py, transpile/dsl/floats.py): every decoded
spelling re-encodes to the literal's exact bits (numpy's float32/float64 are the oracle), NaNs and
spellings `f32` would not write stay `fimm(...)`, and a kernel keeps its bytes."""

from __future__ import annotations

import numpy as np
import pytest

import ptx2py
from ptx2py import transpile
from ptx2py.sugar.floats import spelling
from ptx2py.transpile.dsl import floats


def _bits32(x) -> int:
    return int(np.array(x, dtype=np.float32).view(np.uint32))


def _eval(text: str) -> str:
    """The PTX spelling of a decoded `f32(...)`/`f64(...)` call."""
    return eval(text, {"f32": floats.f32, "f64": floats.f64, "LOG2E": floats.LOG2E,  # noqa: S307
                       "LN2": floats.LN2, "INF": floats.INF}).text


def test_named_constants_are_the_nearest_floats():
    assert floats.f32(floats.LOG2E).text == "0f%08X" % _bits32(np.log2(np.e)) == "0f3FB8AA3B"
    assert floats.f32(floats.LN2).text == "0f%08X" % _bits32(np.log(2.0))
    assert spelling('fimm("0f3FB8AA3B")') == "f32(LOG2E)"
    assert spelling('fimm("0fFF800000")') == "f32(-INF)"


def test_every_decoded_f32_spelling_re_encodes_to_its_bits():
    rng = np.random.default_rng(32)
    words = np.concatenate([rng.integers(0, 2**32, 20000, dtype=np.uint64),
                            np.array([0, 0x80000000, 1, 0x7F7FFFFF, 0x00800000, 0x3F800000, 0x7F800000], np.uint64)])
    decoded = 0
    for w in words:
        atom = 'fimm("0f%08X")' % int(w)
        got = spelling(atom)
        is_nan = np.isnan(np.array([int(w)], np.uint32).view(np.float32)[0])
        if is_nan:
            assert got is None, atom
            continue
        assert got is not None, atom
        assert _eval(got) == atom[6:-2], (atom, got)
        decoded += 1
    assert decoded > 19000


def test_every_decoded_f64_spelling_re_encodes_to_its_bits():
    rng = np.random.default_rng(64)
    for w in rng.integers(0, 2**63, 5000, dtype=np.uint64):
        atom = 'fimm("0d%016X")' % int(w)
        got = spelling(atom)
        if np.isnan(np.array([int(w)], np.uint64).view(np.float64)[0]):
            assert got is None
        else:
            assert got is not None and _eval(got) == atom[6:-2], (atom, got)


@pytest.mark.parametrize("atom", ['fimm("0f3f800000")', 'fimm("0f3F8")', 'fimm("1.5")', 'fimm("0f7FC00000")'])
def test_other_spellings_and_nans_stay(atom):
    assert spelling(atom) is None


def test_a_kernel_with_literals_keeps_its_bytes():
    text = "\n".join([
        ".version 8.0", ".target sm_80", ".address_size 64", "", ".visible .entry k()", "{",
        "\t.reg .f32 \t%f<5>;", "\t.reg .f64 \t%fd<3>;", "", "\tmov.f32 \t%f1, 0fFF800000;",
        "\tmul.f32 \t%f2, %f1, 0f3FB8AA3B;", "\tadd.f32 \t%f3, %f2, 0f3f800000;",
        "\tmov.f64 \t%fd1, 0d3FE0000000000000;",
        "\tret;", "}", ""])
    src = ptx2py.ptx_to_python(text, sugar=True)
    assert "f32(-INF)" in src and "f32(LOG2E)" in src and "f64(0.5)" in src, src
    assert 'fimm("0f3f800000")' in src   # lower-case hex: f32 would spell it upper-case
    assert transpile.python_to_ptx(src) == text
