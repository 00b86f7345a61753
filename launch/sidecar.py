"""Launch sidecars read, validated and found: every command that runs a kernel (`run`, `verify
--run`, `run-ir`'s launch, the notebook API) reads them through `load_sidecar` / `check_sidecar`.

A sidecar is checked against its JSON Schema (sidecar.schema.json, linked from
docs/launch_sidecar.schema.json) before anything runs; a violation is a `SidecarError`,
`launch.json:LINE:COL: error: FIELD: ...` at the field in the JSON text (the object that lacks a
required field), with the line and a caret. The validator interprets the keywords the schema
uses (type, enum, const, required, properties, additionalProperties, items, min/maxItems,
minimum/maximum, allOf, if/then, anyOf, oneOf, $ref); roundtrip_tests check it against
jsonschema over the corpus.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from ptx2py.ptxgrammar.errors import ParseError, error_at

SCHEMA_PATH = Path(__file__).with_name("sidecar.schema.json")
SCHEMA_DOC = "docs/launch_sidecar.schema.json"
ROOT = Path(__file__).resolve().parent.parent
CORPUS_PTX, CORPUS_LAUNCH = ROOT / "corpus" / "ptx", ROOT / "corpus" / "launch"
HOW_TO_WRITE = (f"`ptx2py from-triton FILE.py::KERNEL ... -o k.py` writes k.json beside k.ptx; or write one by "
                f"hand (schema: {SCHEMA_DOC}; the README's 'Launch sidecars') and pass --launch L.json")


class SidecarError(ParseError):
    """A sidecar that cannot be used: bad JSON, a schema violation, a launch the kernel cannot take."""

    def render(self) -> str:
        if self.line:
            return super().render()
        return f"{self.filename}: error: {self.message}"   # a dict given in code: no text to point into


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


# ------------------------------------------------------------------------------ the validator
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value, name: str) -> bool:
    if name in ("integer", "number"):   # JSON has no bool among its numbers
        kinds = int if name == "integer" else (int, float)
        return isinstance(value, kinds) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _shown(value) -> str:
    """A value in a message, cut short (a sidecar's whole argument list is not a message)."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _ref(root: dict, ref: str) -> dict:
    node = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def _violations(s: dict, value, path: tuple, root: dict) -> list[tuple[tuple, str, bool]]:
    """(path, message, at_key) of each violation of schema `s` by `value` at `path`; at_key: the
    message belongs at the field's name (an unknown field), not at its value."""
    if "$ref" in s:
        return _violations(_ref(root, s["$ref"]), value, path, root)
    if "type" in s:
        names = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_is_type(value, n) for n in names):
            return [(path, f"must be {' or '.join(names)}, not {_shown(value)}", False)]
    out = []
    if "enum" in s and value not in s["enum"]:
        out.append((path, f"{_shown(value)} is not one of {', '.join(map(str, s['enum']))}", False))
    if "const" in s and value != s["const"]:
        out.append((path, f"must be {_shown(s['const'])}", False))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in s and value < s["minimum"]:
            out.append((path, f"{value} is below the minimum {s['minimum']}", False))
        if "maximum" in s and value > s["maximum"]:
            out.append((path, f"{value} is above the maximum {s['maximum']}", False))
    if isinstance(value, dict):
        out += _object_violations(s, value, path, root)
    if isinstance(value, list):
        out += _array_violations(s, value, path, root)
    for sub in s.get("allOf", ()):
        out += _violations(sub, value, path, root)
    if "if" in s and not _violations(s["if"], value, path, root):
        out += _violations(s.get("then", {}), value, path, root)
    if "anyOf" in s:
        branches = [_violations(b, value, path, root) for b in s["anyOf"]]
        if all(branches):
            out.append((path, " or ".join(f"{field_name(b[0][0][len(path):])} {b[0][1]}" for b in branches), False))
    if "oneOf" in s:
        branches = [_violations(b, value, path, root) for b in s["oneOf"]]
        if sum(not b for b in branches) != 1:
            out += min(branches, key=len) if all(branches) else [(path, "matches several forms", False)]
    return out


