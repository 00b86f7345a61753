"""Launch a base and an edited PTX kernel on a GPU, compare their outputs and time them.

Launch descriptions come from the sidecar JSON next to the corpus (`corpus/launch/<producer>/
<stem>.json`, see corpus/README.md): kernel name, grid, block, dynamic shared bytes, and per
argument its kind (pointer / scalar / tma-descriptor), dtype, element count (or shape) or scalar
value, and init (randn / rand / randint / zeros / ones).

The work is split in two:

* pure functions in launch/plan.py, testable without a GPU (roundtrip_tests/test_gpu_run_plans.py):
  the `.entry` parameter list, one ArgPlan per PTX parameter, the parameter layout,
  cuTensorMapEncodeTiled requests, seeded host data and the comparison of results;
* a thin driver layer over `cuda.bindings.driver` (cuModuleLoadData, cuTensorMapEncodeTiled,
  cuLaunchKernel with a packed `kernelParams` array, cuLaunchKernelEx with the cluster-dimension
  attribute for cluster launches, CUDA events for timing). `PTX2PY_CUDA_DRIVER=MODULE` names
  another module with the same calls (a stand-in driver for tests without a GPU).


Without cuda-python, a driver or a GPU, `run_pair` returns {"status": "skipped", "message": ...}.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ptx2py.launch.driver import driver_module  # gpu_run.driver_module: tests replace it
from ptx2py.launch.plan import (  # noqa: F401  (re-exported: the plans belong to a run)
    LAUNCH,
    PlanError,
    check_tensor_map_request,
    cluster_launch_request,
    compare,
    entry_info,
    host_array,
    input_array,
    kernel_specs,
    launch_request,
    param_layout,
    plan_arguments,
    scalar_bytes,
    sidecar_for,
    tensor_map_request,
)


# ----------------------------------------------------------------------------- assembling
def _ptx_version(text: str) -> tuple[int, int] | None:
    m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _ptx_target(text: str) -> str | None:
    m = re.search(r"^\s*\.target\s+([\w]+)", text, re.M)
    return m.group(1) if m else None


def gpu_name_for(ptx_target: str | None, cc: tuple[int, int]) -> str:
    """The --gpu-name for a PTX target on a device: arch-specific targets (sm_90a) must match
    the device exactly; portable ones assemble for the device's own sm_XY."""
    dev = f"sm_{cc[0]}{cc[1]}"
    if ptx_target and ptx_target.endswith(("a", "f")):
        if ptx_target[:-1] != dev:
            raise PlanError(f"PTX targets {ptx_target}, the device is {dev}")
        return ptx_target
    if ptx_target:
        m = re.match(r"sm_(\d+)", ptx_target)
        if m and int(m.group(1)) > cc[0] * 10 + cc[1]:
            raise PlanError(f"PTX targets {ptx_target}, newer than the device ({dev})")
    return dev


