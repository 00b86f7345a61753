"""Source names of a kernel's parameters, for the names pass, in order of trust:

1. a launch sidecar (`--launch FILE`, or `corpus/launch/<producer>/<stem>.json` found from the
   input path): its argument names, expanded the way the launcher packs them
   (`launch.plan.logical_slots`: a Triton TensorDescriptor is the 128-byte map, then its shape
   and strides -> `a_desc`, `a_desc_shape0`, `a_desc_stride0`, ...; hidden scratch pointers);
2. the kernel source (`--source FILE`, the `.file` paths when readable, the sidecar's `source`,
   or `corpus/src/<producer>/<stem>.cu|.py` for a corpus file): a Triton `def <kernel>(...)`'s
   parameters that are not `tl.constexpr`, then Triton's two scratch pointers; a CUDA
   `__global__ ... <name>(...)` definition's parameter names (matched by the demangled name).

Either is used only when it implies exactly as many parameters as the PTX declares.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from pathlib import Path

from ptx2py.transpile.cxxnames import signature

# what a packed slot is called after its argument (launch.plan.logical_slots roles)
_SLOT_SUFFIX = {"desc-shape": "_shape", "desc-stride": "_stride", "desc-flag": "_flag"}
TRITON_HIDDEN = ("global_scratch", "profile_scratch")


def _ident(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name).lstrip("_") or "arg"
    if out[0].isdigit():
        out = "a" + out
    return out + "_" if keyword.iskeyword(out) or out in ("name", "demangled") else out


def _unique(names):
    seen, out = set(), []
    for n in names:
        m, k = n, 1
        while m in seen:
            m, k = f"{n}_{k}", k + 1
        seen.add(m)
        out.append(m)
    return out


def sidecar_names(spec: dict) -> list | None:
    """Parameter names from one kernel's launch spec (None where it cannot be expanded)."""
    try:
        from ptx2py.launch.plan import logical_slots

        slots = logical_slots(spec)
    except Exception:  # noqa: BLE001 - a sidecar the planner refuses names nothing
        return None
    out, per = [], {}
    for s in slots:
        base = _ident(str(s["arg"].get("name", "arg")))
        suffix = _SLOT_SUFFIX.get(s["role"])
        if suffix is None:
            out.append(base)
            continue
        key = (base, s["role"], s["dtype"])
        n = per.get(key, 0)
        per[key] = n + 1
        out.append(f"{base}{suffix}{n}" + ("" if s["dtype"] != "i64" or s["role"] != "desc-shape" else "_i64"))
    return _unique(out)


def _specs(path) -> list:
    from ptx2py.launch.plan import kernel_specs

    return kernel_specs(json.loads(Path(path).read_text()))


def launch_specs(launch: str | None, filename: str | None) -> list:
    """The launch specs of `--launch FILE` (unreadable: OSError/ValueError), else of the
    sidecar found for the input path."""
    if launch is not None:
        return _specs(launch)
    try:
        if filename and not filename.startswith("<") and Path(filename).is_file():
            from ptx2py.launch.plan import sidecar_for

            found = sidecar_for(filename)
            return _specs(found) if found is not None else []
    except (OSError, ValueError, KeyError):
        return []
    return []


