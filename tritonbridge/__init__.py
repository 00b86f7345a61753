"""Triton <-> ptx2py: compile a Triton kernel to PTX without a GPU and hand it to ptx2py
(`ptx2py from-triton`), and put an edited kernel back where Triton's kernel override
picks it up (`ptx2py to-triton`).

    kernel = load_kernel("kernels.py::add_kernel")
    build = compile_kernel(kernel, KernelConfig(signature=..., constexprs=..., capability=90))
    write_outputs(build, "k.py", sugar=True)        # k.py, k.ptx (the base) and k.json (launch sidecar)
    place_override("k.py", "override/")              # TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=override/

Triton is an optional dependency (`pip install -e '.[triton]'`)."""

from .errors import BridgeError

__all__ = ["BridgeError"]
