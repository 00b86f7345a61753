"""from-triton's files for a build: `k.py` (the Python, parameters named from the source),
`k.ptx` (Triton's PTX: the base for `ptx2py verify` and to-triton's checks) and `k.json`
(the launch sidecar), all beside each other."""

from __future__ import annotations

from pathlib import Path

from .errors import BridgeError
from .sidecar import build_sidecar, param_names, ttir_param_names


def kernel_param_names(build, sidecar: dict) -> list[str] | None:
    """One Python name per PTX parameter of the kernel, or None when they cannot be matched."""
    from ptx2py.launch.plan import entry_params

    params = entry_params(build.ptx, sidecar["kernel"])
    if build.src is not None and not sidecar.get("incomplete_signature"):
        names = param_names(sidecar)
        if len(names) == len(params):
            return names
        raise BridgeError(f"{sidecar['kernel']}: the signature implies {len(names)} PTX parameters, "
                          f"the PTX declares {len(params)}")
    ttir = build.compiled.asm.get("ttir") if hasattr(build.compiled.asm, "get") else None
    return ttir_param_names(ttir, len(params)) if ttir else None


def python_of(build, names: list[str] | None, sugar: bool, filename: str = "<triton>") -> str:
    from ptx2py.sugar import pipeline
    from ptx2py.transpile import ptx_to_python

    table = {build.compiled.metadata.name: names} if names else None
    return ptx_to_python(build.ptx, passes=pipeline.passes(filename=filename, param_names=table) if sugar else None,
                         filename=filename)


def outputs(build, out_py: str, *, sugar: bool, values=None, inits=None, grid=None, like=None) -> dict:
    """{path: text} of the three files (nothing written here)."""
    import json

    py = Path(out_py)
    if py.suffix != ".py":
        raise BridgeError(f"{out_py}: error: the output must be a .py file (k.ptx and k.json go beside it)")
    ptx_path, json_path = py.with_suffix(".ptx"), py.with_suffix(".json")
    sidecar = build_sidecar(build, ptx_file=ptx_path.name, values=values, inits=inits, grid=grid, like=like)
    names = kernel_param_names(build, sidecar)
    sidecar["param_names"] = names
    return {str(py): python_of(build, names, sugar, str(py)), str(ptx_path): build.ptx,
            str(json_path): json.dumps(sidecar, indent=1) + "\n"}
