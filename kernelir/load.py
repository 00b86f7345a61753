"""JSON <-> IR conversion, driven by the dataclass type hints in ir.py.

Errors name the offending node path, e.g. ``body[2].then[0]: unknown
statement kind 'Foo'``. ``schema()`` derives the JSON Schema that is checked in
as schema.json (a test keeps the two in sync).
"""
from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from . import ir

SCHEMA_PATH = Path(__file__).with_name("schema.json")


class IRError(ValueError):
    """A malformed or undefined IR construct; the message starts with the node path."""

    def __init__(self, path: str, msg: str):
        self.path, self.msg = path, msg
        super().__init__(f"{path}: {msg}" if path else msg)


def _json_name(f: dataclasses.Field) -> str:
    return f.name.rstrip("_")   # else_ -> "else"


_HINTS: dict = {}


def _hints(cls) -> dict:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _is_union(tp) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# ---------------------------------------------------------------- loading
def _convert(tp, data, path: str):
    if tp is ir.Expr:
        return _node(ir.EXPR_KINDS, "expression", data, path)
    if tp is ir.Stmt:
        return _node(ir.STMT_KINDS, "statement", data, path)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record(tp, data, path)
    if _is_union(tp):
        args = get_args(tp)
        if data is None and type(None) in args:
            return None
        for a in args:   # primitives first, then nodes
            if a in (bool, int, float, str) and _prim_ok(a, data):
                return data
        for a in args:
            if a not in (bool, int, float, str, type(None)) and isinstance(data, dict):
                return _convert(a, data, path)
        raise IRError(path, f"expected {_describe(tp)}, got {type(data).__name__}")
    if get_origin(tp) is tuple:
        if not isinstance(data, (list, tuple)):
            raise IRError(path, f"expected a list, got {type(data).__name__}")
        elem = get_args(tp)[0]
        return tuple(_convert(elem, x, f"{path}[{i}]") for i, x in enumerate(data))
    if tp in (bool, int, float, str):
        if not _prim_ok(tp, data):
            raise IRError(path, f"expected {tp.__name__}, got {data!r}")
        return data
    raise TypeError(f"unsupported annotation {tp!r}")


def _prim_ok(tp, data) -> bool:
    if tp is bool:
        return isinstance(data, bool)
    if tp is int:
        return isinstance(data, int) and not isinstance(data, bool)
    if tp is float:
        return isinstance(data, (int, float)) and not isinstance(data, bool)
    return isinstance(data, str)


def _describe(tp) -> str:
    if _is_union(tp):
        return " or ".join(_describe(a) for a in get_args(tp))
    return getattr(tp, "__name__", str(tp))


def _node(kinds: dict, what: str, data, path: str):
    if not isinstance(data, dict):
        raise IRError(path, f"expected a {what} object, got {type(data).__name__}")
    kind = data.get("kind")
    if kind not in kinds:
        raise IRError(path, f"unknown {what} kind {kind!r}")
    return _record(kinds[kind], data, path)


def _record(cls, data, path: str):
    if not isinstance(data, dict):
        raise IRError(path, f"expected a {cls.__name__} object, got {type(data).__name__}")
    if data.get("kind", cls.__name__) != cls.__name__:
        raise IRError(path, f"expected kind {cls.__name__!r}, got {data.get('kind')!r}")
    fields = dataclasses.fields(cls)
    known = {_json_name(f) for f in fields} | {"kind"}
    extra = sorted(set(data) - known)
    if extra:
        raise IRError(path, f"{cls.__name__} has no field {extra[0]!r}")
    hints = _hints(cls)
    kw = {}
    for f in fields:
        key, fpath = _json_name(f), _join(path, _json_name(f))
        if key not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise IRError(path, f"{cls.__name__} is missing field {key!r}")
            continue
        val = _convert(hints[f.name], data[key], fpath)
        allowed = f.metadata.get("enum")
        if allowed is not None and val not in allowed:
            raise IRError(fpath, f"{val!r} is not one of {list(allowed)}")
        kw[f.name] = val
    obj = cls(**kw)
    _check(obj, path)
    return obj


