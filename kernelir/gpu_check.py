#!/usr/bin/env python3
"""Run the fifteen compiled problems on a real GPU and check them against the
numpy references (kernelir/problems/reference.py) within each problem's
rtol/atol, at its ragged ``test_params`` and its default ``params``; time each
kernel, beside a PyTorch equivalent when torch is importable.

    python -m kernelir.gpu_check [--only NAME ...] [--no-time] [--target sm_90a]

Needs cuda-python (``cuda.bindings.driver``, or the older ``cuda.cuda``).
Launch order of arguments: every buffer as a u64 device pointer, then every
scalar param by dtype (kernelir.kernel_arguments).  Exit 0 when all pass,
1 on a mismatch, 77 when no GPU / cuda-python is available (skip).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2py.kernelir import PROBLEM_NAMES, REFERENCES, compile_kernel, load_problem, make_inputs  # noqa: E402
from ptx2py.kernelir.dtypes import convert, round_bf16  # noqa: E402
from ptx2py.kernelir.interp import _Run, eval_scalar  # noqa: E402

SKIP = 77


def driver():
    """The cuda-python driver module, or None."""
    from ptx2py.launch.driver import driver_module

    return driver_module()


class GPU:
    def __init__(self, cu):
        self.cu = cu
        self.ck(cu.cuInit(0))
        self.dev = self.ck(cu.cuDeviceGet(0))
        self.ctx = self.ck(cu.cuDevicePrimaryCtxRetain(self.dev))
        self.ck(cu.cuCtxSetCurrent(self.ctx))
        A = cu.CUdevice_attribute
        self.cc = (self.ck(cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev)),
                   self.ck(cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev)))
        name = self.ck(cu.cuDeviceGetName(128, self.dev))
        self.name = name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)

    def ck(self, result):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            _, msg = self.cu.cuGetErrorString(err)
            raise RuntimeError(f"CUDA error {int(err)}: {msg.decode() if isinstance(msg, bytes) else msg}")
        return rest[0] if len(rest) == 1 else (tuple(rest) if rest else None)

    def target(self):
        major, minor = self.cc
        return "sm_90a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"

    def load(self, ptx: str, name: str):
        image = np.frombuffer(ptx.encode() + b"\0", dtype=np.uint8)
        module = self.ck(self.cu.cuModuleLoadData(image.ctypes.data))
        return module, self.ck(self.cu.cuModuleGetFunction(module, name.encode()))

    def alloc(self, host: np.ndarray):
        ptr = self.ck(self.cu.cuMemAlloc(max(host.nbytes, 4)))
        self.ck(self.cu.cuMemcpyHtoD(ptr, host.ctypes.data, host.nbytes))
        return ptr

    def fetch(self, ptr, host: np.ndarray):
        self.ck(self.cu.cuMemcpyDtoH(host.ctypes.data, ptr, host.nbytes))
        return host

    def launch(self, func, grid, block, args):
        holders = [a for a in args]    # keep the scalars alive
        addrs = np.array([a.ctypes.data for a in holders], dtype=np.uint64)
        self.ck(self.cu.cuLaunchKernel(func, *grid, *block, 0, 0, addrs.ctypes.data, 0))

    def sync(self):
        self.ck(self.cu.cuCtxSynchronize())

    def time_ms(self, fn, reps=20):
        cu = self.cu
        start, stop = self.ck(cu.cuEventCreate(0)), self.ck(cu.cuEventCreate(0))
        fn()
        self.sync()
        times = []
        for _ in range(reps):
            self.ck(cu.cuEventRecord(start, 0))
            fn()
            self.ck(cu.cuEventRecord(stop, 0))
            self.ck(cu.cuEventSynchronize(stop))
            times.append(self.ck(cu.cuEventElapsedTime(start, stop)))
        cu.cuEventDestroy(start)
        cu.cuEventDestroy(stop)
        return statistics.median(times)


# ---------------------------------------------------------------- host data
def to_device_layout(values: np.ndarray, dtype: str) -> np.ndarray:
    """Host array in the buffer's memory layout (bf16 as raw uint16 bits)."""
    src = "f32" if values.dtype.kind == "f" else "s32"
    v = convert(values.reshape(-1).astype(np.float32 if src == "f32" else np.int64), src, dtype)
    if dtype == "bf16":
        return np.ascontiguousarray((np.asarray(round_bf16(v), np.float32).view(np.uint32) >> 16).astype(np.uint16))
    layout = {"f32": np.float32, "f16": np.float16, "s32": np.int32, "u32": np.uint32}[dtype]
    return np.ascontiguousarray(np.asarray(v).astype(layout))