def _object_violations(s: dict, value: dict, path: tuple, root: dict) -> list:
    out = [(path + (key,), "missing (a required field)", False) for key in s.get("required", ()) if key not in value]
    props = s.get("properties", {})
    for key, v in value.items():
        if key in props:
            out += _violations(props[key], v, path + (key,), root)
        elif s.get("additionalProperties") is False:
            out.append((path + (key,), f"unknown field (the fields: {', '.join(props)})", True))
        elif isinstance(s.get("additionalProperties"), dict):
            out += _violations(s["additionalProperties"], v, path + (key,), root)
    return out


def _array_violations(s: dict, value: list, path: tuple, root: dict) -> list:
    out = []
    if len(value) < s.get("minItems", 0):
        out.append((path, f"needs at least {s['minItems']} item(s), has {len(value)}", False))
    if "maxItems" in s and len(value) > s["maxItems"]:
        out.append((path, f"takes at most {s['maxItems']} item(s), has {len(value)}", False))
    if "items" in s:
        for i, v in enumerate(value):
            out += _violations(s["items"], v, path + (i,), root)
    return out


def violations(data) -> list[tuple[tuple, str, bool]]:
    """Every schema violation of a sidecar: (path, message, at_key)."""
    return _violations(schema(), data, (), schema())


