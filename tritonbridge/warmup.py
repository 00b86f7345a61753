"""What a program's `kernel[grid](...)` compiles, without a GPU: Triton's own launch path
(`JITFunction.warmup`: binder, specialization, `ASTSource`, `triton.compile`, override and
cache) with a driver that only names the target. Nothing is launched.

    with cpu_only_driver(90):
        compiled = add_kernel.warmup(tensor("float32"), tensor("float32"), tensor("float32"), n,
                                     BLOCK=1024, grid=(n // 1024,))
"""

from __future__ import annotations

from contextlib import contextmanager


class CpuOnlyDriver:
    """Enough of a Triton driver for `warmup`: the target and a device/stream number."""

    def __init__(self, target):
        self.target = target

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0


@contextmanager
def cpu_only_driver(capability: int = 90):
    from triton.backends.compiler import GPUTarget
    from triton.runtime.driver import driver

    previous = driver._active
    driver.set_active(CpuOnlyDriver(GPUTarget("cuda", capability, 32)))
    try:
        yield
    finally:
        driver._active = previous


def tensor(dtype: str):
    """A stand-in for a torch tensor of `dtype` (`"float32"`), 16-byte aligned like torch's."""
    from .compile import _Tensor

    return _Tensor(dtype)
