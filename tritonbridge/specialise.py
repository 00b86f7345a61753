"""The override keys a call of the kernel will look up, and whether the edited PTX may answer them.

Triton 3.9 looks an override up under `base32(ASTSource.hash())` (tritonbridge/override.py), and
the hash covers the call's specialisation, which `kernel[grid](...)`'s binder derives from the
argument values (triton/runtime/jit.py): a 16-byte aligned tensor or an integer that is a
multiple of 16 gets `tt.divisibility 16`; an integer equal to 1 becomes a constant and is no
longer a kernel parameter. A build made for other values (`from-triton --signature` without
`--arg`) has another key, and Triton never reads an override written under it.

A PTX built for one specialisation is correct for every call that has the same constants and at
least its divisibility, so to-triton writes it under the key of each such call: the real call's
(its values given with `to-triton --arg NAME=VALUE`), or else every specialisation a call with
16-byte aligned tensors can have (each integer not known to the build a multiple of 16 or not,
never 1: that removes a parameter the PTX takes).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from .errors import BridgeError
from .sidecar import specialisation

MAX_KEYS = 64        # 6 integers unknown to the build; past that, ask for --arg values
_DIVISIBLE, _PLAIN, _ONE = 16, 17, 1   # stand-in values for a multiple of 16, any other, and 1


@dataclass(frozen=True)
class CallKey:
    key: str
    divisible: tuple      # the parameters the call gives tt.divisibility 16
    constants: dict       # name -> value, the constexprs and the integers equal to 1
    matches: str          # the calls it answers, in words


def _integer(ty: str) -> bool:
    return ty[:1] in ("i", "u") and ty[1:].isdigit()


def kernel_of(side: dict, sidecar_path: str):
    """The @triton.jit function the sidecar was built from (its `source`, relative to the cwd or the sidecar)."""
    from .compile import load_kernel

    source = side.get("source") or ""
    path, _, name = source.rpartition("::")
    for base in (Path.cwd(), Path(sidecar_path).resolve().parent):
        if path and (base / path).is_file():
            return load_kernel(f"{base / path}::{name}")
    raise BridgeError(f"{sidecar_path}:1:1: error: the kernel source {path or '(none)'!r} is not found; to-triton "
                      "reads it to compute the key of the call's specialisation")


def _recorded_values(side: dict) -> dict:
    """The launch values the sidecar records: scalars' values, descriptors' shapes."""
    out = {}
    for a in side.get("args") or []:
        if a.get("kind") == "scalar" and "value" in a:
            out[a["name"]] = a["value"]
        elif a.get("kind") == "tma-descriptor" and a.get("shape"):
            out[a["name"]] = list(a["shape"])
    return out


def _call(fn, side: dict, values: dict, backend) -> CallKey:
    from triton.compiler import ASTSource
    from triton.runtime.cache import _base32

    from .compile import KernelConfig, _jit_source

    user_types = {n: t for n, t in side["signature"].items() if t != "constexpr"}
    consts = {n: v for n, v in side["constexprs"].items() if fn.params[fn.arg_names.index(n)].is_constexpr}
    sig = {n: user_types.get(n, "constexpr") if n not in consts else "constexpr" for n in fn.arg_names}
    for n in fn.arg_names:     # an integer the build made a constant (== 1): its value decides
        if sig[n] == "constexpr" and n not in consts:
            sig[n], values = "i32", {**values, n: values.get(n, side["constexprs"][n])}
    cfg = KernelConfig(signature=user_types, constexprs=consts, values=values, num_warps=side["num_warps"],
                       num_stages=side["num_stages"], capability=side["target"]["capability"], specialization="jit")
    signature, constexprs, attrs, _ = _jit_source(fn, sig, cfg, backend)
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    got = specialisation(src, fn.arg_names)
    return CallKey(_base32(src.hash()), tuple(got["divisible"]), got["constants"], _words(fn, sig, values, consts))


def _words(fn, sig: dict, values: dict, consts: dict) -> str:
    said = []
    for n in fn.arg_names:
        if n in consts or not _integer(sig[n]) or n not in values:
            continue
        v = values[n]
        said.append(f"{n} == 1" if v == 1 else f"{n} % 16 == 0" if v % 16 == 0 else f"{n} % 16 != 0 (not 1)")
    kw = ", ".join(f"{n}={v}" for n, v in consts.items())
    call = f"{fn.__name__}[grid]({', '.join(n for n in fn.arg_names if n not in consts)}{', ' + kw if kw else ''})"
    return call + (" with " + ", ".join(said) if said else "") + "; tensors 16-byte aligned"


def _refusal(fn, built: dict, call: CallKey, given: dict) -> str | None:
    """Why the built PTX cannot answer `call` (None: it can)."""
    for n in built["divisible"]:
        if n in given and n not in call.divisible:
            return f"the PTX was built assuming {n} % 16 == 0; the call's {n}={given[n]} is not"
    for n in set(built["constants"]) | set(call.constants):
        if built["constants"].get(n, None) != call.constants.get(n, None):
            if n in call.constants and call.constants[n] == 1 and n not in built["constants"]:
                return f"Triton makes {n} == 1 a constant, and the PTX takes it as a parameter"
            return f"the PTX was built for {n} = {built['constants'].get(n, 'a parameter')}, the call has " \
                   f"{call.constants.get(n, 'it as a parameter')}"
    missing = [n for n in built["divisible"] if n not in call.divisible]
    return f"the PTX assumes {', '.join(missing)} divisible by 16, the call does not" if missing else None


def call_keys(side: dict, sidecar_path: str, given: dict) -> tuple[list[CallKey], list[str]]:
    """The keys to write the PTX under, and notes on the calls it will not answer."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    built = side["triton"].get("specialised")
    if built is None:
        raise BridgeError(f"{sidecar_path}:1:1: error: the sidecar does not record the build's specialisation "
                          "(written by an older from-triton): run from-triton again")
    fn = kernel_of(side, sidecar_path)
    unknown = [n for n in given if n not in fn.arg_names]
    if unknown:
        raise BridgeError(f"--arg {unknown[0]}: not a parameter of {fn.__name__} ({', '.join(fn.arg_names)})")
    backend = make_backend(GPUTarget("cuda", side["target"]["capability"], 32))
    types = side["signature"]
    free = [n for n in fn.arg_names if _integer(types.get(n, "")) and n not in given and n not in built["divisible"]]
    if 2 ** len(free) > MAX_KEYS:
        raise BridgeError(f"to-triton: {len(free)} integer parameters ({', '.join(free)}) could each be a multiple "
                          f"of 16 or not: give the real call's values with --arg NAME=VALUE")
    floats = {n: 2.0 for n, t in types.items() if t.startswith(("fp", "bf"))}   # not specialised on
    base = {**floats, **_recorded_values(side), **given}
    base.update({n: _DIVISIBLE for n in built["divisible"] if _integer(types.get(n, "")) and n not in given})
    keys, notes = [], []
    for choice in itertools.product((_DIVISIBLE, _PLAIN), repeat=len(free)):
        call = _call(fn, side, {**base, **dict(zip(free, choice))}, backend)
        why = _refusal(fn, built, call, given)
        if why is not None:
            raise BridgeError(f"to-triton: {why}: run from-triton again with the call's --arg values")
        if call.key not in {k.key for k in keys}:
            keys.append(call)
    notes += [f"note: not for calls with {n} == 1 (Triton makes it a constant; the PTX takes it as a parameter): "
              f"from-triton --arg {n}=1 builds that one" for n in free]
    return keys, notes
