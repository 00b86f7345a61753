"""Names from demangled C++ signatures (shared by the names pass and the DSL):

    signature("ptx2py::ew::saxpy(float, float4 const*, int)") -> ("saxpy", ["float", "float4 const*", "int"])
    param_names(["float", "float4 const*", "int"]) -> ["a0_float", "a1_float4_ptr", "a2_int"]
"""

from __future__ import annotations

import re

_ID = re.compile(r"[^0-9A-Za-z_]+")


def ident(text: str, fallback: str) -> str:
    s = _ID.sub("_", text).strip("_")
    if not s or s[0].isdigit():
        s = fallback + ("_" + s if s else "")
    return s


def _split_top(s: str, sep: str = ",") -> list:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def strip_templates(s: str) -> str:
    out, depth = [], 0
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def signature(demangled: str):
    """(base function name, [argument types]) of a demangled function name, or None."""
    s = demangled.strip()
    if not s.endswith(")"):
        return None
    depth, k = 0, len(s) - 1
    while k >= 0:
        if s[k] == ")":
            depth += 1
        elif s[k] == "(":
            depth -= 1
            if depth == 0:
                break
        k -= 1
    if k <= 0:
        return None
    head, args = s[:k], s[k + 1:-1]
    base = strip_templates(head).split("::")[-1].split(" ")[-1]
    if not base.isidentifier() or base.startswith("operator"):
        return None
    types = [] if args.strip() in ("", "void") else _split_top(args)
    return base, types


def _type_name(t: str) -> str:
    t = strip_templates(t).replace("const", " ").replace("volatile", " ").replace("__restrict__", " ")
    suffix = "".join("_ptr" if c == "*" else "_ref" for c in t if c in "*&")
    core = t.replace("*", " ").replace("&", " ").split("::")[-1]
    core = "_".join(core.split()) or "arg"
    return ident(core, "t") + suffix


def param_names(types) -> list:
    """`a<i>_<type>` for each argument type (a trailing `_` keeps repeats apart)."""
    out, local = [], set()
    for i, t in enumerate(types):
        n = f"a{i}_{_type_name(t)}"
        while n in local:
            n += "_"
        local.add(n)
        out.append(n)
    return out