def _check(obj, path: str) -> None:
    """Structural checks the types alone cannot express."""
    if isinstance(obj, ir.Lit) and isinstance(obj.value, str):
        if obj.value not in ir.LIT_SPECIALS:
            raise IRError(_join(path, "value"), f"literal string must be one of {ir.LIT_SPECIALS}")
    if isinstance(obj, ir.Call) and len(obj.args) != ir.CALL_ARITY[obj.fn]:
        raise IRError(path, f"{obj.fn} takes {ir.CALL_ARITY[obj.fn]} args, got {len(obj.args)}")
    if isinstance(obj, ir.Launch):
        for name in ("grid", "block"):
            if len(getattr(obj, name)) != 3:
                raise IRError(_join(path, name), "expected 3 entries (x, y, z)")
    if isinstance(obj, ir.CpAsyncCopy) and obj.bytes not in (4, 8, 16):
        raise IRError(_join(path, "bytes"), "cp.async copies 4, 8 or 16 bytes")


# ---------------------------------------------------------------- the fast path
# One converter per annotation, built once from the same type hints: no per-node
# field introspection and no node paths. It accepts exactly what `_convert` accepts;
# on anything else it gives up (`_Reject`) and `load_kernel` reruns `_record`, whose
# error names the node path.

class _Reject(Exception):
    pass


_FAST: dict = {}
_PRIMS = (bool, int, float, str)
_CHECKED = (ir.Lit, ir.Call, ir.Launch, ir.CpAsyncCopy)  # the classes `_check` looks at


def _fast(tp):
    conv = _FAST.get(tp)
    if conv is None:
        _FAST[tp] = lambda data: _FAST[tp](data)   # a recursive type refers to itself
        conv = _FAST[tp] = _build_fast(tp)
    return conv


def _build_fast(tp):
    if tp is ir.Expr or tp is ir.Stmt:
        kinds = ir.EXPR_KINDS if tp is ir.Expr else ir.STMT_KINDS
        by_kind = {k: _fast_record(cls) for k, cls in kinds.items()}

        def node(data):
            try:
                conv = by_kind[data["kind"]]
            except (KeyError, TypeError, IndexError):   # no kind, an unknown one, not a dict
                raise _Reject from None
            return conv(data)   # which rejects a dict subclass, as _record does not see one
        return node
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _fast_record(tp)
    if _is_union(tp):
        args = get_args(tp)
        optional = type(None) in args
        prims = [a for a in args if a in _PRIMS]
        nodes = [_fast(a) for a in args if a not in _PRIMS and a is not type(None)]

        def union(data):
            if data is None and optional:
                return None
            for a in prims:
                if _prim_ok(a, data):
                    return data
            if nodes and isinstance(data, dict):
                return nodes[0](data)
            raise _Reject
        return union
    if get_origin(tp) is tuple:
        elem = _fast(get_args(tp)[0])

        def sequence(data):
            if not isinstance(data, (list, tuple)):
                raise _Reject
            return tuple([elem(x) for x in data])
        return sequence
    if tp in _PRIMS:
        def prim(data):
            if not _prim_ok(tp, data):
                raise _Reject
            return data
        return prim
    raise TypeError(f"unsupported annotation {tp!r}")


def _fast_record(cls):
    hints = _hints(cls)
    name = cls.__name__
    fields = []
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{name}.{f.name}: the fast loader needs plain defaults")
        default = _REQUIRED if f.default is dataclasses.MISSING else f.default
        fields.append((f.name, _json_name(f), hints[f.name], f.metadata.get("enum"), default))
    known = frozenset(key for _, key, _, _, _ in fields) | {"kind"}
    checked = issubclass(cls, _CHECKED)
    new = object.__new__
    convs: list = []

    def record(data):
        if not convs:   # converters of the fields, on first use (the types may be recursive)
            convs.extend((fname, key, _PRIM_CLASS.get(tp) or _fast(tp), enum, default)
                         for fname, key, tp, enum, default in fields)
        if data.__class__ is not dict or data.get("kind", name) != name or not known.issuperset(data):
            raise _Reject
        # the frozen dataclass's fields, set without its __init__ (one object.__setattr__
        # per field): the same object for a fraction of the cost
        obj = new(cls)
        d = obj.__dict__
        for fname, key, conv, allowed, default in convs:
            val = data.get(key, default)
            # the default object itself (absent, or the same small int/None) needs no check
            if val is not default:
                if conv.__class__ is type:      # str or int: the exact class, as _prim_ok says
                    if val.__class__ is not conv:
                        raise _Reject
                else:
                    val = conv(val)
                if allowed is not None and val not in allowed:
                    raise _Reject
            elif val is _REQUIRED:
                raise _Reject
            d[fname] = val
        if checked:
            _check(obj, "")
        return obj
    return record


_REQUIRED = object()   # the default of a field without one
# fields whose JSON value must be exactly this class (bool is not an int here)
_PRIM_CLASS = {str: str, int: int}


