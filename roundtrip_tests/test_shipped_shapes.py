"""The shape store shipped with the package (ptxgrammar/shipped_shapes.bin,
scripts/make_shape_store.py): every shipped builder is exactly what the grammar
builds for its shape, a file of shipped shapes parses without the grammar, and a
stale, damaged or colliding entry is a miss, never a wrong tree or an error."""

from __future__ import annotations

import pytest
from conftest import CORPUS

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import parser, shapecache
from ptx2py.ptxgrammar.parser import parse_full

SAMPLE = CORPUS / "nvcc" / "reduce.sm_80.ptx"


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """As installed: an empty user store, the shipped store on, a cold in-memory cache."""
    monkeypatch.setenv(shapecache.ENV, str(tmp_path))
    monkeypatch.delenv(shapecache.SHIPPED_ENV, raising=False)
    parser.SHAPES.forget(store=True)
    yield tmp_path
    parser.SHAPES.forget(store=True)


def grammar_calls(monkeypatch) -> list:
    """Records every shape the grammar is asked to build."""
    calls = []
    compile_shape = parser.ShapeCache._compile

    def counted(context, chunk):
        calls.append(chunk)
        return compile_shape(context, chunk)
    monkeypatch.setattr(parser.ShapeCache, "_compile", staticmethod(counted))
    return calls


STALE = ("ptxgrammar/shipped_shapes.bin is stale or missing (the grammar or a module its builders "
         "depend on changed): run python scripts/make_shape_store.py")


def test_the_shipped_store_is_current():
    assert shapecache.open_shipped(shapecache.SHIPPED) is not None, STALE


def test_every_shipped_shape_is_what_the_grammar_builds():
    shipped = shapecache.open_shipped(shapecache.SHIPPED)
    assert shipped is not None, STALE
    samples = shipped.samples()
    assert len(samples) == len(shipped) > 1000
    for i, (context, chunk) in enumerate(samples):
        key, blob = shipped.entry(i)
        fresh = parser.ShapeCache()
        fresh.stored = {}                      # nothing stored: the grammar builds it
        fresh.build(context, chunk)
        assert [k for k, _ in fresh.learned] == [key]
        assert shapecache.decode(fresh.learned[0][1]) == shapecache.decode(blob), chunk
        assert shipped.get(key) == blob
    terminals = parser._parser("spans").terminal_patterns
    assert shipped.patterns and all(terminals[name[1:]].pattern == regex for name, regex in shipped.patterns.items())


def test_a_file_of_shipped_shapes_parses_without_the_grammar(installed, monkeypatch):
    assert shapecache.open_shipped(shapecache.SHIPPED) is not None, STALE
    text = ptxgrammar.read_ptx(SAMPLE)
    calls = grammar_calls(monkeypatch)
    tree = ptxgrammar.parse(text)
    assert calls == []
    assert tree == parse_full(text) and ptxgrammar.emit(tree) == text
    assert not list(installed.glob("shapes-*.bin"))     # nothing new to keep in the user's store


def test_a_shape_not_shipped_is_built_by_the_grammar(installed, monkeypatch):
    text = (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
            "\t.reg .b32 %r<3>;\n\tmad.lo.s32 %r1, %r2, 7, %r1; // a comment no corpus file has\n\tret;\n}\n")
    calls = grammar_calls(monkeypatch)
    tree = ptxgrammar.parse(text)
    assert any("no corpus file has" in c for c in calls)
    assert tree == parse_full(text)


def _stale_copy(tmp_path):
    data = bytearray(shapecache.SHIPPED.read_bytes())
    key_at = len(shapecache._MAGIC)
    data[key_at:key_at + 24] = b"0" * 24            # made for other code
    path = tmp_path / "stale.bin"
    path.write_bytes(bytes(data))
    return path


def _damaged_copy(tmp_path):
    data = bytearray(shapecache.SHIPPED.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "damaged.bin"
    path.write_bytes(bytes(data))
    return path


def _truncated_copy(tmp_path):
    path = tmp_path / "truncated.bin"
    path.write_bytes(shapecache.SHIPPED.read_bytes()[:5000])
    return path


@pytest.mark.parametrize("make", [_stale_copy, _damaged_copy, _truncated_copy])
def test_a_stale_or_damaged_shipped_store_is_ignored(installed, monkeypatch, tmp_path, make):
    path = make(tmp_path)
    assert shapecache.open_shipped(path) is None
    monkeypatch.setenv(shapecache.SHIPPED_ENV, str(path))
    parser.SHAPES.forget(store=True)
    text = ptxgrammar.read_ptx(SAMPLE)
    calls = grammar_calls(monkeypatch)
    tree = ptxgrammar.parse(text)
    assert calls                                     # the grammar built every shape
    assert tree == parse_full(text) and ptxgrammar.emit(tree) == text


def test_an_entry_is_found_by_its_own_key_only(tmp_path, monkeypatch):
    monkeypatch.setattr(shapecache, "_key_hash", lambda key: 7)     # every key collides
    path = tmp_path / "s.bin"
    shapecache.write_shipped(path, {}, [("a\0b", "m", "a1b", b"one"), ("c\0d", "m", "c2d", None)])
    shipped = shapecache.open_shipped(path)
    assert shipped.get("a\0b") == b"one" and shipped.get("c\0d") is None
    assert shipped.get("e\0f") is shapecache.MISSING


@pytest.mark.parametrize("env", [{shapecache.ENV: "off"}, {shapecache.SHIPPED_ENV: "off"}])
def test_off_uses_no_shipped_store(tmp_path, monkeypatch, env):
    monkeypatch.setenv(shapecache.ENV, str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert shapecache.shipped_path() is None
    parser.SHAPES.forget(store=True)
    calls = grammar_calls(monkeypatch)
    text = ptxgrammar.read_ptx(SAMPLE)
    assert ptxgrammar.emit(ptxgrammar.parse(text)) == text
    assert calls
    parser.SHAPES.forget(store=True)


def test_the_shipped_name_leaves_out_only_modules_no_builder_uses(tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "ptxgrammar"
    shutil.copytree(shapecache.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.bin"))
    monkeypatch.setattr(shapecache, "PACKAGE", copy)
    keys = {}
    for change in ("none", "emitter.py", "shapes.py", "tree/operands.py", "ptx.lark"):
        if change != "none":
            (copy / change).write_text((copy / change).read_text() + "\n// x\n" if change.endswith(".lark")
                                       else (copy / change).read_text() + "\n# x\n")
        shapecache._keys.cache_clear()
        keys[change] = shapecache.shipped_key()
    shapecache._keys.cache_clear()
    monkeypatch.undo()
    assert keys["emitter.py"] == keys["none"] == shapecache.shipped_key()
    assert len({keys[c] for c in ("none", "shapes.py", "tree/operands.py", "ptx.lark")}) == 4