def from_device_layout(raw: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bf16":
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw


def empty_layout(n: int, dtype: str) -> np.ndarray:
    layout = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "s32": np.int32, "u32": np.uint32}
    return np.zeros(n, layout[dtype])


def scalar(value, dtype: str) -> np.ndarray:
    if dtype == "f32":
        return np.array([value], np.float32)
    if dtype == "f16":
        return np.array([value], np.float16).view(np.uint16)
    if dtype == "bf16":
        return (np.array([round_bf16(np.float32(value))], np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.array([value], np.int32 if dtype == "s32" else np.uint32)


# ---------------------------------------------------------------- torch equivalents
def torch_equivalent(name, inputs, params):
    """A zero-argument callable running the same computation in PyTorch, or None."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    dev = "cuda"
    t = {k: torch.as_tensor(v).to(dev) for k, v in inputs.items()}
    if name == "relu_mul":
        t = {k: v.to(torch.bfloat16) for k, v in t.items()}
    p = params
    fns = {
        "scalar_add": lambda: t["x"] + p.get("alpha", 0.0),
        "vector_add": lambda: t["x"] + t["y"],
        "scale_shift": lambda: (t["x"].float() * p.get("a", 1.0) + p.get("b", 0.0)).half(),
        "relu_mul": lambda: torch.relu(t["x"]) * t["y"],
        "array_sum": lambda: t["x"].sum(),
        "sum_2p24": lambda: t["x"].sum(),
        "mean": lambda: t["x"].mean(),
        "row_sum": lambda: t["x"].sum(1),
        "rmsnorm": lambda: t["x"] * torch.rsqrt((t["x"] * t["x"]).mean(1, keepdim=True) + p.get("eps", 0.0)) * t["w"],
        "row_softmax": lambda: torch.softmax(t["x"], 1),
        "l2norm": lambda: torch.nn.functional.normalize(t["x"].float(), dim=1, eps=p.get("eps", 0.0)).half(),
        "matmul_512": lambda: t["A"] @ t["B"],
        "matmul_rect": lambda: t["A"] @ t["B"],
        "attention_d64": lambda: torch.softmax(t["Q"] @ t["K"].T / 8.0, 1) @ t["V"],
        "attention_d128": lambda: torch.softmax(t["Q"] @ t["K"].T / 128 ** 0.5, 1) @ t["V"],
    }
    fn = fns.get(name)
    if fn is None:
        return None

    def run():
        fn()
    run.sync = torch.cuda.synchronize
    return run


def torch_time_ms(run, reps=20):
    import torch
    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


# ---------------------------------------------------------------- one problem
def run_problem(gpu: GPU, name: str, sizes: str, target: str, timing: bool, details: dict | None = None):
    """(ok, max abs error, our ms, torch ms); an output left at its initial fill is not ok
    (details["untouched"] names them)."""
    kernel, meta = load_problem(name)
    params = {**meta["params"], **(meta["test_params"] if sizes == "test" else {})}
    inputs = make_inputs(name, params)
    ref = REFERENCES[name](inputs, params)
    run = _Run(kernel, inputs, params)        # sizes and launch shape, as the interpreter sees them
    grid = [v if isinstance(v, int) else eval_scalar(run, v, f"launch.grid[{i}]")
            for i, v in enumerate(kernel.launch.grid)]
    block = [v if isinstance(v, int) else eval_scalar(run, v, f"launch.block[{i}]")
             for i, v in enumerate(kernel.launch.block)]
    ptx = compile_kernel(kernel, target)
    module, func = gpu.load(ptx, kernel.name)
    ptrs, outs, args = {}, {}, []
    try:
        for b in kernel.buffers:
            n = int(np.prod(run.shapes[b.name]))
            host = to_device_layout(np.asarray(inputs[b.name]), b.dtype) if b.role != "output" \
                else empty_layout(n, b.dtype)
            ptrs[b.name] = gpu.alloc(host)
            if b.role != "input":
                outs[b.name] = (host.copy(), b.dtype, run.shapes[b.name])
            args.append(np.array([int(ptrs[b.name])], np.uint64))
        for p in kernel.params:
            args.append(scalar(params[p.name], p.dtype))
        gpu.launch(func, grid, block, args)
        gpu.sync()
        worst, ok = 0.0, True
        untouched = []
        for key, want in ref.items():
            host, dt, shape = outs[key]
            fill = host.copy()
            got = from_device_layout(gpu.fetch(ptrs[key], host), dt).astype(np.float64).reshape(shape)
            if host.tobytes() == fill.tobytes() and host.size:
                untouched.append(key)
                ok = False
            want = np.asarray(want, np.float64).reshape(shape)
            err = np.abs(got - want) - meta["rtol"] * np.abs(want)
            worst = max(worst, float(np.nanmax(np.abs(got - want))) if got.size else 0.0)
            if not np.allclose(got, want, rtol=meta["rtol"], atol=meta["atol"]) or np.isnan(got).any():
                ok = False
                bad = int(np.argmax(err.reshape(-1)))
                print(f"  {name}[{sizes}].{key}: mismatch at {bad}: got {got.reshape(-1)[bad]!r}, "
                      f"want {want.reshape(-1)[bad]!r}")
        if details is not None:
            details["untouched"] = untouched
        ours = theirs = None
        if timing and sizes == "full":
            ours = gpu.time_ms(lambda: gpu.launch(func, grid, block, args))
            teq = torch_equivalent(name, inputs, params)
            if teq is not None:
                theirs = torch_time_ms(teq)
        return ok, worst, ours, theirs
    finally:
        from ptx2py.verify.gpu_run import release_all

        release_all(lambda p: gpu.ck(gpu.cu.cuMemFree(p)), list(ptrs.values()))
        gpu.ck(gpu.cu.cuModuleUnload(module))


def run_case(case: dict, repeat: int = 0, warmup: int = 0) -> dict:
    """One part (c) case in this process (verify.gpu_child dispatches here by the case's runner):
    pass when the problem matches its reference and wrote every output."""
    details: dict = {}
    gpu = GPU(driver())
    ok, worst, _, _ = run_problem(gpu, case["source"]["problem"], case["launch"]["sizes"], case["target"], False,
                                  details)
    why = [] if ok else [f"max abs error {worst:.3g}"] + [f"output {n} unchanged from its initial fill"
                                                         for n in details.get("untouched", [])]
    row = {k: case[k] for k in ("id", "part", "target", "kernel", "policy", "bound", "reference", "expect_gpu",
                                "expect_engine")}
    return {**row, "result": "pass" if ok else "FAIL", "why": why, "max_abs_err": worst}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--target", help="default: from the device (sm_90a on sm_90)")
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--sizes", choices=("test", "full", "both"), default="both")
    args = ap.parse_args(argv)
    cu = driver()
    if cu is None:
        print("skip: cuda-python is not installed")
        return SKIP
    try:
        gpu = GPU(cu)
    except Exception as e:  # noqa: BLE001 - no driver / no device
        print(f"skip: no usable GPU ({e})")
        return SKIP
    target = args.target or gpu.target()
    print(f"device: {gpu.name} (sm_{gpu.cc[0]}{gpu.cc[1]}), target {target}")
    sizes = ("test", "full") if args.sizes == "both" else (args.sizes,)
    failed = []
    print(f"{'problem':16} {'sizes':5} {'ok':4} {'max abs err':>12} {'ptx2py ms':>10} {'torch ms':>9}")
    for name in args.only or PROBLEM_NAMES:
        for sz in sizes:
            try:
                ok, worst, ours, theirs = run_problem(gpu, name, sz, target, not args.no_time)
            except Exception as e:  # noqa: BLE001 - report every problem
                print(f"{name:16} {sz:5} ERROR {type(e).__name__}: {e}")
                failed.append(f"{name}[{sz}]")
                continue
            if not ok:
                failed.append(f"{name}[{sz}]")
            fmt = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
            print(f"{name:16} {sz:5} {'yes' if ok else 'NO':4} {worst:12.3g} {fmt(ours):>10} {fmt(theirs):>9}")
    print("all problems match their references" if not failed else f"FAILED: {', '.join(failed)}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
