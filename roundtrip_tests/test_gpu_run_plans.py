"""The host side of `ptx2py verify --run` (verify/gpu_run.py), without a GPU: every corpus
kernel with a launch sidecar gets an argument plan that matches its `.entry` parameter list,
TMA descriptor requests satisfy cuTensorMapEncodeTiled's rules, the packed parameter block
holds the right bytes at the right places, and every cuda.bindings call the launcher makes
accepts its argument types."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from ptx2py.launch import plan as g
from ptx2py.verify import gpu_run

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ROOT / "corpus" / "launch"
SIDECARS = sorted(LAUNCH.rglob("*.json")) if LAUNCH.is_dir() else []


def _specs():
    out = []
    for side in SIDECARS:
        data = json.loads(side.read_text())
        for spec in g.kernel_specs(data):
            out.append(pytest.param(side, spec, id=f"{side.parent.name}/{side.stem}:{spec['kernel']}"))
    return out


SPECS = _specs()
_TEXT: dict[Path, str] = {}


def _ptx(side: Path, spec: dict) -> str:
    p = ROOT / "corpus" / spec["ptx"]
    if p not in _TEXT:
        _TEXT[p] = p.read_text()
    return _TEXT[p]


def test_there_are_sidecars():
    assert len(SPECS) > 200
    producers = {s.parent.name for s in SIDECARS}
    assert {"nvcc", "triton", "pallas"} <= producers


@pytest.mark.parametrize("side,spec", SPECS)
def test_plan_matches_entry(side, spec):
    text = _ptx(side, spec)
    assert g.sidecar_for(str(ROOT / "corpus" / spec["ptx"])) == side
    entry = g.entry_info(text, spec["kernel"])
    plans = g.plan_arguments(entry, spec)
    # every .entry param planned once, in order, with the declared size and alignment
    assert [p.index for p in plans] == list(range(len(entry.params)))
    for p, decl in zip(plans, entry.params):
        assert p.param == decl and p.size == decl.size and p.align == decl.align
        if p.role in ("buffer", "scratch"):
            assert decl.size == 8
        if p.role == "buffer":
            assert p.count > 0 and p.nbytes == p.count * g.dtype_bytes(p.dtype)
            assert p.init in ("randn", "rand", "randint", "zeros", "ones")
        if p.role == "tensormap":
            # a CUtensorMap needs 64-byte alignment (Triton declares .align 64, nvcc .align 128)
            assert decl.size == 128 and decl.align % 64 == 0 and decl.dim == 128
        if p.role in ("scalar", "desc-shape", "desc-stride", "desc-flag"):
            assert len(g.scalar_bytes(p)) == decl.size
    # Triton / Pallas: the two hidden scratch pointers come last; nvcc: none
    hidden = [p for p in plans if p.role == "scratch"]
    if "global_scratch_size" in spec:
        assert [p.index for p in hidden] == [len(plans) - 2, len(plans) - 1]
        assert hidden[0].nbytes == int(spec["global_scratch_size"]) * int(np.prod(spec["grid"]))
    else:
        assert not hidden
    # every sidecar argument is used
    assert {a["name"] for a in spec["args"]} <= {p.arg for p in plans}
    # the packed block: aligned, in order, non-overlapping
    size = g.param_layout(plans)
    end = 0
    for p in plans:
        assert p.offset % p.align == 0 and p.offset >= end
        end = p.offset + p.size
    assert size == end
    req = g.launch_request(spec, entry)
    assert min(req["grid"]) >= 1 and min(req["block"]) >= 1 and np.prod(req["block"]) <= 1024
    assert req["optin"] == (req["shared"] > 48 * 1024)
    if entry.reqntid:
        assert np.prod(entry.reqntid) == np.prod(req["block"])
    if "num_warps" in spec:
        assert req["block"][0] == 32 * spec["num_warps"]
    assert req["shared"] <= 227 * 1024 or "sm100" in side.stem or "sm120" in side.stem


TMA = [s for s in SPECS if any(a["kind"] == "tma-descriptor" for a in s.values[1]["args"])]


def test_tma_kernels_present():
    assert any("matmul_tma_fp16_sm90" in s.id for s in TMA)


@pytest.mark.parametrize("side,spec", TMA)
def test_tensor_map_requests(side, spec):
    plans = g.plan_arguments(g.entry_info(_ptx(side, spec), spec["kernel"]), spec)
    metas = spec.get("tensordesc_meta") or []
    tmaps = [p for p in plans if p.role == "tensormap"]
    assert len(tmaps) == len(metas)
    for p in tmaps:
        meta = metas[p.value]
        req = g.tensor_map_request(p, meta, global_address=1 << 21)
        assert g.check_tensor_map_request(req) == []
        a = p.source
        assert req["rank"] == len(a["shape"]) == len(a["strides"])
        assert req["global_dim"] == a["shape"][::-1]
        assert all(s % 16 == 0 for s in req["global_strides"])
        assert req["elem_size"] == g.dtype_bytes(a["dtype"]) == meta["elem_size"]
        assert all(gd % b == 0 for gd, b in zip(req["global_dim"], req["box_dim"]))
        # Triton's box (meta.block_size) tiles the kernel's block_shape
        assert all(bs % b == 0 for bs, b in zip(a["block_shape"], meta["block_size"]))
        # the i32 shape / i64 stride params that follow carry the sidecar's values
        follow = [q for q in plans if q.arg == p.arg and q.role in ("desc-shape", "desc-stride")]
        assert [q.value for q in follow] == list(a["shape"]) + list(a["strides"])
        assert [q.size for q in follow] == [4] * len(a["shape"]) + [8] * len(a["strides"])


def test_worked_example_tensor_maps_exact():
    side = LAUNCH / "triton" / "matmul_tma_fp16_sm90.json"
    spec = g.kernel_specs(json.loads(side.read_text()))[0]
    plans = g.plan_arguments(g.entry_info(_ptx(side, spec), spec["kernel"]), spec)
    assert [p.role for p in plans] == (["tensormap", "desc-shape", "desc-shape", "desc-stride", "desc-stride"] * 3
                                       + ["scalar"] * 3 + ["scratch"] * 2)
    reqs = {p.arg: g.tensor_map_request(p, spec["tensordesc_meta"][p.value], 0x7F0000000000)
            for p in plans if p.role == "tensormap"}
    a = reqs["a_desc"]
    assert a == {"data_type": 6, "rank": 2, "global_address": 0x7F0000000000, "global_dim": [2048, 2048],
                 "global_strides": [4096], "box_dim": [64, 128], "element_strides": [1, 1], "interleave": 0,
                 "swizzle": 3, "l2_promotion": 2, "oob_fill": 0, "elem_size": 2}
    assert reqs["c_desc"]["box_dim"] == [64, 128]     # meta block [128, 64], not the [128, 128] block_shape
    assert g.launch_request(spec)["optin"] and g.launch_request(spec)["shared"] == 98328


def test_pre_hopper_descriptor_decomposition():
    side = LAUNCH / "triton" / "matmul_tma_fp16_sm80.json"
    spec = g.kernel_specs(json.loads(side.read_text()))[0]
    plans = g.plan_arguments(g.entry_info(_ptx(side, spec), spec["kernel"]), spec)
    roles = ["buffer"] + ["desc-shape"] * 2 + ["desc-stride"] * 2 + ["desc-flag"] * 2 + \
        ["desc-shape"] * 2 + ["desc-stride"] * 2
    assert [p.role for p in plans] == roles * 3 + ["scalar"] * 3 + ["scratch"] * 2
    assert [p.size for p in plans[:11]] == [8, 8, 8, 8, 8, 1, 1, 4, 4, 8, 8]


def test_tma_enums_match_cuda_bindings():
    cu = pytest.importorskip("cuda.bindings.driver")
    T = cu.CUtensorMapDataType
    assert int(T.CU_TENSOR_MAP_DATA_TYPE_FLOAT16) == g._TMA_HOST_DTYPE["fp16"] == g.TMA_DTYPE_DEVICE_TO_HOST[6]
    assert int(T.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) == g._TMA_HOST_DTYPE["bf16"] == g.TMA_DTYPE_DEVICE_TO_HOST[10]
    assert int(T.CU_TENSOR_MAP_DATA_TYPE_UINT8) == g._TMA_HOST_DTYPE["fp8e4nv"] == g.TMA_DTYPE_DEVICE_TO_HOST[0]
    assert int(T.CU_TENSOR_MAP_DATA_TYPE_FLOAT32) == 7 and int(T.CU_TENSOR_MAP_DATA_TYPE_FLOAT64) == 8
    assert int(cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B) == 3
    assert int(cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B) == g.L2_PROMOTION_128B
    assert int(cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == g.OOB_FILL_NONE
    assert int(cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE) == g.INTERLEAVE_NONE
    assert int(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 8


def test_tensor_map_checks_catch_bad_requests():
    arg = {"name": "x", "dtype": "fp16", "shape": [100, 30], "strides": [30, 1], "block_shape": [64, 64]}
    bad = g.check_tensor_map_request(g.tensor_map_request(arg, None, 8))
    text = " ".join(bad)
    assert "16-byte aligned" in text and "multiple of 16" in text and "larger than the tensor dim" in text
    with pytest.raises(g.PlanError):
        g.tensor_map_request({**arg, "strides": [1, 100]})


# ------------------------------------------------------------------ host data and comparison
def _plan(dtype, init, n=4096):
    decl = g.ParamDecl("p", "u64", None, 8, 8, True)
    return g.ArgPlan(0, decl, "buffer", "x", g.canon_dtype(dtype), count=n, init=init)


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16", "fp64", "i32", "u8", "u32", "fp8e4nv", "fp8e5",
                                   "float16", "bfloat16", "float32"])
@pytest.mark.parametrize("init", ["randn", "rand", "randint", "zeros", "ones"])
def test_host_arrays(dtype, init):
    a = g.host_array(_plan(dtype, init), np.random.default_rng(0))
    b = g.host_array(_plan(dtype, init), np.random.default_rng(0))
    assert a.tobytes() == b.tobytes() and a.size == 4096 and a.itemsize == g.dtype_bytes(dtype)
    f = g.to_float(a, dtype)
    if f is not None:
        assert np.isfinite(f).all()
        if init == "ones":
            assert (f == 1).all()
        if init == "randn" and g.canon_dtype(dtype) in ("fp32", "fp16", "bf16", "fp64"):
            assert 0.8 < f.std() < 1.2
    if init == "randint" and f is not None:
        assert f.min() >= 0 and f.max() < 256 and (f == np.round(f)).all()
    if g.canon_dtype(dtype) == "fp8e4nv":
        assert not ((a & 0x7F) == 0x7F).any()            # e4m3fn NaN
    if g.canon_dtype(dtype) == "fp8e5":
        assert not ((a & 0x7C) == 0x7C).any()            # e5m2 inf / NaN


def test_compare():
    a = np.array([1.0, 2.0, np.nan], np.float32)
    assert g.compare(a, a.copy(), "fp32")["ok"]
    b = a.copy()
    b[1] = np.nextafter(np.float32(2), np.float32(3))
    c = g.compare(b, a, "fp32")
    assert not c["ok"] and not c["bitwise"] and c["n_diff"] == 1 and 0 < c["max_abs"] < 1e-6
    assert g.compare(b, a, "fp32", rtol=1e-6)["ok"]
    assert not g.compare(b, a, "fp32", atol=1e-9)["ok"]
    bf = g._to_bf16_bits(np.array([1.0, 1.5], np.float32))
    assert list(bf) == [0x3F80, 0x3FC0]
    assert g.compare(bf + np.uint16(1), bf, "bf16", rtol=1e-2)["ok"]


def test_scalar_bytes():
    decl4 = g.ParamDecl("p", "f32", None, 4, 4, False)
    assert g.scalar_bytes(g.ArgPlan(0, decl4, "scalar", "eps", "fp32", 1e-5)) == struct.pack("<f", 1e-5)
    decl8 = g.ParamDecl("p", "u64", None, 8, 8, False)
    assert g.scalar_bytes(g.ArgPlan(0, decl8, "desc-stride", "s", "i64", 2048)) == struct.pack("<q", 2048)
    with pytest.raises(g.PlanError):
        g.scalar_bytes(g.ArgPlan(0, decl8, "scalar", "n", "i32", 1))


def test_gpu_name_and_version_lowering():
    assert gpu_run.gpu_name_for("sm_90a", (9, 0)) == "sm_90a"
    assert gpu_run.gpu_name_for("sm_80", (9, 0)) == "sm_90"
    with pytest.raises(g.PlanError):
        gpu_run.gpu_name_for("sm_100a", (9, 0))
    assert gpu_run.driver_ptx_isa(12080) == (8, 7) and gpu_run.driver_ptx_isa(13000) == (9, 0)
    text = "//\n.version 9.4\n.target sm_90a\n"
    assert gpu_run.lower_ptx_version(text, (8, 7)) == "//\n.version 8.7\n.target sm_90a\n"


# ------------------------------------------------------------------ a session on a fake GPU
class FakeGpu:
    """Stands in for gpu_run.Gpu: hands out fake device addresses and records what is written."""

    def __init__(self):
        self.next = 0x7000_0000_0000
        self.mem, self.encoded, self.launches = {}, [], []

    def alloc(self, nbytes):
        p = self.next
        self.next += (max(nbytes, 256) + 0xFFFF) & ~0xFFFF
        return p

    def upload(self, dptr, host):
        self.mem[dptr] = host.copy()

    def download(self, dptr, host):
        host[...] = self.mem[dptr]
        return host

    def zero(self, dptr, n):
        self.mem[dptr] = np.zeros(n, np.uint8)

    def free(self, dptr):
        pass

    def encode_tensor_map(self, req):
        self.encoded.append(req)
        return (json.dumps([req["global_address"], req["box_dim"]]).encode() + b"\0" * 128)[:128]

    def launch(self, func, req, addr):
        self.launches.append((func, req, addr))


@pytest.mark.parametrize("stem", ["triton/matmul_tma_fp16_sm90", "triton/matmul_devdesc_fp16_sm90",
                                  "pallas/softmax_f32_1024_sm90", "nvcc/scan_softmax.sm_90a"])
def test_session_packs_parameters(stem):
    import ctypes

    side = LAUNCH / f"{stem}.json"
    spec = g.kernel_specs(json.loads(side.read_text()))[0]
    fake = FakeGpu()
    s = gpu_run.Session(fake, _ptx(side, spec), spec)
    assert s.base_addr % 64 == 0 and len(s.kparams) == len(s.plans)
    for p, addr in zip(s.plans, s.kparams):
        assert addr % p.align == 0
        raw = ctypes.string_at(int(addr), p.size)
        if p.role == "buffer":
            assert struct.unpack("<Q", raw)[0] == s.dev[p.index]
        elif p.role == "tensormap":
            got = json.loads(raw.rstrip(b"\0"))
            assert got[0] == s.dev[p.index]
            assert got[1] == spec["tensordesc_meta"][p.value]["block_size"][::-1]
        elif p.role == "scratch":
            want = s.scratch[p.index][0] if p.index in s.scratch else 0
            assert struct.unpack("<Q", raw)[0] == want
        else:
            assert raw == g.scalar_bytes(p)
    if "devdesc" in stem:
        assert s.scratch and list(s.scratch.values())[0][1] == 384 * 256
    s.reset()
    outs = s.outputs()
    assert set(outs) == {p.arg for p in s.plans if p.role in ("buffer", "tensormap")}
    s.launch("f")
    assert fake.launches[0][2] == int(s.kparams.ctypes.data)
    s.close()


# ------------------------------------------------------------------ cuda.bindings argument types
def test_driver_calls_accept_their_arguments():
    """Each driver call the launcher makes, with the argument types it passes. Without a driver
    library the call must fail on loading the driver (the arguments converted), never with a
    TypeError; with a driver and no GPU, with a CUDA error."""
    cu = pytest.importorskip("cuda.bindings.driver")
    if gpu_run.skip_reason() is None:
        pytest.skip("a GPU is present: the gpu-marked tests cover the real calls")
    gpu = object.__new__(gpu_run.Gpu)
    gpu.cu, gpu.cc, gpu.smem_optin, gpu.driver_version = cu, (9, 0), 232448, 13000
    req = g.tensor_map_request({"name": "a", "dtype": "fp16", "shape": [256, 256], "strides": [256, 1],
                                "block_shape": [128, 64]},
                               {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64]}, 1 << 20)
    host = np.zeros(64, np.float32)
    kp = np.zeros(4, np.uint64)
    calls = {
        "encode_tensor_map": lambda: gpu.encode_tensor_map(req),
        "launch": lambda: gpu.launch(cu.CUfunction(), {"grid": [1, 2, 3], "block": [128, 1, 1], "shared": 98304},
                                     int(kp.ctypes.data)),
        "upload": lambda: gpu.upload(cu.CUdeviceptr(0), host),
        "download": lambda: gpu.download(cu.CUdeviceptr(0), host),
        "zero": lambda: gpu.zero(cu.CUdeviceptr(0), 64),
        "alloc": lambda: gpu.alloc(1024),
        "load_image": lambda: gpu._load_image(b".version 9.0\n"),
        "function": lambda: gpu.function(cu.CUmodule(), "k"),
        "set_dynamic_smem": lambda: gpu.set_dynamic_smem(cu.CUfunction(), 98304),
        "sync": lambda: gpu.sync(1.0),
        "event_record": lambda: gpu.ck(cu.cuEventRecord(cu.CUevent(), 0)),
        "event_query": lambda: cu.cuEventQuery(cu.CUevent()),
        "event_elapsed": lambda: gpu.ck(cu.cuEventElapsedTime(cu.CUevent(), cu.CUevent())),
        "func_set_attr": lambda: gpu.ck(cu.cuFuncSetAttribute(
            cu.CUfunction(), cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 98304)),
        "device_attr": lambda: gpu.ck(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, cu.CUdevice(0))),
        "driver_version": lambda: gpu.ck(cu.cuDriverGetVersion()),
        "module_unload": lambda: cu.cuModuleUnload(cu.CUmodule()),
    }
    for name, fn in calls.items():
        try:
            fn()
        except (TypeError, ValueError, AttributeError, OverflowError) as e:
            pytest.fail(f"{name}: the arguments did not convert: {type(e).__name__}: {e}")
        except Exception as e:  # noqa: BLE001 - driver missing / CUDA error: arguments were accepted
            assert type(e).__name__ in ("DynamicLibNotFoundError", "CudaError", "RuntimeError"), (name, e)


def test_run_pair_skips_without_gpu():
    if gpu_run.skip_reason() is None:
        pytest.skip("a GPU is present")
    base = ROOT / "corpus" / "ptx" / "triton" / "matmul_tma_fp16_sm90.ptx"
    res = gpu_run.run_pair(str(base), base.read_text(), repeat=3, rtol=1e-3)
    assert res["status"] == "skipped" and res["message"].startswith("--run skipped:")


def test_format_table():
    rows = [{"label": "k", "status": "match", "bitwise": True, "max_abs": 0.0, "max_rel": 0.0,
             "base_ms": 0.5, "edited_ms": 0.25, "ratio": 0.5},
            {"kernel": "j", "status": "error", "error": "CudaError: boom"}]
    t = gpu_run.format_table(rows).splitlines()
    assert "base ms" in t[0] and "identical" in t[1] and "0.500" in t[1] and "boom" in t[2]