def driver_ptx_isa(driver_version: int) -> tuple[int, int]:
    """Newest PTX ISA the driver's JIT accepts (cuDriverGetVersion: 1000*major + 10*minor)."""
    from .tools import ptx_isa_for_release

    return ptx_isa_for_release((driver_version // 1000, (driver_version % 1000) // 10))


def lower_ptx_version(text: str, isa: tuple[int, int]) -> str:
    return re.sub(r"^(\s*\.version\s+)\d+\.\d+", rf"\g<1>{isa[0]}.{isa[1]}", text, count=1, flags=re.M)


def assemble_cubin(ptx: str, gpu_name: str, tool=None, fmad: bool = True) -> tuple[bytes, str]:
    """ptx -> cubin with `tool`, or the first ptxas new enough for its .version (verify.tools).
    fmad=False: `--fmad=false`, so that no mul + add pair is contracted into one FFMA and every
    float operation rounds as the PTX text says (the build compared bit for bit with the engine)."""
    from .tools import find_ptxas

    cache = _cubin_cache_path(ptx, gpu_name, tool, fmad)
    if cache is not None and cache.is_file():
        return cache.read_bytes(), cache.with_suffix(".tool").read_text()
    if tool is None:
        tool, found = find_ptxas(_ptx_version(ptx))
        if tool is None:
            raise RuntimeError("no ptxas supports PTX ISA %s; found: %s" % (
                _ptx_version(ptx), "; ".join(t.describe() for t in found) or "none"))
    with tempfile.TemporaryDirectory(prefix="ptx2py-run-") as d:
        src, out = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx)
        flags = [] if fmad else ["--fmad=false"]
        r = subprocess.run([tool.path, "--gpu-name", gpu_name, *flags, "-o", str(out), str(src)],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"{tool.path} failed: {r.stderr.strip()[:2000]}")
        image, desc = out.read_bytes(), tool.describe() + ("" if fmad else " --fmad=false")
    if cache is not None:      # written whole, then renamed: children share the folder
        part = cache.with_suffix(f".{os.getpid()}.part")
        part.write_bytes(image)
        cache.with_suffix(".tool").write_text(desc)
        part.replace(cache)
    return image, desc


def _cubin_cache_path(ptx: str, gpu_name: str, tool, fmad: bool) -> Path | None:
    """Where $PTX2PY_CUBIN_CACHE keeps the cubin of this PTX, target and build (the GPU suite
    assembles each module once, not once per kernel); None without the variable or with an
    explicit tool."""
    import hashlib

    folder = os.environ.get("PTX2PY_CUBIN_CACHE")
    if not folder or tool is not None:
        return None
    key = hashlib.sha256(f"{gpu_name}\0{fmad}\0{ptx}".encode()).hexdigest()[:32]
    return Path(folder) / f"{key}.cubin"


# ----------------------------------------------------------------------------- driver layer
class CudaError(RuntimeError):
    pass


class Gpu:
    """Primary context on device 0, through cuda.bindings.driver."""

    def __init__(self, cu=None):
        self.cu = cu or driver_module()
        if self.cu is None:
            raise ImportError("cuda-python (cuda.bindings) is not installed")
        cu = self.cu
        self.ck(cu.cuInit(0))
        self.dev = self.ck(cu.cuDeviceGet(0))
        self.ctx = self.ck(cu.cuDevicePrimaryCtxRetain(self.dev))
        self.ck(cu.cuCtxSetCurrent(self.ctx))
        A = cu.CUdevice_attribute
        self.cc = (self.attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                   self.attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
        self.smem_optin = self.attr(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        name = self.ck(cu.cuDeviceGetName(128, self.dev))
        self.name = name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)
        self.driver_version = int(self.ck(cu.cuDriverGetVersion()))
        self._load_method: dict[str, str] = {}

    def attr(self, a) -> int:
        return int(self.ck(self.cu.cuDeviceGetAttribute(a, self.dev)))

    def ck(self, result):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            try:
                _, msg = self.cu.cuGetErrorString(err)
                msg = msg.decode() if isinstance(msg, bytes) else msg
            except Exception:  # noqa: BLE001
                msg = ""
            raise CudaError(f"CUDA error {int(err)} ({getattr(err, 'name', err)}): {msg}")
        return rest[0] if len(rest) == 1 else (tuple(rest) if rest else None)

    # -- modules
    def _load_image(self, image: bytes):
        import numpy as np

        buf = np.frombuffer(image + b"\0", dtype=np.uint8).copy()
        return self.ck(self.cu.cuModuleLoadData(buf.ctypes.data))

    def load(self, ptx: str, method: str | None = None, fmad: bool = True):
        """Load a PTX module. Methods, tried in order unless one is given: `ptxas` (assemble to a
        cubin with the newest suitable ptxas, as Triton does), `jit` (the driver JIT),
        `jit-lowered` (the driver JIT after lowering `.version` to the driver's ISA).
        fmad=False assembles with `--fmad=false` (ptxas methods only: the JIT would contract).
        Returns (module, method, note)."""
        errors = []
        methods = [method] if method else ["ptxas", "jit", "ptxas-lowered", "jit-lowered"]
        if not fmad:
            methods = [m for m in methods if m.startswith("ptxas")]
            if not methods:
                raise CudaError(f"load method {method} cannot build without FMA contraction")
        for m in methods:
            try:
                if m == "ptxas":
                    gpu = gpu_name_for(_ptx_target(ptx), self.cc)
                    cubin, tool = assemble_cubin(ptx, gpu, fmad=fmad)
                    return self._load_image(cubin), m, f"{tool}, --gpu-name {gpu}"
                if m == "jit":
                    return self._load_image(ptx.encode()), m, "driver JIT"
                if m == "ptxas-lowered":
                    module, note = self._load_lowered_cubin(ptx, fmad)
                    return module, m, note
                if m == "jit-lowered":
                    isa = driver_ptx_isa(self.driver_version)
                    return (self._load_image(lower_ptx_version(ptx, isa).encode()), m,
                            f"driver JIT, .version lowered to {isa[0]}.{isa[1]}")
                raise ValueError(f"unknown load method {m}")
            except PlanError:
                raise
            except Exception as e:  # noqa: BLE001 - try the next method
                errors.append(f"{m}: {type(e).__name__}: {e}")
        raise CudaError("could not load the module: " + " | ".join(errors))

    def _load_lowered_cubin(self, ptx: str, fmad: bool = True):
        """Older ptxas releases first (no newer than the driver where possible), the PTX's
        `.version` lowered to what each accepts: a cubin an older driver can load."""
        from .tools import find_ptxas_all

        gpu = gpu_name_for(_ptx_target(ptx), self.cc)
        drv = (self.driver_version // 1000, (self.driver_version % 1000) // 10)
        tools = sorted((t for t in find_ptxas_all() if t.release), key=lambda t: t.release)
        tools = [t for t in tools if t.release <= drv] or tools
        errors = []
        for t in tools:
            try:
                text = ptx
                v = _ptx_version(ptx)
                if v and v > t.max_ptx:
                    text = lower_ptx_version(ptx, t.max_ptx)
                cubin, desc = assemble_cubin(text, gpu, t, fmad)
                return self._load_image(cubin), f"{desc}, --gpu-name {gpu}, .version {_ptx_version(text)}"
            except Exception as e:  # noqa: BLE001
                errors.append(f"{t.path}: {e}")
        raise CudaError("; ".join(errors) or "no ptxas found")

    def function(self, module, name: str):
        return self.ck(self.cu.cuModuleGetFunction(module, name.encode()))

    def set_dynamic_smem(self, func, shared: int):
        """The opt-in a launch needs: the kernel's static shared memory plus the launch's dynamic
        bytes above the default 48 KiB (static alone may push a small dynamic request over it)."""
        cu = self.cu
        static = int(self.ck(cu.cuFuncGetAttribute(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func)))
        if static + shared > self.smem_optin:
            raise CudaError(f"{static} B static + {shared} B dynamic shared memory exceeds the "
                            f"device's opt-in limit {self.smem_optin} B")
        if needs_smem_optin(static, shared):
            self.ck(cu.cuFuncSetAttribute(
                func, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared))

    # -- memory
    def alloc(self, nbytes: int):
        return self.ck(self.cu.cuMemAlloc(max(int(nbytes), 256)))

    def upload(self, dptr, host):
        if host.nbytes:
            self.ck(self.cu.cuMemcpyHtoD(dptr, host.ctypes.data, host.nbytes))

    def download(self, dptr, host):
        if host.nbytes:
            self.ck(self.cu.cuMemcpyDtoH(host.ctypes.data, dptr, host.nbytes))
        return host

    def zero(self, dptr, nbytes):
        self.ck(self.cu.cuMemsetD8(dptr, 0, max(int(nbytes), 256)))

    def free(self, dptr):
        self.ck(self.cu.cuMemFree(dptr))

    def unload(self, module):
        self.ck(self.cu.cuModuleUnload(module))

    def encode_tensor_map(self, req: dict) -> bytes:
        import ctypes

        cu = self.cu
        tmap = self.ck(cu.cuTensorMapEncodeTiled(
            cu.CUtensorMapDataType(req["data_type"]), req["rank"], req["global_address"],
            [cu.cuuint64_t(x) for x in req["global_dim"]],
            [cu.cuuint64_t(x) for x in req["global_strides"]],
            [cu.cuuint32_t(x) for x in req["box_dim"]],
            [cu.cuuint32_t(x) for x in req["element_strides"]],
            cu.CUtensorMapInterleave(req["interleave"]), cu.CUtensorMapSwizzle(req["swizzle"]),
            cu.CUtensorMapL2promotion(req["l2_promotion"]), cu.CUtensorMapFloatOOBfill(req["oob_fill"])))
        return ctypes.string_at(tmap.getPtr(), 128)

    # -- launching
    def launch(self, func, req: dict, kparams_addr: int):
        """cuLaunchKernel, or cuLaunchKernelEx with the cluster-dimension attribute when the
        request has a cluster of more than one CTA (the grid counts CTAs)."""
        g, b = req["grid"], req["block"]
        cluster = list(req.get("cluster") or (1, 1, 1))
        if cluster == [1, 1, 1]:
            self.ck(self.cu.cuLaunchKernel(func, g[0], g[1], g[2], b[0], b[1], b[2], req["shared"], 0,
                                           kparams_addr, 0))
            return
        cu = self.cu
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster
        cfg = cu.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = g
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = b
        cfg.sharedMemBytes = req["shared"]
        cfg.hStream = cu.CUstream(0) if hasattr(cu, "CUstream") else 0    # the default stream
        cfg.attrs = [attr]
        cfg.numAttrs = 1
        self.ck(cu.cuLaunchKernelEx(cfg, func, kparams_addr, 0))

    def sync(self, timeout_s: float = 60.0):
        """cuCtxSynchronize, but give up (raise) when the work is still running after timeout_s."""
        cu = self.cu
        ev = self.ck(cu.cuEventCreate(0))
        try:
            self.ck(cu.cuEventRecord(ev, 0))
            deadline = time.monotonic() + timeout_s
            while True:
                r = cu.cuEventQuery(ev)
                err = r[0] if isinstance(r, tuple) else r
                if int(err) == 0:
                    break
                if err != cu.CUresult.CUDA_ERROR_NOT_READY:
                    self.ck((err,))
                if time.monotonic() > deadline:
                    raise TimeoutError(f"kernel still running after {timeout_s:.0f} s (hang?)")
                time.sleep(0.0005)
            self.ck(cu.cuCtxSynchronize())
        finally:
            cu.cuEventDestroy(ev)

    def time_ms(self, fn, repeat: int, warmup: int) -> list[float]:
        cu = self.cu
        for _ in range(warmup):
            fn()
        self.sync()
        start, stop = self.ck(cu.cuEventCreate(0)), self.ck(cu.cuEventCreate(0))
        times = []
        try:
            for _ in range(repeat):
                self.ck(cu.cuEventRecord(start, 0))
                fn()
                self.ck(cu.cuEventRecord(stop, 0))
                self.sync()
                times.append(float(self.ck(cu.cuEventElapsedTime(start, stop))))
        finally:
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(stop)
        return times


def needs_smem_optin(static: int, dynamic: int) -> bool:
    """Above 48 KiB of shared memory per CTA (static + dynamic) a kernel must opt in."""
    return static + dynamic > 48 * 1024


def release_all(release, handles) -> None:
    """Call release(h) for every handle; raise the first failure once all were tried."""
    errors = []
    for h in handles:
        try:
            release(h)
        except Exception as e:  # noqa: BLE001 - release the rest first
            errors.append(e)
    if errors:
        raise errors[0]


_GPU: Gpu | None = None


def get_gpu() -> Gpu:
    """One Gpu per process (the primary context is shared anyway)."""
    global _GPU
    if _GPU is None:
        _GPU = Gpu()
    return _GPU


# ----------------------------------------------------------------------------- a launch session
class Session:
    """Device buffers, descriptors and the packed parameter block for one sidecar kernel; the
    same buffers serve the base and the edited kernel (reset to the seeded inputs before each
    checked launch)."""

    def __init__(self, gpu: Gpu, ptx_text: str, spec: dict, inputs: dict | None = None):
        import numpy as np

        self.gpu, self.spec = gpu, spec
        self.entry = entry_info(ptx_text, spec["kernel"])
        self.plans = plan_arguments(self.entry, spec)
        self.req = cluster_launch_request(spec, self.entry)
        rng = np.random.default_rng(int(spec.get("seed", 0) or 0))
        self.host = {}      # plan index -> initial contents
        self.dev = {}       # plan index -> device pointer
        self.scratch = {}   # plan index -> (device pointer, nbytes)
        try:
            for p in self.plans:
                if p.role in ("buffer", "tensormap"):
                    made = host_array(p, rng)           # always drawn: the seeded stream stays aligned
                    given = (inputs or {}).get(p.arg)
                    self.host[p.index] = made if given is None else input_array(p, given, made)
                    self.dev[p.index] = gpu.alloc(p.nbytes)
                elif p.role == "scratch" and p.nbytes > 0:
                    self.scratch[p.index] = (gpu.alloc(p.nbytes), p.nbytes)
            size = param_layout(self.plans)
            self.block = np.zeros(size + 128, np.uint8)
            base = (-self.block.ctypes.data) % 64          # 64-byte aligned start (CUtensorMap)
            self.base_addr = self.block.ctypes.data + base
            view = self.block[base: base + size]
            metas = list(spec.get("tensordesc_meta") or [])
            self.tensor_maps = {}
            for p in self.plans:
                if p.role == "buffer":
                    raw = np.array([int(self.dev[p.index])], np.uint64).tobytes()
                elif p.role == "tensormap":
                    r = tensor_map_request(p, metas[p.value] if metas else None, int(self.dev[p.index]))
                    bad = check_tensor_map_request(r)
                    if bad:
                        raise PlanError(f"{p.arg}: " + "; ".join(bad))
                    raw = gpu.encode_tensor_map(r)
                    self.tensor_maps[p.arg] = r
                elif p.role == "scratch":
                    ptr = self.scratch.get(p.index, (0, 0))[0]
                    raw = np.array([int(ptr)], np.uint64).tobytes()
                else:
                    raw = scalar_bytes(p)
                assert len(raw) == p.size, (p, len(raw))
                view[p.offset: p.offset + p.size] = np.frombuffer(raw, np.uint8)
            self.kparams = np.array([self.base_addr + p.offset for p in self.plans], np.uint64)
        except BaseException:
            self.close()
            raise

    def reset(self):
        for i, h in self.host.items():
            self.gpu.upload(self.dev[i], h)
        for ptr, n in self.scratch.values():
            self.gpu.zero(ptr, n)

    def outputs(self) -> dict:
        import numpy as np

        out = {}
        for p in self.plans:
            if p.index in self.dev:
                out[p.arg] = (self.gpu.download(self.dev[p.index], np.empty_like(self.host[p.index])), p.dtype)
        return out

    def prepare(self, func):
        self.gpu.set_dynamic_smem(func, self.req["shared"])

    def launch(self, func):
        self.gpu.launch(func, self.req, int(self.kparams.ctypes.data))

    def close(self):
        """Free every buffer; a failed free is raised after all are tried (a sticky error shows
        here when nothing else reported it)."""
        ptrs = list(getattr(self, "dev", {}).values()) + [p for p, _ in getattr(self, "scratch", {}).values()]
        self.dev, self.scratch = {}, {}
        release_all(self.gpu.free, ptrs)


def _skip(message: str) -> dict:
    return {"status": "skipped", "message": f"--run skipped: {message}"}


def skip_reason() -> str | None:
    """Why nothing can run here (no cuda-python, no driver, no GPU), or None."""
    if driver_module() is None:
        return "cuda-python (cuda.bindings) is not installed"
    try:
        import numpy  # noqa: F401  (the runs need it)
    except ImportError:
        return "numpy is not installed"
    try:
        get_gpu()
    except Exception as e:  # noqa: BLE001 - classified: only an absent GPU or driver is a skip
        if not gpu_absent(e):
            raise
        return f"no usable GPU ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    return None


# CUDA driver results that mean "there is no GPU or driver to use", not "something broke":
# NOT_INITIALIZED 3, INSUFFICIENT_DRIVER 35, NO_DEVICE 100, STUB_LIBRARY 34, DEVICES_UNAVAILABLE 46,
# COMPAT_NOT_SUPPORTED_ON_DEVICE 804.
ABSENT_GPU_CODES = frozenset({3, 34, 35, 46, 100, 804})
_CUDA_CODE = re.compile(r"CUDA error (\d+)")


def gpu_absent(e: BaseException) -> bool:
    """True when `e` (raised while setting up the GPU) says no GPU or driver is present; any
    other failure (a launch error, a bug in the set-up code) must fail, not skip."""
    if type(e).__name__ == "DynamicLibNotFoundError":
        return True
    text = str(e)
    if isinstance(e, (OSError, RuntimeError)) and ("libcuda" in text or "dlopen" in text):
        return True
    m = _CUDA_CODE.match(text)
    return m is not None and int(m.group(1)) in ABSENT_GPU_CODES


def run_pair(base_ptx_path: str, edited_ptx: str, *, repeat: int = 50, warmup: int = 5,
             rtol: float | None = None, atol: float | None = None, kernel: str | None = None,
             base_ptx: str | None = None, sync_timeout_s: float = 60.0, launch: dict | None = None,
             sidecar: str | None = None, inputs: dict | None = None) -> dict:
    """Launch the base module (file) and the edited PTX (text) with the same seeded inputs,
    compare every buffer (bitwise, or within rtol/atol when given) and time both (median of
    `repeat` launches after `warmup`, CUDA events). One result per sidecar kernel present in
    both modules (or just `kernel`).

    `launch` (a checked sidecar, from `sidecar`) defaults to the sidecar found for the base;
    `inputs` by buffer name replace the seeded ones.

    status: match | mismatch | error | skipped."""
    if launch is None:
        found = sidecar_for(base_ptx_path)
        if found is None:
            return _skip(f"no launch sidecar JSON for {base_ptx_path}")
        launch, sidecar = json.loads(found.read_text()), str(found)
    side = Path(sidecar or "launch")
    why = skip_reason()
    if why:
        return _skip(why)
    gpu = get_gpu()
    base_text = base_ptx if base_ptx is not None else Path(base_ptx_path).read_text()
    specs = [s for s in kernel_specs(launch) if kernel is None or s["kernel"] == kernel]
    if not specs:
        return {"status": "error", "message": f"--run: no sidecar kernel {kernel!r} in {side.name}"}
    results = []
    for spec in specs:
        try:
            results.append(run_spec(gpu, base_text, edited_ptx, spec, repeat=repeat, warmup=warmup,
                                    rtol=rtol, atol=atol, sync_timeout_s=sync_timeout_s, inputs=inputs))
        except Exception as e:  # noqa: BLE001 - report, keep going
            results.append({"kernel": spec.get("kernel"), "status": "error",
                            "error": f"{type(e).__name__}: {e}"})
    statuses = {r["status"] for r in results}
    status = "error" if "error" in statuses else "mismatch" if "mismatch" in statuses else "match"
    tol = "bitwise" if rtol is None and atol is None else f"rtol={rtol or 0:g} atol={atol or 0:g}"
    if status == "match":
        msg = f"--run: outputs {'identical' if tol == 'bitwise' else 'within ' + tol} ({side.name}, " \
              f"{len(results)} kernel{'s' if len(results) != 1 else ''})"
    else:
        bad = [f"{r['kernel']}: {r.get('error') or 'differs in ' + ', '.join(r.get('mismatches', []))}"
               for r in results if r["status"] != "match"]
        msg = f"--run: {status} ({tol}): " + "; ".join(bad)
    return {"status": status, "message": msg, "sidecar": str(side), "device": gpu.name,
            "tolerance": tol, "kernels": results}


def run_spec(gpu: Gpu, base_text: str, edited_text: str, spec: dict, *, repeat=50, warmup=5,
             rtol=None, atol=None, sync_timeout_s=60.0, inputs: dict | None = None) -> dict:
    name = spec["kernel"]
    ed_entry = entry_info(edited_text, name)
    sess = Session(gpu, base_text, spec, inputs)
    modules = []
    try:
        if [p.size for p in ed_entry.params] != [p.param.size for p in sess.plans]:
            raise PlanError(f"{name}: the edited kernel's parameter list differs from the base's")
        base_mod, method, note = gpu.load(base_text)
        modules.append(base_mod)
        ed_mod, _, _ = gpu.load(edited_text, method)    # same assembly path for both
        modules.append(ed_mod)
        funcs = [gpu.function(base_mod, name), gpu.function(ed_mod, name)]
        outs, times = [], []
        for f in funcs:
            sess.prepare(f)
            sess.reset()
            sess.launch(f)
            gpu.sync(sync_timeout_s)
            outs.append(sess.outputs())
        for f in funcs:
            times.append(gpu.time_ms(lambda f=f: sess.launch(f), repeat, warmup) if repeat > 0 else [])
        buffers, mismatches = {}, []
        for key, (a, dt) in outs[0].items():
            c = compare(outs[1][key][0], a, dt, rtol, atol)
            buffers[key] = c
            if not c["ok"]:
                mismatches.append(key)
        med = [statistics.median(t) if t else None for t in times]
        return {"kernel": name, "status": "mismatch" if mismatches else "match", "mismatches": mismatches,
                "buffers": buffers, "max_abs": max((c["max_abs"] for c in buffers.values()), default=0.0),
                "max_rel": max((c["max_rel"] for c in buffers.values()), default=0.0),
                "bitwise": all(c["bitwise"] for c in buffers.values()),
                "base_ms": med[0], "edited_ms": med[1],
                "ratio": (med[1] / med[0]) if med[0] and med[1] is not None else None,
                "repeat": repeat, "warmup": warmup, "load": f"{method}: {note}",
                "grid": sess.req["grid"], "block": sess.req["block"], "shared": sess.req["shared"]}
    finally:
        sess.close()
        release_all(gpu.unload, modules)


def format_table(rows: list[dict]) -> str:
    """kernel | status | outputs | base ms | edited ms | ratio."""
    def ms(v):
        return "-" if v is None else f"{v:.4f}"

    lines = [f"{'kernel':44} {'status':9} {'outputs':26} {'base ms':>9} {'edited ms':>10} {'ratio':>7}"]
    for r in rows:
        if r.get("status") == "error" or "bitwise" not in r:
            outs = (r.get("error") or r.get("message") or "")[:60]
        elif r["bitwise"]:
            outs = "identical"
        else:
            outs = f"max abs {r['max_abs']:.3g} rel {r['max_rel']:.3g}"
        ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.3f}"
        lines.append(f"{str(r.get('label') or r.get('kernel'))[:44]:44} {r.get('status', '?'):9} {outs:26} "
                     f"{ms(r.get('base_ms')):>9} {ms(r.get('edited_ms')):>10} {ratio:>7}")
    return "\n".join(lines)
