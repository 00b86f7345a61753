"""to-triton: put an edited kernel where Triton 3.9's kernel override picks it up.

With TRITON_KERNEL_OVERRIDE=1, `triton.compile` looks, after each stage, for
`$TRITON_OVERRIDE_DIR/<base32(src.hash())>/<kernel>.<stage>` and uses that file instead of
what it just made (triton/compiler/compiler.py); for the `ptx` stage the cubin is then assembled
from it. `src.hash()` covers the kernel's source, signature, constexprs and attributes (not
num_warps, num_stages or the target): the build's own key is recorded by from-triton in the
sidecar, and the keys of the calls that will run it are computed from the call's specialisation
(tritonbridge/specialise.py)."""

from __future__ import annotations

import json
from pathlib import Path

from .errors import BridgeError

CACHE_NOTE = ("note: Triton's cache key does not include the override: if this kernel was compiled before, "
              "also set TRITON_ALWAYS_COMPILE=1 (or a fresh TRITON_CACHE_DIR)")


def edited_ptx(path: str) -> str:
    """The PTX of `k.py` (run through py2ptx) or of a `.ptx` file."""
    p = Path(path)
    if not p.is_file():
        raise BridgeError(f"{path}: error: no such file")
    if p.suffix == ".py":
        from ptx2py.transpile import python_to_ptx

        return python_to_ptx(p.read_text(), str(p))
    from ptx2py.ptxgrammar import read_ptx

    return read_ptx(str(p))


def sidecar_beside(path: str) -> dict:
    side = Path(path).with_suffix(".json")
    if not side.is_file():
        raise BridgeError(f"{path}: error: no launch sidecar {side.name} beside it (written by ptx2py from-triton)")
    data = json.loads(side.read_text())
    entry = (data.get("triton") or {}).get("override")
    if not entry:
        raise BridgeError(f"{side}: error: no Triton override key (from-triton records it when it compiles the "
                          f"source; a cache folder does not carry it)")
    return data


def check_entry(ptx: str, kernel: str, path: str) -> None:
    """Triton launches the cubin under the name its own compile gave the kernel."""
    from ptx2py.launch.plan import PlanError, entry_params

    try:
        entry_params(ptx, kernel)
    except PlanError as e:
        raise BridgeError(f"{path}:1:1: error: {e}: Triton launches the override under that name") from None


def place(path: str, out_dir: str, given: dict | None = None) -> tuple[list, str, list[str], list[str]]:
    """Where the edited PTX of `path` goes for Triton's override: ([(file, the calls it answers)],
    PTX, environment lines, notes). The build's own key first (`triton.compile(ASTSource(...))`
    with the sidecar's signature), then each key a `kernel[grid](...)` call can look up that the
    PTX is valid for (the real call's only, when `given` has its values)."""
    from ptx2py.ptxgrammar import parse

    from .specialise import call_keys

    data = sidecar_beside(path)
    ptx = edited_ptx(path)
    parse(ptx, path)  # never hand Triton a module the grammar rejects
    check_entry(ptx, data["kernel"], path)
    entry = data["triton"]["override"]
    root = Path(out_dir).resolve()
    calls, notes = call_keys(data, str(Path(path).with_suffix(".json")), given or {})
    as_built = next((c.matches for c in calls if c.key == entry["key"]),   # a jit build: the call it was made for
                    "triton.compile(ASTSource(...)) with the sidecar's signature and constexprs (as built)")
    places = [(root / entry["key"] / entry["file"], as_built)]
    places += [(root / c.key / entry["file"], c.matches) for c in calls if c.key != entry["key"]]
    env = ["export TRITON_KERNEL_OVERRIDE=1", f"export TRITON_OVERRIDE_DIR={root}"]
    return places, ptx, env, notes