def load_kernel(src) -> ir.Kernel:
    """Load a Kernel from a path, a JSON string, or a dict. A problem file
    ({"kernel": ..., "problem": ...}) is accepted too."""
    data = load_json(src)
    if isinstance(data, dict) and "kernel" in data and data.get("kind") != "Kernel":
        data = data["kernel"]
    try:
        return _fast(ir.Kernel)(data)
    except (_Reject, IRError):
        pass
    return _record(ir.Kernel, data, "")   # raises the located IRError


def load_json(src) -> Any:
    if isinstance(src, dict):
        return src
    if isinstance(src, Path) or (isinstance(src, str) and not src.lstrip().startswith("{")):
        return json.loads(Path(src).read_text())
    return json.loads(src)


# ---------------------------------------------------------------- dumping
def to_json(obj):
    if isinstance(obj, tuple):
        return [to_json(x) for x in obj]
    if dataclasses.is_dataclass(obj):
        out = {"kind": obj.kind}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if v is None:
                continue   # optional and absent
            out[_json_name(f)] = to_json(v)
        return out
    if isinstance(obj, float) and not math.isfinite(obj):
        raise ValueError("non-finite float literal: use 'inf'/'-inf'/'nan'")
    return obj


def dump_kernel(kernel: ir.Kernel) -> dict:
    return to_json(kernel)


# ---------------------------------------------------------------- schema
def _schema_of(tp, meta=None) -> dict:
    if meta and "enum" in meta:
        return {"enum": list(meta["enum"])}
    if tp is ir.Expr:
        return {"$ref": "#/$defs/Expr"}
    if tp is ir.Stmt:
        return {"$ref": "#/$defs/Stmt"}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return {"$ref": f"#/$defs/{tp.__name__}"}
    if _is_union(tp):
        return {"anyOf": [_schema_of(a) for a in get_args(tp)]}
    if get_origin(tp) is tuple:
        return {"type": "array", "items": _schema_of(get_args(tp)[0])}
    prim = {bool: "boolean", int: "integer", float: "number", str: "string",
            type(None): "null"}
    return {"type": prim[tp]}


def _record_schema(cls) -> dict:
    hints, props, req = _hints(cls), {"kind": {"const": cls.__name__}}, ["kind"]
    for f in dataclasses.fields(cls):
        props[_json_name(f)] = _schema_of(hints[f.name], f.metadata)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            req.append(_json_name(f))
    return {"type": "object", "properties": props, "required": req,
            "additionalProperties": False}


def schema() -> dict:
    defs = {}
    for table in (ir.EXPR_KINDS, ir.STMT_KINDS, ir.RECORD_KINDS):
        for name, cls in table.items():
            defs[name] = _record_schema(cls)
    defs["Lit"]["properties"]["value"] = {"anyOf": [
        {"type": "boolean"}, {"type": "number"}, {"enum": list(ir.LIT_SPECIALS)}]}
    defs["Launch"]["properties"]["grid"].update(minItems=3, maxItems=3)
    defs["Launch"]["properties"]["block"].update(minItems=3, maxItems=3)
    defs["CpAsyncCopy"]["properties"]["bytes"] = {"enum": [4, 8, 16]}
    defs["Expr"] = {"oneOf": [{"$ref": f"#/$defs/{k}"} for k in ir.EXPR_KINDS]}
    defs["Stmt"] = {"oneOf": [{"$ref": f"#/$defs/{k}"} for k in ir.STMT_KINDS]}
    num_map = {"type": "object", "additionalProperties": {"type": "number"}}
    defs["Problem"] = {
        "type": "object",
        "properties": {
            "category": {"enum": ["pointwise", "reduction", "normalization",
                                  "matmul", "attention"]},
            "description": {"type": "string"},
            "params": num_map, "test_params": num_map,
            "rtol": {"type": "number"}, "atol": {"type": "number"},
        },
        "required": ["category", "params", "test_params", "rtol", "atol"],
        "additionalProperties": False,
    }
    defs["ProblemFile"] = {
        "type": "object",
        "properties": {"kernel": {"$ref": "#/$defs/Kernel"},
                       "problem": {"$ref": "#/$defs/Problem"}},
        "required": ["kernel", "problem"], "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://ptx2py/kernelir/schema.json",
        "title": "kernelir kernel or problem file",
        "anyOf": [{"$ref": "#/$defs/Kernel"}, {"$ref": "#/$defs/ProblemFile"}],
        "$defs": defs,
    }


def write_schema(path: Path = SCHEMA_PATH) -> None:
    path.write_text(json.dumps(schema(), indent=1) + "\n")


if __name__ == "__main__":
    write_schema()
