"""wmma.load/mma/store on the CPU engine against numpy: one generated one-warp kernel for each form
of cases/emulate/wmma_forms.txt (shape, types, memory layouts, state space, stride), D compared
with C + A @ B built from memory by the ISA's storage rule (9.7.14.4.2: element (r, c) at
r*stride + c row-major, c*stride + r column-major). The fragment layout itself is the engine's
documented choice and is not assumed here; refusals of other wmma forms are cases of
cases/emulate/pipeline_refusals.txt."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptx2py.emulate.errors import NotEmulated
from ptx2py.emulate.frontend import run

CASES = Path(__file__).parent / "cases" / "emulate" / "wmma_forms.txt"
K_OF = {"m16n16k16": 16, "m16n16k8": 8}
REGS = {("a", "f16"): 8, ("b", "f16"): 8, ("a", "bf16"): 4, ("b", "bf16"): 4, ("a", "tf32"): 4,
        ("b", "tf32"): 4, ("c", "f32"): 8, ("c", "f16"): 4}
DTYPE = {"f16": "fp16", "bf16": "bf16", "tf32": "fp32", "f32": "fp32"}
COUNT = 512


def _forms():
    for line in CASES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            shape, ab, c, d, la, lb, lc, ld, space, pad = line.split()
            yield pytest.param(shape, ab, c, d, la, lb, lc, ld, space, None if pad == "-" else int(pad),
                               id="-".join((shape, ab, c, d, la, lb, lc, ld, space, pad)))


def _line_of(text, head):
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.strip().startswith(head))


def _regs(start, n):
    return "{" + ", ".join(f"%r{start + i}" for i in range(n)) + "}"


def _kernel(shape, ab, c, d, layouts, space, strides, load_c=True):
    """PTX of one warp: load a, b (and c), mma, store d; strides None = the default."""
    la, lb, lc, ld = layouts
    ss = ".global" if space == "global" else ""
    na, nb, nc, nd = REGS[("a", ab)], REGS[("b", ab)], REGS[("c", c)], REGS[("c", d)]
    ra, rb, rc, rd = 1, 1 + na, 1 + na + nb, 1 + na + nb + nc
    types = f".{d}.{c}" if ab == "f16" else f".{d}.{ab}.{ab}.{c}"
    st = (lambda i: f", {strides[i]}") if strides else (lambda i: "")
    conv = "\n".join(f"\tcvta.to.global.u64 %rd{5 + i}, %rd{1 + i};" for i in range(4)) if space == "global" else ""
    regs = [f"%rd{5 + i}" if space == "global" else f"%rd{1 + i}" for i in range(4)]
    load_c_line = (f"\twmma.load.c.sync.aligned.{lc}.{shape}{ss}.{c} {_regs(rc, nc)}, [{regs[2]}]{st(2)};"
                   if load_c else "")
    return f""".version 8.0
.target sm_90a
.address_size 64

