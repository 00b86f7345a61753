"""A stand-in for the few `cuda.bindings.driver` calls verify/gpu_run.py makes, for tests without a
GPU (PTX2PY_CUDA_DRIVER=fake_cuda_driver). Device memory is host memory; a "kernel" is chosen by
its name:

  double_it(src, dst, n)   dst[i] = 2 * src[i] for the first n f32 elements
  untouched(...)           returns at once: writes nothing (its PTX does nothing either)
  lost_launch(...)         writes nothing, though its PTX doubles like double_it (a launch that
                           went wrong on the GPU side only)
  fault(...)               the launch "fails" asynchronously with 700 (illegal address), and every
                           later call in this process returns 700, as a real context's sticky error
  hang(...)                never completes (events stay not ready)
  stall(...)               the launch call itself never returns

Calls are logged (one JSON line each) to $FAKE_CUDA_LOG when set.
"""
from __future__ import annotations

import ctypes
import enum
import json
import os
import time

import numpy as np


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NOT_READY = 600
    CUDA_ERROR_ILLEGAL_ADDRESS = 700


OK = CUresult.CUDA_SUCCESS


class CUdevice_attribute(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97


class CUfunction_attribute(enum.IntEnum):
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CUlaunchAttributeID(enum.IntEnum):
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4


class _Dim:
    x = y = z = 1


class _Value:
    def __init__(self):
        self.clusterDim = _Dim()


class CUlaunchAttribute:
    def __init__(self):
        self.id = None
        self.value = _Value()


class CUlaunchConfig:
    gridDimX = gridDimY = gridDimZ = blockDimX = blockDimY = blockDimZ = sharedMemBytes = numAttrs = 0
    hStream = 0
    attrs: list = []


ATTRS = {CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9,
         CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: 0,
         CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 232448}
STATIC_SHARED = {"double_it_static40k": 40 * 1024}   # kernel name -> its static shared bytes

_memory: dict[int, np.ndarray] = {}
_next = [0x7F0000000000]
_sticky: list = []          # the context's sticky error, once a kernel faulted
_hung = [False]


class _Function:
    def __init__(self, name: str):
        self.name = name


def _log(call: str, **kw):
    path = os.environ.get("FAKE_CUDA_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"call": call, **kw}, default=str) + "\n")


def _r(*values):
    if _sticky:
        return (_sticky[0],) + tuple(None for _ in values)
    return (OK,) + values


def cuGetErrorString(err):
    return OK, f"stand-in error {int(err)}".encode()


def cuInit(flags):
    return _r()


def cuDeviceGet(i):
    return _r(0)


def cuDevicePrimaryCtxRetain(dev):
    return _r(1)


def cuCtxSetCurrent(ctx):
    return _r()


def cuDeviceGetAttribute(attr, dev):
    return _r(ATTRS[attr])


def cuDeviceGetName(n, dev):
    return _r(b"Stand-in H200\0")


def cuDriverGetVersion():
    return _r(13000)


def cuModuleLoadData(image_addr):
    return _r(object())


def cuModuleGetFunction(module, name: bytes):
    return _r(_Function(name.decode()))


def cuModuleUnload(module):
    _log("cuModuleUnload")
    return _r()


def cuFuncGetAttribute(attr, func):
    if attr == CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
        return _r(STATIC_SHARED.get(func.name, 0))
    return _r(0)


def cuFuncSetAttribute(func, attr, value):
    _log("cuFuncSetAttribute", attr=int(attr), value=int(value), kernel=func.name)
    return _r()


def cuMemAlloc(nbytes):
    addr = _next[0]
    _next[0] += (int(nbytes) + 0xFFFF) & ~0xFFFF
    _memory[addr] = np.zeros(int(nbytes), np.uint8)
    return _r(addr)


def cuMemFree(addr):
    _memory.pop(int(addr), None)
    _log("cuMemFree")
    return _r()


def cuMemcpyHtoD(addr, host, n):
    ctypes.memmove(_memory[int(addr)].ctypes.data, host, n)
    return _r()


def cuMemcpyDtoH(host, addr, n):
    ctypes.memmove(host, _memory[int(addr)].ctypes.data, n)
    return _r()


def cuMemsetD8(addr, value, n):
    _memory[int(addr)][:n] = value
    return _r()


def _param(kparams: int, i: int, ctype):
    ptr = ctypes.cast(kparams, ctypes.POINTER(ctypes.c_uint64))[i]
    return ctypes.cast(ptr, ctypes.POINTER(ctype))[0]


def _run(func: _Function, kparams: int):
    if _sticky:
        return
    name = func.name
    if name.startswith("double_it"):
        src, dst, n = (_param(kparams, 0, ctypes.c_uint64), _param(kparams, 1, ctypes.c_uint64),
                       _param(kparams, 2, ctypes.c_uint32))
        a = _memory[src].view(np.float32)
        _memory[dst].view(np.float32)[:n] = a[:n] * np.float32(2)
    elif name == "fault":
        _sticky.append(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS)
    elif name == "hang":
        _hung[0] = True
    elif name == "stall":
        while True:
            time.sleep(1)


def cuLaunchKernel(func, gx, gy, gz, bx, by, bz, shared, stream, kparams, extra):
    _log("cuLaunchKernel", kernel=func.name, grid=[gx, gy, gz], block=[bx, by, bz], shared=shared)
    r = _r()
    _run(func, kparams)
    return r


def cuLaunchKernelEx(cfg, func, kparams, extra):
    cluster = [[a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z] for a in cfg.attrs
               if a.id == CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION]
    _log("cuLaunchKernelEx", kernel=func.name, grid=[cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ],
         block=[cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ], shared=cfg.sharedMemBytes, cluster=cluster)
    r = _r()
    _run(func, kparams)
    return r


def cuEventCreate(flags):
    return _r(object())


def cuEventRecord(ev, stream):
    return _r()


def cuEventQuery(ev):
    if _sticky:
        return (_sticky[0],)
    return (CUresult.CUDA_ERROR_NOT_READY,) if _hung[0] else (OK,)


def cuEventDestroy(ev):
    return _r()


def cuEventElapsedTime(start, stop):
    return _r(0.01)


def cuCtxSynchronize():
    return _r()
