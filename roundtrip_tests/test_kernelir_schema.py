"""kernelir JSON: schema.json, problem files, load/dump round trip, error paths."""
import json

import pytest

from ptx2py.kernelir import PROBLEM_NAMES, SCHEMA_PATH, IRError, dump_kernel, load_kernel, schema
from ptx2py.kernelir.problems import problem_path
from ptx2py.kernelir.problems.build import problem_json

jsonschema = pytest.importorskip("jsonschema")


@pytest.fixture(scope="module")
def validator():
    sch = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(sch)
    return jsonschema.Draft202012Validator(sch)


def test_schema_file_matches_generator():
    assert json.loads(SCHEMA_PATH.read_text()) == schema(), \
        "run: python -m kernelir.load"


def test_fifteen_problems():
    assert len(PROBLEM_NAMES) == 15 and len(set(PROBLEM_NAMES)) == 15


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_problem_file_validates_and_round_trips(name, validator):
    data = json.loads(problem_path(name).read_text())
    errors = sorted(validator.iter_errors(data), key=str)
    assert not errors, errors[0].message
    validator.validate(data["kernel"])   # a bare kernel is valid too
    k1 = load_kernel(data)
    d1 = dump_kernel(k1)
    assert d1 == data["kernel"]
    assert load_kernel(d1) == k1
    assert load_kernel(json.dumps(d1)) == k1
    assert load_kernel(problem_path(name)) == k1


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_problem_file_matches_build_script(name):
    assert json.loads(problem_path(name).read_text()) == problem_json(name), \
        "run: python -m kernelir.problems.build"


def _kernel(body):
    return {"kind": "Kernel", "name": "k", "buffers": [], "params": [],
            "launch": {"kind": "Launch", "grid": [1, 1, 1], "block": [32, 1, 1]},
            "body": body}


TRUE = {"kind": "Lit", "value": True, "dtype": "pred"}


@pytest.mark.parametrize("body, message", [
    ([{"kind": "Sync"}, {"kind": "Sync"},
      {"kind": "Cond", "cond": TRUE, "then": [{"kind": "Foo"}]}],
     "body[2].then[0]: unknown statement kind 'Foo'"),
    ([{"kind": "Assign", "var": "x", "dtype": "f32",
       "value": {"kind": "Binary", "op": "pow", "a": TRUE, "b": TRUE}}],
     "body[0].value.op: 'pow' is not one of"),
    ([{"kind": "Assign", "var": "x", "dtype": "f32",
       "value": {"kind": "Nope"}}], "body[0].value: unknown expression kind 'Nope'"),
    ([{"kind": "Assign", "var": "x", "dtype": "f32"}],
     "body[0]: Assign is missing field 'value'"),
    ([{"kind": "Sync", "extra": 1}], "body[0]: Sync has no field 'extra'"),
    ([{"kind": "Loop", "var": "i", "start": TRUE, "stop": TRUE, "step": TRUE,
       "body": [{"kind": "Write", "buffer": "b", "index": 3, "value": TRUE}]}],
     "body[0].body[0].index: expected a expression object"),
    ([{"kind": "Assign", "var": "x", "dtype": "f32",
       "value": {"kind": "Lit", "value": "infinity", "dtype": "f32"}}],
     "body[0].value.value: literal string"),
])
def test_load_errors_name_the_node(body, message, validator):
    with pytest.raises(IRError) as exc:
        load_kernel(_kernel(body))
    assert str(exc.value).startswith(message), str(exc.value)
    assert not validator.is_valid(_kernel(body))


def test_else_branch_uses_json_key_else():
    data = _kernel([{"kind": "Cond", "cond": TRUE, "then": [], "else": [{"kind": "Sync"}]}])
    k = load_kernel(data)
    assert len(k.body[0].else_) == 1
    assert dump_kernel(k)["body"][0]["else"] == [{"kind": "Sync"}]