def field_name(path: tuple) -> str:
    """`kernels[1].args[0].dtype`; the top level is `the sidecar`."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out or "the sidecar"


# ------------------------------------------------------------------------------ where fields are
_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = json.JSONDecoder()


def field_offsets(text: str) -> dict[tuple, tuple[int, int]]:
    """path -> (offset of the field's key, offset of its value) in a JSON text that parses."""
    out: dict[tuple, tuple[int, int]] = {}
    _walk(text, _WS.match(text).end(), (), -1, out)
    return out


def _walk(text: str, i: int, path: tuple, key_at: int, out: dict) -> int:
    out[path] = (key_at if key_at >= 0 else i, i)
    if text[i] == "{":
        return _members(text, i + 1, path, out)
    if text[i] == "[":
        return _items(text, i + 1, path, out)
    return _SCALAR.raw_decode(text, i)[1]


def _members(text: str, i: int, path: tuple, out: dict) -> int:
    i = _WS.match(text, i).end()
    while text[i] != "}":
        key_at = i
        key, i = json.decoder.scanstring(text, i + 1)
        i = _WS.match(text, i).end() + 1                       # past ':'
        i = _walk(text, _WS.match(text, i).end(), path + (key,), key_at, out)
        i = _WS.match(text, i).end()
        i = _WS.match(text, i + 1).end() if text[i] == "," else i
    return i + 1


def _items(text: str, i: int, path: tuple, out: dict) -> int:
    i, n = _WS.match(text, i).end(), 0
    while text[i] != "]":
        i = _walk(text, i, path + (n,), -1, out)
        i = _WS.match(text, i).end()
        i, n = (_WS.match(text, i + 1).end() if text[i] == "," else i), n + 1
    return i + 1


# ------------------------------------------------------------------------------ reading
class Located:
    """A sidecar's data with the text it came from: errors point at a field's line."""

    def __init__(self, data, text: str | None, name: str):
        self.data, self.text, self.name = data, text, name
        self._offsets = field_offsets(text) if text is not None else None

    def error(self, path: tuple, message: str, at_key: bool = False) -> SidecarError:
        """The error for a field (or for the nearest enclosing one present in the text)."""
        message = f"{field_name(path)}: {message}"
        if self._offsets is None:
            return SidecarError(message, filename=self.name, line=0, column=0)
        return _as_sidecar_error(error_at(self.text, self.offset(path, at_key), message, self.name))

    def offset(self, path: tuple, at_key: bool = False) -> int:
        """Where a field (or the nearest enclosing one present) is in the text; 0 without one."""
        if self._offsets is None:
            return 0
        while path not in self._offsets:
            path = path[:-1]
        key_at, value_at = self._offsets[path]
        return key_at if at_key else value_at

    def kernel_path(self, kernel: str) -> tuple:
        """The path of the spec of `kernel` (its `kernel` field)."""
        if isinstance(self.data, dict) and "kernels" in self.data:
            i = next((i for i, k in enumerate(self.data["kernels"]) if k.get("kernel") == kernel), 0)
            return ("kernels", i, "kernel")
        return ("kernel",)


def parse_sidecar(text: str, name: str) -> Located:
    """A sidecar's text, parsed and checked against the schema (SidecarError, located)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise _as_sidecar_error(error_at(text, e.pos, f"not JSON: {e.msg}", name)) from None
    return _checked(Located(data, text, name))


def load_sidecar(path) -> Located:
    """The sidecar file at `path` (OSError when it cannot be read), checked."""
    with open(path, encoding="utf-8") as f:
        return parse_sidecar(f.read(), str(path))


def check_sidecar(launch, name: str = "launch") -> Located:
    """A sidecar given as a path (str or Path) or as a dict (from code), checked."""
    if isinstance(launch, (str, Path)):
        return load_sidecar(launch)
    return _checked(Located(launch, None, name))


def _checked(side: Located) -> Located:
    found = violations(side.data)
    if found:
        first = min(found, key=lambda v: side.offset(v[0], v[2]))     # the first in the text, as a compiler
        raise side.error(*first)
    for path in _incomplete(side.data):
        items = side.data if not path else side.data["kernels"][path[1]]
        raise side.error(path + ("incomplete",), "a run needs " + "; ".join(items["incomplete"]), at_key=True)
    return side


def _as_sidecar_error(e: ParseError) -> SidecarError:
    if isinstance(e, SidecarError):
        return e
    return SidecarError(e.message, filename=e.filename, line=e.line, column=e.column, source_line=e.source_line)


def _incomplete(data: dict) -> list[tuple]:
    """Where from-triton left launch values out (`incomplete`): such a sidecar cannot run."""
    if "kernels" in data:
        return [("kernels", i) for i, k in enumerate(data["kernels"]) if k.get("incomplete")]
    return [()] if data.get("incomplete") else []


# ------------------------------------------------------------------------------ against the PTX
_EXTERN_SHARED = re.compile(r"\.extern\s+\.shared\b[^;]*?([A-Za-z_$%][\w$%]*)\s*\[\s*\]")


def _entry_body(ptx: str, kernel: str) -> str:
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\(", ptx)
    start = ptx.find("{", m.end()) if m else -1
    depth = 0
    for j in range(max(start, 0), len(ptx) if start >= 0 else 0):
        depth += {"{": 1, "}": -1}.get(ptx[j], 0)
        if depth == 0:
            return ptx[start:j]
    return ""


def dynamic_shared_symbols(ptx: str, kernel: str) -> list[str]:
    """The `.extern .shared` arrays (dynamic shared memory) the body of `.entry kernel` names."""
    body = _entry_body(ptx, kernel)
    return [n for n in dict.fromkeys(_EXTERN_SHARED.findall(ptx))
            if re.search(r"(?<![\w$%])" + re.escape(n) + r"(?![\w$%])", body)]


def check_against_ptx(side: Located, spec: dict, ptx: str) -> None:
    """What the schema cannot see: a kernel that uses dynamic shared memory needs `shared` bytes
    (without them the run reports out-of-bounds accesses and deadlocks the kernel does not have)."""
    kernel = spec.get("kernel", "")
    used = dynamic_shared_symbols(ptx, kernel)
    if used and not spec.get("shared"):
        raise side.error(side.kernel_path(kernel), f"kernel {kernel} uses dynamic shared memory (.extern .shared "
                         f"{used[0]}[]) but the sidecar gives no `shared` bytes: add \"shared\": N")


# ------------------------------------------------------------------------------ finding one
def sidecar_candidates(base: str, edited: str | None = None) -> list[Path]:
    """Where a sidecar for `base` (and the edited copy of it) is looked for, in order: beside the
    base (`k.ptx` -> `k.json`, as from-triton writes them), beside the edited file, and for a
    file of the corpus its corpus/launch sidecar. Never another file's sidecar of the same stem."""
    out = [Path(base).with_suffix(".json")]
    if edited:
        out.append(Path(edited).with_suffix(".json"))
    real = Path(base).resolve()
    if real.is_relative_to(CORPUS_PTX):
        out.append(CORPUS_LAUNCH / real.relative_to(CORPUS_PTX).with_suffix(".json"))
    return list(dict.fromkeys(out))


def find_sidecar(base: str, edited: str | None = None) -> Path:
    """The first sidecar candidate that exists; SidecarError saying where it looked and how to write one."""
    candidates = sidecar_candidates(base, edited)
    for c in candidates:
        if c.is_file():
            return c
    raise SidecarError(f"no launch sidecar: looked for {', '.join(map(str, candidates))}; "
                       f"{HOW_TO_WRITE}", filename=str(base), line=0, column=0)
