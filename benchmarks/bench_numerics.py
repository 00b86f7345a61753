"""Cost of one ALU call (emulate.numerics) for the corpus's most used arithmetic forms.

    python benchmarks/bench_numerics.py [--lanes 256] [--repeat 200]

Reports microseconds per call and lane-operations per second for each form, on random inputs of
the form's types (the engine calls ALU once per instruction for all active lanes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # the repository's emulate/

from ptx2py.emulate.numerics import ALU
from ptx2py.emulate.numerics.coverage import _operands
from ptx2py.emulate.numerics.dtypes import TYPES

FORMS = ["add.s32", "add.s64", "fma.rn.f32", "fma.rn.f64", "and.b32", "add.f32", "shl.b32",
         "setp.lt.s32", "cvt.s64.s32", "mad.lo.s32", "selp.f32", "mul.f32", "mad.wide.s32",
         "cvt.rn.f16x2.f32", "ex2.approx.ftz.f32", "div.rn.f32", "fma.rn.ftz.f32", "max.f32",
         "fma.rm.f64", "add.rz.f32", "cvt.rn.satfinite.e4m3x2.f32", "fma.rn.f16x2"]


def widen(srcs, lanes, rng):
    """The probe's one-lane operands, repeated to `lanes` lanes with random low bits mixed in."""
    out = []
    for s in srcs:
        rep = np.repeat(s, lanes)
        if rep.dtype != bool and rep.dtype.itemsize >= 4:
            noise = rng.integers(0, 1 << 12, lanes).astype(rep.dtype)
            rep = rep ^ noise
        out.append(rep)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lanes", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'form':34} {'us/call':>9} {'Mlane-ops/s':>12}")
    for form in FORMS:
        opcode, *rest = form.split(".")
        mods = tuple("." + m for m in rest)
        types = tuple(m for m in mods if m in TYPES)
        srcs = widen(_operands(opcode, mods, types), args.lanes, rng)
        fmods = frozenset(mods)
        ALU[opcode](fmods, types, *srcs)
        start = time.perf_counter()
        for _ in range(args.repeat):
            ALU[opcode](fmods, types, *srcs)
        per_call = (time.perf_counter() - start) / args.repeat
        print(f"{form:34} {per_call * 1e6:9.1f} {args.lanes / per_call / 1e6:12.2f}")


if __name__ == "__main__":
    main()
