"""Typed tensor-core calls of `--sugar` Python. Each one records exactly the
instruction the plain DSL call would (same modifiers in the same order, same
operands), so the bytes are the same:

    wgmma_mma(shape="m64n128k16", dtype="f32", atype="f16", btype="f16",
              d=r[125:189], a=rd[4], b=rd[5], scale_d=p[27],
              scale_a=1, scale_b=1, trans_a=0, trans_b=0)
    == ptx.wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16(r[125:189], rd[4], rd[5], p[27], 1, 1, 0, 0)

`a` is a shared-memory matrix descriptor (or a register fragment), `b` a
descriptor; fp8/tf32 forms have no `trans_a`/`trans_b`. Prefixes compose:
`asm.at(1, 264, 15).wgmma_mma(...)`. Other keywords (`pred=`, `fmt=`) go to
the instruction.
"""

from __future__ import annotations

from .directives import ptx

_UNSET = object()


def wgmma_mma(*, shape, dtype, atype, btype, d, a, b, scale_d, scale_a=_UNSET, scale_b=_UNSET,
              trans_a=_UNSET, trans_b=_UNSET, **kw):
    """`wgmma.mma_async.sync.aligned.<shape>.<dtype>.<atype>.<btype> d, a, b, scale_d[, ...]`."""
    op = getattr(getattr(getattr(getattr(ptx.wgmma.mma_async.sync.aligned, shape), dtype), atype), btype)
    rest = [x for x in (scale_a, scale_b, trans_a, trans_b) if x is not _UNSET]
    return op(d, a, b, scale_d, *rest, **kw)


TYPED = {"wgmma_mma": wgmma_mma}

__all__ = ["wgmma_mma"]
