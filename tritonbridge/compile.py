"""Compile a Triton kernel to PTX without a GPU: `triton.compile(ASTSource(...), target=GPUTarget(...))`.

Two ways to specialize, because Triton's kernel override is keyed by the specialization:
- `signature` (the corpus and Triton's AOT compiler): the types given, `:16` hints only;
- `jit`: exactly what `kernel[grid](...)` builds for the given argument values, using the
  kernel's own binder (pointers as 16-byte aligned tensors, integers by value: a multiple of
  16 gets the divisibility attribute, 1 becomes a constant), so an override written from this
  build is the one the unchanged program's launch picks up."""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BridgeError

# the dtype a tensor of each Triton pointer type has (what the JIT's specializer reads)
TORCH_DTYPE = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64",
               "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "i64": "int64", "i32": "int32",
               "i16": "int16", "i8": "int8", "u8": "uint8", "i1": "bool"}


@dataclass
class KernelConfig:
    signature: dict                      # name -> Triton type ("*fp32", "i32", "tensordesc<fp16[128,64]>", "constexpr")
    constexprs: dict = field(default_factory=dict)
    hints: dict = field(default_factory=dict)   # name -> 16 (the `:16` hints)
    values: dict = field(default_factory=dict)  # name -> launch value (scalars), count (pointers), shape (descriptors)
    capability: int = 90
    num_warps: int = 4
    num_stages: int = 3
    specialization: str = "signature"    # or "jit"


@dataclass
class Build:
    compiled: Any                        # triton.compiler.CompiledKernel
    src: object                          # the ASTSource it was compiled from (None from a cache folder)
    signature: dict                      # the compiled signature (after specialization)
    constexprs: dict                     # name -> value
    config: KernelConfig | None = None
    source_ref: str | None = None        # FILE.py::KERNEL

    @property
    def ptx(self) -> str:
        return self.compiled.asm["ptx"]


def _triton():
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, without its warning
    try:
        import triton  # noqa: F401
    except ImportError:
        raise BridgeError("Triton is not installed (pip install -e '.[triton]')") from None
    import triton
    return triton


def record_triton_root(root: str) -> None:
    """Make Triton's own @jit library functions (tl.sum, tl.rand, ...) record `root/...` instead of
    this installation's folder in the debug info (`.file 2 ".../triton/language/standard.py"`), to
    reproduce a build made with Triton installed elsewhere. `root` ends in `/triton`."""
    triton = _triton()
    real = str(Path(triton.__file__).resolve().parent)
    for name, module in list(sys.modules.items()):
        if not name.startswith("triton.") or module is None:
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, triton.runtime.jit.JITFunction) and obj.file_name.startswith(real + os.sep):
                obj.file_name = root.rstrip("/") + obj.file_name[len(real):]


def load_kernel(spec: str, record_path: str | None = None):
    """`FILE.py::KERNEL` -> the @triton.jit function. `record_path` is the path Triton writes
    into the PTX's debug info instead of the file's own (to reproduce a build made elsewhere)."""
    triton = _triton()
    path, sep, name = spec.rpartition("::")
    if not sep or not path or not name:
        raise BridgeError(f"{spec}: expected FILE.py::KERNEL")
    file = Path(path)
    if not file.is_file():
        raise BridgeError(f"{path}: error: no such file")
    sys.path.insert(0, str(file.resolve().parent))  # kernels may import their neighbours
    try:
        mod_spec = importlib.util.spec_from_file_location(f"_ptx2py_triton_{file.stem}", file)
        module = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(module)
    except SyntaxError as e:
        raise BridgeError(f"{path}:{e.lineno or 0}:{e.offset or 0}: error: {e.msg}") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed to import
        raise BridgeError(f"{path}:1:1: error: importing it raised {type(e).__name__}: {e}") from None
    finally:
        sys.path.remove(str(file.resolve().parent))
    fn = getattr(module, name, None)
    if fn is None:
        raise BridgeError(f"{path}:1:1: error: no kernel named {name!r}")
    if not isinstance(fn, triton.runtime.jit.JITFunction):
        raise BridgeError(f"{path}:1:1: error: {name!r} is not a @triton.jit function")
    if record_path:
        real = fn.file_name
        for obj in vars(module).values():
            if isinstance(obj, triton.runtime.jit.JITFunction) and obj.file_name == real:
                obj.file_name = record_path
    return fn


def _full_signature(fn, cfg: KernelConfig) -> dict:
    sig = dict(cfg.signature)
    for name in cfg.constexprs:
        sig[name] = "constexpr"
    missing = [n for n in fn.arg_names if n not in sig]
    if missing:
        raise BridgeError(f"{fn.__name__}: no type for parameter(s) {', '.join(missing)} (--signature / --constexprs)")
    unknown = [n for n in sig if n not in fn.arg_names]
    if unknown:
        raise BridgeError(f"{fn.__name__}: {', '.join(unknown)} is not a parameter ({', '.join(fn.arg_names)})")
    return {n: sig[n] for n in fn.arg_names}


class _DType(str):
    """A torch dtype as the specializer (its name) and TensorDescriptor (`itemsize`) read it."""

    @property
    def itemsize(self) -> int:
        from ptx2py.launch.plan import dtype_bytes

        return dtype_bytes(self)

    @property
    def is_floating_point(self) -> bool:
        return self.startswith(("float", "bfloat"))


class _Tensor:
    """What the JIT's specializer reads of a torch tensor: its dtype and its address (16-byte
    aligned, as torch's allocations are)."""

    def __init__(self, dtype: str, address: int = 1 << 20):
        self.dtype, self._address = _DType(dtype), address

    def data_ptr(self) -> int:
        return self._address


