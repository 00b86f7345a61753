"""The launch sidecar format has a JSON Schema (docs/launch_sidecar.schema.json); every corpus
sidecar validates against it, and malformed sidecars do not."""

import json
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "launch_sidecar.schema.json").read_text())
SIDECARS = sorted((ROOT / "corpus" / "launch").rglob("*.json"))


def test_the_corpus_has_sidecars():
    assert len(SIDECARS) > 200


def test_every_corpus_sidecar_validates():
    validator = jsonschema.Draft202012Validator(SCHEMA)
    bad = {str(p.relative_to(ROOT)): [e.message for e in validator.iter_errors(json.loads(p.read_text()))][:2]
           for p in SIDECARS}
    assert {k: v for k, v in bad.items() if v} == {}


@pytest.mark.parametrize("broken", [
    {"kernel": "k", "grid": [1], "block": [32], "args": [{"name": "x", "kind": "scalar", "dtype": "i32"}]},
    {"kernel": "k", "grid": [0], "block": [32], "args": []},
    {"kernel": "k", "grid": [1], "block": [32], "args": [{"name": "x", "kind": "pointer", "dtype": "f13", "count": 4}]},
    {"kernel": "k", "block": [32], "args": []},
    {"kernels": []},
])
def test_malformed_sidecars_do_not_validate(broken):
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(broken))
