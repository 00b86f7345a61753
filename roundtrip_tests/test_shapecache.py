"""The on-disk shape store (ptxgrammar/shapecache.py): builders learned by one
process are revived by the next without the grammar, build the same trees, keep
re-checking their numbers, and a damaged, disabled or outdated store never
changes a parse."""

from __future__ import annotations

import importlib.util
import shutil

import pytest
from conftest import CORPUS, ROOT

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import ParseError, parser, shapecache
from ptx2py.ptxgrammar.parser import parse_full

SAMPLE = CORPUS / "nvcc" / "reduce.sm_80.ptx"
HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body: str) -> str:
    return HEADER + ".visible .entry k()\n{\n\t.reg .f32 %f<4>;\n" + body + "\tret;\n}\n"


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A store of our own (the shipped one off: these tests learn shapes), and a cold
    in-memory cache before and after."""
    monkeypatch.setenv(shapecache.ENV, str(tmp_path))
    monkeypatch.setenv(shapecache.SHIPPED_ENV, "off")
    parser.SHAPES.forget(store=True)
    yield tmp_path
    parser.SHAPES.forget(store=True)


def no_grammar(*_args, **_kwargs):
    raise AssertionError("the grammar was asked for a shape the store holds")


def test_a_second_process_revives_the_builders_without_the_grammar(store, monkeypatch):
    text = ptxgrammar.read_ptx(SAMPLE)
    first = ptxgrammar.parse(text)
    files = list(store.glob("shapes-*.bin"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    parser.SHAPES.forget(store=True)                     # as a fresh process would start
    monkeypatch.setattr(parser.ShapeCache, "_compile", staticmethod(no_grammar))
    again = ptxgrammar.parse(text)
    assert again == first == parse_full(text)
    assert ptxgrammar.emit(again) == text


def test_a_revived_builder_still_rechecks_its_numbers(store):
    ptxgrammar.parse(kernel("\tmov.f32 %f1, 0f3F800000;\n"))
    parser.SHAPES.forget(store=True)
    bad = kernel("\tmov.f32 %f1, 0f3F80000;\n")        # seven hex digits: no float literal
    with pytest.raises(ParseError) as fast:
        ptxgrammar.parse(bad, "k.ptx")
    with pytest.raises(ParseError) as full:
        parse_full(bad, "k.ptx")
    assert str(fast.value) == str(full.value)


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_a_damaged_store_is_ignored_and_rewritten(store, damage):
    text = ptxgrammar.read_ptx(SAMPLE)
    expected = ptxgrammar.parse(text)
    path = next(store.glob("shapes-*.bin"))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\x07" * 64 + data)
    assert not shapecache.read_records(path)[1]
    parser.SHAPES.forget(store=True)
    assert ptxgrammar.parse(text) == expected
    records, intact = shapecache.read_records(path)
    assert intact and records


def test_off_keeps_nothing_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv(shapecache.ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    parser.SHAPES.forget(store=True)
    text = ptxgrammar.read_ptx(SAMPLE)
    assert ptxgrammar.emit(ptxgrammar.parse(text)) == text
    assert shapecache.store_path() is None
    assert not any(tmp_path.rglob("*"))
    parser.SHAPES.forget(store=True)


def test_the_store_is_named_by_the_grammar_and_the_code(tmp_path, monkeypatch):
    copy = tmp_path / "ptxgrammar"
    shutil.copytree(shapecache.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    keys = {}
    for change in ("none", "grammar", "builder code"):
        if change == "grammar":
            (copy / "ptx.lark").write_text((copy / "ptx.lark").read_text() + "\n// a comment\n")
        elif change == "builder code":
            (copy / "shapes.py").write_text((copy / "shapes.py").read_text() + "\n# a comment\n")
        monkeypatch.setattr(shapecache, "PACKAGE", copy)
        shapecache._keys.cache_clear()
        keys[change] = shapecache.code_key()
    shapecache._keys.cache_clear()
    monkeypatch.undo()
    assert shapecache.code_key() == keys["none"]       # the copy hashes like the package
    assert len(set(keys.values())) == 3


def test_a_grammar_loaded_from_its_cache_parses_and_refuses_alike(store, monkeypatch):
    text = ptxgrammar.read_ptx(SAMPLE)
    bad = kernel("\tmov.f32 %f1, , %f2;\n")
    results = []
    for run in ("built", "loaded"):
        monkeypatch.setattr(parser, "_parsers", {})       # as a fresh process: no grammar yet
        parser._trivia_pattern.cache_clear()
        parser.SHAPES.forget(store=False)                # every shape from the grammar
        full = parser._parser("full")
        assert (full.lark.source_path == "<deserialized>") == (run == "loaded")
        with pytest.raises(ParseError) as refused:
            parse_full(bad, "k.ptx")
        results.append((parse_full(text), ptxgrammar.parse(text), str(refused.value),
                        parser._only_trivia("  // c\n/* d */\n"), parser.grammar_terminals()))
    assert len(list(store.glob("grammar-*.lark"))) >= 2       # the whole grammar and the chunk rules
    assert results[0] == results[1]
    assert results[0][0] == results[0][1] and results[0][3]
    parser._trivia_pattern.cache_clear()


# --- a bounded store: the log folds into an index of the most recently used shapes --------

def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# register names without digits (digits are holes: `%v12` and `%v13` share one shape)
_name = _script("grow_shape_cache").letters


def distinct_shapes(first: int, count: int) -> str:
    """A kernel of `count` statements, each a shape of its own, numbered from `first`."""
    return kernel("".join(f"\tmov.b32 %v{_name(n)}, 1;\n" for n in range(first, first + count)))


def as_a_new_process(text: str) -> None:
    parser.SHAPES.forget(store=True)
    assert ptxgrammar.emit(ptxgrammar.parse(text)) == text


@pytest.fixture
def small_store(store, monkeypatch):
    monkeypatch.setattr(shapecache, "LOG_MAX", 6_000)
    monkeypatch.setattr(shapecache, "INDEX_MAX", 20_000)
    return store


def grammar_calls(monkeypatch) -> list:
    calls, real = [], parser.ShapeCache._compile

    def counted(context, chunk):
        calls.append(chunk)
        return real(context, chunk)
    monkeypatch.setattr(parser.ShapeCache, "_compile", staticmethod(counted))
    return calls


def test_the_store_stays_under_its_cap_however_many_shapes_it_meets(small_store):
    for k in range(40):                                     # 1,200 distinct shapes, far over the cap
        as_a_new_process(distinct_shapes(30 * k, 30))
        log, index = shapecache.store_path(), shapecache.index_path()
        assert log.stat().st_size <= 2 * shapecache.LOG_MAX
        if index.exists():                                  # the builders, and the layout's fixed part
            assert index.stat().st_size <= shapecache.INDEX_MAX + shapecache.INDEX_OVERHEAD
    kept = shapecache.open_index(shapecache.index_path())
    assert kept is not None and 0 < len(kept) < 1_200       # folded, and some shapes were dropped
    stored = sum(len(k) + len(b or b"") for k, b in (kept.entry(i) for i in range(len(kept))))
    assert stored <= shapecache.INDEX_MAX
    kept.close()


def test_the_shapes_dropped_are_the_least_recently_used(small_store, monkeypatch):
    hot, cold = distinct_shapes(100_000, 10), distinct_shapes(200_000, 10)
    as_a_new_process(cold)
    for k in range(40):                                     # many new shapes; `hot` used in each process
        parser.SHAPES.forget(store=True)
        ptxgrammar.parse(hot)
        ptxgrammar.parse(distinct_shapes(30 * k, 30))
    assert shapecache.index_path().exists()
    calls = grammar_calls(monkeypatch)
    as_a_new_process(hot)
    assert calls == []                                      # every used shape survived the folds
    as_a_new_process(cold)
    assert len(calls) == 10                                 # the shapes used once, long ago, were dropped


def test_a_grown_store_is_not_read_for_shapes_the_shipped_store_holds(tmp_path, monkeypatch):
    monkeypatch.setenv(shapecache.ENV, str(tmp_path))
    monkeypatch.delenv(shapecache.SHIPPED_ENV, raising=False)
    text = ptxgrammar.read_ptx(SAMPLE)                      # a corpus file: shipped shapes only
    parser.SHAPES.forget(store=True)
    ptxgrammar.parse(distinct_shapes(0, 50))                # the user's store holds something
    parser.SHAPES.save()

    def never(*_args, **_kwargs):
        raise AssertionError("the user's store was read for shapes the shipped store holds")
    monkeypatch.setattr(shapecache, "read_records", never)
    monkeypatch.setattr(shapecache, "open_index", never)
    as_a_new_process(text)
    monkeypatch.undo()
    parser.SHAPES.forget(store=True)


def test_a_damaged_index_is_ignored_and_rebuilt(small_store, monkeypatch):
    for k in range(10):
        as_a_new_process(distinct_shapes(30 * k, 30))
    index = shapecache.index_path()
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2])
    assert shapecache.open_index(index) is None
    text = distinct_shapes(0, 30)
    parser.SHAPES.forget(store=True)
    assert ptxgrammar.parse(text) == parse_full(text)
    for k in range(10, 20):
        as_a_new_process(distinct_shapes(30 * k, 30))
    assert shapecache.open_index(index) is not None
