"""The command-line spellings of a Triton compile: `--signature`, `--constexprs`, `--arg`,
`--target`, parsed into plain values (no Triton needed)."""

from __future__ import annotations

import re

from .errors import BridgeError

_TARGET = re.compile(r"sm_?(\d+)([af]?)\Z")


def split_top(text: str) -> list[str]:
    """Split on commas outside brackets: `a=*fp16, d=tensordesc<fp16[128,64]>` -> 2 items."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return [x for x in out if x]


def parse_signature(text: str, arg_names: list[str]) -> tuple[dict, dict, dict]:
    """`x=*fp32:16, n=i32` or positional `*fp32:16, i32` -> ({name: type}, {name: hint},
    {name: constexpr value}).

    A `:16` hint says the pointer is 16-byte aligned or the integer a multiple of 16 (Triton's
    AOT compiler spelling); a bare number makes the parameter a constexpr of that value."""
    sig, hints, consts = {}, {}, {}
    items = split_top(text)
    for i, item in enumerate(items):
        name, sep, ty = item.partition("=")
        if not sep:
            if i >= len(arg_names):
                raise BridgeError(f"--signature: {len(items)} types for a kernel of {len(arg_names)} parameters")
            name, ty = arg_names[i], item
        name, ty = name.strip(), ty.strip()
        if name not in arg_names:
            raise BridgeError(f"--signature: {name!r} is not a parameter of the kernel ({', '.join(arg_names)})")
        base, _, hint = ty.partition(":") if not ty.startswith("tensordesc") else (ty, "", "")
        if hint:
            if hint not in ("16",):
                raise BridgeError(f"--signature: {name}: hint :{hint} (only :16 is understood)")
            hints[name] = int(hint)
        if re.fullmatch(r"-?\d+", base):
            consts[name] = int(base)
            base = "constexpr"
        sig[name] = base
    return sig, hints, consts


def constexpr_value(text: str):
    """`128` -> 128, `0.5` -> 0.5, `True` -> True, `leaky_relu` -> 'leaky_relu', `` -> ''."""
    if text in ("True", "False"):
        return text == "True"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_assignments(text: str | None, what: str) -> dict:
    """`BM=128,ACT=leaky_relu` -> {"BM": 128, "ACT": "leaky_relu"}."""
    out = {}
    for item in split_top(text or ""):
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise BridgeError(f"{what}: {item!r} is not NAME=VALUE")
        out[name.strip()] = constexpr_value(value.strip())
    return out


def parse_target(text: str) -> int:
    """`sm_90a` / `sm_100a` / `sm_80` / `90` -> the compute capability Triton's GPUTarget takes.
    Triton itself adds the `a` suffix (sm_90a, sm_100a) where the architecture has one."""
    if text.isdigit():
        return int(text)
    m = _TARGET.match(text)
    if not m:
        raise BridgeError(f"--target: {text!r} is not a target like sm_90a, sm_100a or sm_80")
    return int(m.group(1))


def grid(text: str | None) -> list[int] | None:
    if not text:
        return None
    parts = [p for p in re.split(r"[,x ]", text) if p]
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise BridgeError(f"--grid: {text!r} is not up to three integers (128,1,1)")
    return [int(p) for p in parts] + [1] * (3 - len(parts))