def triton_names(source: str, kernel: str) -> list | None:
    """The runtime parameters of `def kernel(...)` in a Triton source (constexprs left out)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == kernel:
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            return [_ident(a.arg) for a in args if a.annotation is None or "constexpr" not in ast.unparse(a.annotation)]
    return None


_GLOBAL = re.compile(r"__global__\b[^;{()]*?\b(\w+)\s*\(")
_CXX_WORDS = frozenset({"const", "volatile", "__restrict__", "__restrict", "restrict", "unsigned", "signed",
                        "struct", "class", "typename"})
_SIGN = frozenset({"unsigned", "signed"})  # a type on their own: `unsigned* __restrict__ hist`
_BUILTIN_TYPES = frozenset({"int", "char", "short", "long", "float", "double", "bool", "void"})


def _param_name(param: str) -> str | None:
    """The declared name of one C++ parameter (None when it is unnamed)."""
    words = re.findall(r"[A-Za-z_]\w*", param.split("=")[0])
    kept = [w for w in words if w not in _CXX_WORDS]
    typed = len(kept) >= 2 or (len(kept) == 1 and any(w in _SIGN for w in words))
    return kept[-1] if typed and kept[-1] not in _BUILTIN_TYPES else None


def _split_top(text: str) -> list:
    out, depth, cur = [], 0, []
    for c in text:
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        out.append("".join(cur))
    return out


def cuda_names(source: str, base: str, count: int) -> list | None:
    """The parameter names of a `__global__` function `base` with `count` named parameters."""
    for m in _GLOBAL.finditer(source):
        if m.group(1) != base:
            continue
        depth, k = 1, m.end()
        while k < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[k], 0)
            k += 1
        params = _split_top(source[m.end():k - 1])
        names = [_param_name(p) for p in params]
        if len(names) == count and None not in names:
            return _unique([_ident(n) for n in names])
    return None


def _base_name(kernel: str) -> str:
    """`hillis_steele_scan` of `_Z18hillis_steele_scanILi256EEvPKfPfS2_i` (demangled, no templates,
    no namespaces: `(anonymous namespace)::`, `outer::inner::`); the spelling itself where the
    demangled name is no plain function (an operator, a lambda's call operator, a variable)."""
    if not kernel.startswith("_Z"):
        return kernel
    from ptx2py.transpile.dsl.control import _demangle

    dem = _demangle(kernel)
    sig = signature(dem) if dem else None
    return sig[0] if sig is not None else kernel


def param_names(kernel: str, count: int, options: dict, module=None) -> list | None:
    """Source names of `kernel`'s `count` parameters, or None."""
    specs = launch_specs(options.get("launch"), options.get("filename"))
    for spec in specs:
        if spec.get("kernel") == kernel:
            got = sidecar_names(spec)
            if got is not None and len(got) == count:
                return got
    for path, text in _sources(options, module, specs):
        if path.endswith(".py"):
            got = triton_names(text, kernel)
            if got is not None and len(got) + len(TRITON_HIDDEN) != count:
                got = with_descriptor_slots(got, entry_params(module, kernel))
            if got is not None and len(got) + len(TRITON_HIDDEN) == count:
                got = got + list(TRITON_HIDDEN)
        else:
            got = cuda_names(text, _base_name(kernel), count)
        if got is not None and len(got) == count:
            return _unique(got)
    return None


def entry_params(module, kernel: str) -> list:
    """The declared parameters (`Param` nodes) of `kernel`'s entry in `module` ([] if absent)."""
    from ptx2py.ptxgrammar.tree import Function

    for f in getattr(module, "items", ()):
        if f.__class__ is Function and f.head.name == kernel and f.head.params is not None:
            return list(f.head.params.params)
    return []


def _is_tensor_map(param) -> bool:
    """Triton's host TensorDescriptor slot: `.param .align 64 .b8 name[128]` (a CUtensorMap)."""
    return param.type == ".b8" and param.dim == "128"


def with_descriptor_slots(names: list, params: list) -> list | None:
    """A Triton kernel's source parameters matched to its PTX parameters where each host
    TensorDescriptor argument is packed as Triton packs it (the 128-byte map, its shape as
    `.u32`, its strides as `.u64`; launch.plan.logical_slots): `a_desc`, `a_desc_shape0`, ...,
    `a_desc_stride0`, ... as a sidecar names them. None when the declarations do not match."""
    out, k = [], 0
    for name in names:
        if k < len(params) and _is_tensor_map(params[k]):
            rank = 0
            while k + 1 + rank < len(params) and params[k + 1 + rank].type == ".u32":
                rank += 1
            strides = params[k + 1 + rank:k + 1 + 2 * rank]
            if rank == 0 or len(strides) != rank or any(p.type != ".u64" for p in strides):
                return None
            out += [name] + [f"{name}_shape{i}" for i in range(rank)] + [f"{name}_stride{i}" for i in range(rank)]
            k += 1 + 2 * rank
        else:
            out.append(name)
            k += 1
    return out if any(_is_tensor_map(p) for p in params) else None


def _source_paths(options, module, specs):
    if options.get("source"):
        yield options["source"]
    if module is not None:
        from ptx2py.ptxgrammar.tree import File

        for f in module.items:   # `.file` is a module-level directive (the grammar's _module_item)
            if f.__class__ is File:
                yield f.path[1:-1]
    from ptx2py.launch.plan import LAUNCH

    corpus = LAUNCH.parent
    for spec in specs[:1]:
        if spec.get("source"):
            yield str(corpus / spec["source"].split("::")[0])
    name = options.get("filename")
    if name and not name.startswith("<"):
        p = Path(name).resolve()
        try:
            rel = p.relative_to(corpus / "ptx")
        except ValueError:
            return
        stem = p.name.split(".")[0]
        for ext in (".cu", ".py"):
            yield str(corpus / "src" / rel.parent / (stem + ext))


def _sources(options, module, specs=()):
    seen = set()
    for p in _source_paths(options, module, specs):
        if p in seen:
            continue
        seen.add(p)
        try:
            yield p, Path(p).read_text()
        except (OSError, UnicodeDecodeError):
            continue