.visible .entry wmma_case(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<9>;
\tld.param.u64 %rd1, [pa];
\tld.param.u64 %rd2, [pb];
\tld.param.u64 %rd3, [pc];
\tld.param.u64 %rd4, [pd];
{conv}
\twmma.load.a.sync.aligned.{la}.{shape}{ss}.{ab} {_regs(ra, na)}, [{regs[0]}]{st(0)};
\twmma.load.b.sync.aligned.{lb}.{shape}{ss}.{ab} {_regs(rb, nb)}, [{regs[1]}]{st(1)};
{load_c_line}
\twmma.mma.sync.aligned.{la}.{lb}.{shape}{types} {_regs(rd, nd)}, {_regs(ra, na)}, {_regs(rb, nb)}, {_regs(rc, nc)};
\twmma.store.d.sync.aligned.{ld}.{shape}{ss}.{d} [{regs[3]}], {_regs(rd, nd)}{st(3)};
\tret;
}}
"""


def _launch(ab, c, d):
    def arg(name, ty, init):
        return {"name": name, "kind": "pointer", "dtype": DTYPE[ty], "count": COUNT, "init": init}
    return {"kernel": "wmma_case", "grid": [1, 1, 1], "block": [32, 1, 1], "shared": 0,
            "args": [arg("pa", ab, "zeros"), arg("pb", ab, "zeros"), arg("pc", c, "zeros"), arg("pd", d, "zeros")]}


def _values(rng, ty):
    """(raw bits for the buffer, float64 values) of COUNT random elements exact in `ty`."""
    x = rng.standard_normal(COUNT).astype(np.float32)
    if ty == "f16":
        h = x.astype(np.float16)
        return h.view(np.uint16), h.astype(np.float64)
    bits = x.view(np.uint32)
    if ty == "bf16":
        top = (bits >> 16).astype(np.uint16)
        return top, (top.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if ty == "tf32":
        bits = bits & np.uint32(0xFFFFE000)                 # exact in tf32: no input rounding to model
    return bits, bits.view(np.float32).astype(np.float64)


def _matrix(values, rows, cols, layout, stride):
    r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
    return values[r * stride + c] if layout == "row" else values[c * stride + r]


@pytest.mark.parametrize("shape,ab,c,d,la,lb,lc,ld,space,pad", list(_forms()))
def test_wmma_form_matches_numpy(shape, ab, c, d, la, lb, lc, ld, space, pad):
    k = K_OF[shape]
    lead = {"a": (16, k), "b": (k, 16), "c": (16, 16)}             # (rows, cols)
    layouts = {"a": la, "b": lb, "c": lc, "d": ld}

    def stride(mat):
        rows, cols = lead["c" if mat == "d" else mat]
        return (cols if layouts[mat] == "row" else rows) + (pad or 0)

    strides = [stride(x) for x in "abcd"] if pad is not None else None
    rng = np.random.default_rng(14)
    (raw_a, va), (raw_b, vb), (raw_c, vc) = _values(rng, ab), _values(rng, ab), _values(rng, c)
    text = _kernel(shape, ab, c, d, (la, lb, lc, ld), space, strides)
    res = run(text, _launch(ab, c, d), {"pa": raw_a, "pb": raw_b, "pc": raw_c}, filename="wmma_case.ptx")
    assert res.clean, res.reports
    s = [stride(x) for x in "abcd"]
    A, B = _matrix(va, 16, k, la, s[0]), _matrix(vb, k, 16, lb, s[1])
    C = _matrix(vc, 16, 16, lc, s[2])
    want, mag = C + A @ B, np.abs(C) + np.abs(A) @ np.abs(B)
    out = res.outputs["pd"].astype(np.float64) if d == "f16" else res.outputs["pd"].view(np.float32).astype(np.float64)
    got = _matrix(out, 16, 16, ld, s[3])
    bound = 2 * 2.0 ** -24 * mag + (2.0 ** -11 * np.abs(want) + 2.0 ** -24 if d == "f16" else 0)
    assert (np.abs(got - want) <= bound).all(), np.abs(got - want).max()
    written = np.zeros(COUNT, bool)
    written[_matrix(np.arange(COUNT), 16, 16, ld, s[3])] = True
    assert not out[~written].any()                                   # nothing outside the tile


def test_default_strides_are_the_leading_dimensions():
    """Without a stride operand A row-major has stride K, B column-major K, D row-major N: the
    same result as the explicit strides."""
    rng = np.random.default_rng(3)
    (raw_a, _), (raw_b, _) = _values(rng, "f16"), _values(rng, "f16")
    inputs = {"pa": raw_a, "pb": raw_b}
    layouts = ("row", "col", "row", "row")
    implicit = run(_kernel("m16n16k16", "f16", "f32", "f32", layouts, "global", None), _launch("f16", "f32", "f32"),
                   dict(inputs), filename="wmma_case.ptx")
    explicit = run(_kernel("m16n16k16", "f16", "f32", "f32", layouts, "global", [16, 16, 16, 16]),
                   _launch("f16", "f32", "f32"), dict(inputs), filename="wmma_case.ptx")
    assert implicit.clean and explicit.clean
    assert np.count_nonzero(implicit.outputs["pd"]) == 256
    np.testing.assert_array_equal(implicit.outputs["pd"], explicit.outputs["pd"])


def test_stride_not_a_multiple_of_16_bytes_is_a_misaligned_report():
    """Stride 20 halves = 40 bytes: the row starts after the first are not 16-byte aligned (PTX
    ISA 9.7.14.4.2 "Address Alignment"; CUDA's load_matrix_sync: ldm a multiple of 16 bytes)."""
    text = _kernel("m16n16k16", "f16", "f32", "f32", ("row", "col", "row", "row"), "global", [20, 16, 16, 16])
    res = run(text, _launch("f16", "f32", "f32"), filename="wmma_case.ptx")
    [rep] = [r for r in res.reports if r.kind == "misaligned"]
    assert "wmma.load.a" in rep.message and "(40 bytes) not a multiple of 16" in rep.message
    assert rep.where.startswith(f"wmma_case.ptx:{_line_of(text, 'wmma.load.a')}:")


def test_uninitialised_accumulator_is_reported():
    text = _kernel("m16n16k16", "bf16", "f32", "f32", ("row", "row", "row", "row"), "generic", None, load_c=False)
    res = run(text, _launch("bf16", "f32", "f32"), filename="wmma_case.ptx")
    assert any(r.kind == "uninit" and "%r9" in r.message for r in res.reports), res.reports


def test_address_that_differs_between_lanes_is_refused_at_its_line():
    text = _kernel("m16n16k16", "bf16", "f32", "f32", ("row", "row", "row", "row"), "generic", None)
    text = text.replace("\tld.param.u64 %rd1, [pa];\n", "\tld.param.u64 %rd1, [pa];\n\tmov.u32 %r39, %laneid;\n"
                        "\tand.b32 %r39, %r39, 1;\n\tmul.wide.u32 %rd8, %r39, 32;\n\tadd.s64 %rd1, %rd1, %rd8;\n")
    where = f"wmma_case.ptx:{_line_of(text, 'wmma.load.a')}:"
    with pytest.raises(NotEmulated, match=where + r"\d+: error: not emulated: wmma.load.a.* differs between lanes"):
        run(text, _launch("bf16", "f32", "f32"), filename="wmma_case.ptx")


def test_wmma_on_part_of_the_warp_is_refused_at_its_line():
    """A guard leaving lanes 16-31 out: .aligned needs the whole warp."""
    text = _kernel("m16n16k16", "bf16", "f32", "f32", ("row", "row", "row", "row"), "generic", None)
    text = text.replace("\twmma.load.a", "\tmov.u32 %r39, %laneid;\n\tsetp.lt.u32 %p1, %r39, 16;\n\t@%p1 wmma.load.a")
    text = text.replace("\t.reg .b64", "\t.reg .pred %p<2>;\n\t.reg .b64")
    where = f"wmma_case.ptx:{_line_of(text, '@%p1 wmma.load.a')}:"
    with pytest.raises(NotEmulated, match=where + r"\d+: error: not emulated: wmma.load.a.* inactive lanes"):
        run(text, _launch("bf16", "f32", "f32"), filename="wmma_case.ptx")