def _jit_argument(name: str, ty: str, cfg: KernelConfig):
    if ty.startswith("*"):
        dt = ty[1:]
        if dt not in TORCH_DTYPE:
            raise BridgeError(f"{name}: no tensor dtype for pointer type {ty}")
        return _Tensor(TORCH_DTYPE[dt])
    if ty.startswith("tensordesc"):
        from triton.tools.tensor_descriptor import TensorDescriptor

        from .sidecar import tensordesc_type

        dt, block = tensordesc_type(ty)
        shape = cfg.values.get(name)
        if not shape:
            raise BridgeError(f"{name}: --specialization jit needs the descriptor's shape (--arg {name}=2048x2048)")
        strides = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = strides[i + 1] * shape[i + 1]
        return TensorDescriptor(_Tensor(TORCH_DTYPE[dt]), list(shape), strides, list(block))
    if name not in cfg.values:
        raise BridgeError(f"{name}: --specialization jit needs the scalar's launch value (--arg {name}=...)")
    v = cfg.values[name]
    return float(v) if ty.startswith(("fp", "bf")) else v


def _jit_source(fn, sig: dict, cfg: KernelConfig, backend):
    """(signature, constexprs, attrs, options) exactly as `kernel[grid](...)` computes them."""
    from triton import knobs
    from triton.runtime.jit import create_function_from_signature

    binder = create_function_from_signature(fn.signature, fn.params, backend)
    args = [cfg.constexprs[n] if sig[n] == "constexpr" else _jit_argument(n, sig[n], cfg) for n in fn.arg_names]
    kwargs = {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages,
              "debug": fn.debug or knobs.runtime.debug,
              "instrumentation_mode": knobs.compilation.instrumentation_mode,
              "fpsan_homomorphic_casts": knobs.compilation.fpsan_homomorphic_casts}
    bound, specialization, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, specialization, options)
    for n in fn.arg_names:  # the specializer must see the type the user gave
        want = sig[n]
        if want not in ("constexpr",) and signature[n] not in (want, "constexpr") and not want.startswith("tensordesc"):
            raise BridgeError(f"{n}: the JIT specializes it as {signature[n]}, not {want}")
    return signature, constexprs, attrs, options.__dict__


def compile_kernel(fn, cfg: KernelConfig, source_ref: str | None = None) -> Build:
    triton = _triton()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend

    sig = _full_signature(fn, cfg)
    target = GPUTarget("cuda", cfg.capability, 32)
    backend = make_backend(target)
    if cfg.specialization == "jit":
        signature, constexprs, attrs, options = _jit_source(fn, sig, cfg, backend)
    elif cfg.specialization == "signature":
        signature, constexprs = sig, dict(cfg.constexprs)
        index = {n: i for i, n in enumerate(fn.arg_names)}
        attrs = {(index[n],): [["tt.divisibility", 16]] for n, h in cfg.hints.items() if h == 16}
        options = {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages}
    else:
        raise BridgeError(f"--specialization: {cfg.specialization!r} (signature or jit)")
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    try:
        compiled = triton.compile(src, target=target, options=options)
    except Exception as e:  # noqa: BLE001 - Triton's CompilationError carries its own location
        raise BridgeError(_compile_error(fn, e, source_ref)) from None
    names = {(fn.arg_names.index(k),) if isinstance(k, str) else k: v for k, v in constexprs.items()}
    by_name = {fn.arg_names[k[0]]: v for k, v in names.items() if len(k) == 1}
    return Build(compiled, src, dict(signature), by_name, cfg, source_ref)


def _compile_error(fn, e: Exception, source_ref: str | None) -> str:
    """`file:line:col: error: ...` with the line and a caret, from Triton's CompilationError
    (its node's line counts from the kernel's `def`)."""
    node = getattr(e, "node", None)
    lines = str(e).strip().splitlines()
    message = getattr(e, "error_message", None) or (lines[-1] if lines else type(e).__name__)
    def_line = getattr(fn, "def_file_line_number", None)
    if node is None or not hasattr(node, "lineno") or def_line is None:
        return f"{source_ref or fn.__name__}: error: Triton could not compile it: {type(e).__name__}: {message}"
    line, col = def_line + node.lineno - 1, node.col_offset + 1
    try:
        text = Path(fn.fn.__code__.co_filename).read_text().splitlines()[line - 1]
    except (OSError, IndexError):
        text = ""
    return f"{fn.fn.__code__.co_filename}:{line}:{col}: error: Triton: {message}\n{text}\n{' ' * (col - 1)}^"


def from_compiled(compiled) -> Build:
    """A `CompiledKernel` from Python (`kernel.warmup(...)`, `triton.compile(...)`)."""
    src = getattr(compiled, "src", None)
    if src is None or not hasattr(src, "fn"):
        return Build(compiled, None, {}, {})
    fn = src.fn
    consts = {fn.arg_names[k[0]]: v for k, v in src.constants.items() if len(k) == 1}
    return Build(compiled, src, dict(src.signature), consts)


def from_cache_dir(folder: str) -> Build:
    """A Triton cache (or dump) folder of one kernel: `~/.triton/cache/<KEY>/`."""
    import json

    _triton()
    from triton.compiler.compiler import CompiledKernel

    d = Path(folder)
    groups = sorted(d.glob("__grp__*.json"))
    if not groups:
        raise BridgeError(f"{folder}: error: not a Triton cache folder (no __grp__<kernel>.json)")
    group = json.loads(groups[0].read_text())["child_paths"]
    group = {k: str(d / Path(v).name) for k, v in group.items()}  # the folder may have moved
    if not any(k.endswith(".ptx") for k in group):
        raise BridgeError(f"{folder}: error: the cache folder has no .ptx")
    return Build(CompiledKernel(None, group, d.name), None, {}, {})
