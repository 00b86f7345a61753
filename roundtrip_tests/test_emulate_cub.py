"""Corpus CUB block primitives (nvcc, sm_80) on the CPU engine against numpy, two CTAs each,
under all three schedules: BlockScan, BlockReduce, WarpReduce, BlockHistogram; BlockRadixSort (pairs) is slow. These
kernels have no sidecar; the launches follow corpus/src/nvcc/cub_block.cu."""

from pathlib import Path

import numpy as np
import pytest

from ptx2py import emulate

PTX = Path(__file__).resolve().parent.parent / "corpus" / "ptx" / "nvcc" / "cub_block.sm_80.ptx"


def arg(name, dtype, count, init="zeros"):
    return {"name": name, "kind": "pointer", "dtype": dtype, "count": count, "init": init}


def launch(kernel, block, args, grid=2):
    return {"kernel": kernel, "grid": [grid, 1, 1], "block": [block, 1, 1], "seed": 3, "args": args}


def check_scan(o):
    x = o["in"].reshape(2, -1).astype(np.int64)
    want = (np.cumsum(x, axis=1) - x).astype(np.int32)
    return (o["out"].reshape(2, -1) == want).all()


def check_reduce(o):
    x = o["in"].reshape(2, -1).astype(np.float64)
    return np.allclose(o["out"][:2], x.sum(1), rtol=1e-5)


def check_sort(o, first_keys, first_vals):
    """SortBlockedToStriped then a striped store: each block's keys land in rank order; every
    (key, value) pair survives."""
    for b in range(2):
        keys, vals = o["keys"].reshape(2, -1)[b], o["vals"].reshape(2, -1)[b]
        k0, v0 = first_keys.reshape(2, -1)[b], first_vals.reshape(2, -1)[b]
        if not (np.diff(keys.astype(np.int64)) >= 0).all():
            return False
        if sorted(zip(keys.tolist(), vals.view(np.uint32).tolist())) != \
                sorted(zip(k0.tolist(), v0.view(np.uint32).tolist())):
            return False
    return True


def check_histogram(o):
    return (o["hist"] == np.bincount(o["in"][:1024], minlength=256)).all()


def check_warp_max(o):
    return (o["out"][:16] == o["in"].reshape(16, 32).max(1)).all()


CASES = {
    "block_scan_exclusive<128,4>": (launch("_Z20block_scan_exclusiveILi128ELi4EEvPKiPi", 128,
                                           [arg("in", "i32", 1024, "randint"), arg("out", "i32", 1024)]), check_scan),
    "block_reduce_sum<256,8>": (launch("_Z16block_reduce_sumILi256ELi8EEvPKfPf", 256,
                                       [arg("in", "fp32", 4096, "randn"), arg("out", "fp32", 2)]), check_reduce),
    "block_histogram": (launch("_Z15block_histogramPKhPj", 128,
                               [arg("in", "u8", 1024, "randint"), arg("hist", "u32", 256)]), check_histogram),
    "warp_reduce_max": (launch("_Z15warp_reduce_maxPKfPf", 256,
                               [arg("in", "fp32", 512, "randn"), arg("out", "fp32", 16)]), check_warp_max),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("schedule", ["inorder", "reverse", "random:5"])
def test_cub_block_primitive_matches_numpy(name, schedule):
    spec, check = CASES[name]
    r = emulate.run(PTX.read_text(), spec, schedule=schedule, filename=str(PTX))
    assert r.reports == [], [x.render() for x in r.reports[:3]]
    assert check(r.outputs)


@pytest.mark.slow
def test_cub_block_radix_sort_pairs():
    spec = launch("_Z16block_radix_sortILi128ELi8EEvPjPf", 128,
                  [arg("keys", "u32", 2048, "randint"), arg("vals", "fp32", 2048, "randn")])
    from ptx2py.launch import plan as plan

    rng = np.random.default_rng(3)
    keys0 = plan.host_array(plan.plan_arguments(plan.entry_info(PTX.read_text(), spec["kernel"]), spec)[0], rng)
    vals0 = plan.host_array(plan.plan_arguments(plan.entry_info(PTX.read_text(), spec["kernel"]), spec)[1], rng)
    r = emulate.run(PTX.read_text(), spec, filename=str(PTX))
    assert r.reports == []
    assert check_sort(r.outputs, keys0, vals0)
