"""The pipeline mutation test's observable/unobservable split (emulate/semantics/sites.py): which
synchronisations do work in an unmutated run, checked on nvcc sm_90a kernels where the answer
follows from the CUDA source (corpus/src/nvcc/wgmma_tma_sm90.cu)."""

from __future__ import annotations

import json
from pathlib import Path

from ptx2py import ptxgrammar
from ptx2py.emulate.frontend import run
from ptx2py.emulate.semantics.sites import recording
from ptx2py.ptxgrammar.tree import Block, Function, Instruction

ROOT = Path(__file__).resolve().parent.parent
SM90 = ROOT / "corpus" / "ptx" / "nvcc" / "wgmma_tma_sm90.sm_90a.ptx"


def _acted(kernel: str, **scalars):
    module = ptxgrammar.parse(SM90.read_text(), filename=SM90.name)
    side = json.loads((ROOT / "corpus" / "launch" / "nvcc" / "wgmma_tma_sm90.sm_90a.json").read_text())
    spec = next(k for k in side["kernels"] if k["kernel"] == kernel)
    for a in spec["args"]:
        if a["name"] in scalars:
            a["value"] = scalars[a["name"]]
    with recording() as acted:
        res = run(module, spec, filename=SM90.name)
    assert res.clean, res.reports
    fn = next(f for f in module.items if isinstance(f, Function) and f.name == kernel)
    names = []

    def visit(items):
        for item in items:
            if isinstance(item, Block):
                visit(item.items)
            elif isinstance(item, Instruction) and item.opcode in ("mbarrier", "wgmma", "fence", "cp"):
                names.append((item.name, id(item) in acted))
    visit(fn.body.items)
    return names


def test_double_wait_group_only_the_effective_one_is_observable():
    """gemm_wgmma_bf16: `wgmma.wait_group 1; wgmma.wait_group 0;` after one commit: the first
    completes nothing (one group, keep one), so raising its depth cannot show."""
    waits = [acted for name, acted in _acted("gemm_wgmma_bf16_m64n128", K=128) if "wait_group" in name]
    assert waits == [False, True]


def test_tma_tile_kernel_wait_fence_and_store_wait_are_observable():
    got = dict(_acted("tma_scale_tile"))
    assert got["mbarrier.try_wait.parity.shared::cta.b64"]          # the loaded tile lands through it
    assert got["fence.proxy.async.shared::cta"]                     # the TMA store reads the scaled tile
    assert got["cp.async.bulk.wait_group.read"]                     # it completes the store
    assert not got["fence.mbarrier_init.release.cluster"]           # the engine needs no init fence


def test_no_recording_outside_the_context():
    from ptx2py.emulate.semantics import sites

    assert not sites.active()
