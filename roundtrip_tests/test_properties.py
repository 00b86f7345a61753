"""Property tests: drawn trees survive emit -> parse; mutated files either
round-trip exactly or raise a located ParseError (never another exception)."""

from __future__ import annotations

from datetime import timedelta

from conftest import corpus_files, probe_files, sample, small
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import modules

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar import ParseError
from ptx2py.ptxgrammar.parser import parse_full

SETTINGS = settings(max_examples=150, deadline=timedelta(seconds=30),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(modules())
def test_drawn_trees_emit_text_that_parses_back_to_the_same_tree(module):
    text = ptxgrammar.emit(module)
    assert ptxgrammar.parse(text) == module
    assert parse_full(text) == module


SEEDS = [ptxgrammar.read_ptx(p) for p in sample(small(corpus_files(), 40_000), 12) + sample(probe_files(), 12)]


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "truncate", "junk", "non_ascii",
                                     "nesting", "long_line"]))
        pos = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:pos] + draw(st.text(st.characters(max_codepoint=127), max_size=8)) + text[pos:]
        elif kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 20)):]
        elif kind == "replace":
            text = text[:pos] + draw(st.sampled_from(list(";{}[](),.%@!|_:#\"/* \n\t0x"))) + text[pos + 1:]
        elif kind == "truncate":
            text = text[:pos]
        elif kind == "junk":
            text = text[:pos] + draw(st.binary(min_size=1, max_size=16)).decode("latin-1") + text[pos:]
        elif kind == "non_ascii":
            text = text[:pos] + draw(st.sampled_from(["é", "\u00a0", "\ufeff", "→"])) + text[pos:]
        elif kind == "nesting":
            depth = draw(st.sampled_from([3, 100, 300, 2000]))
            text = text[:pos] + draw(st.sampled_from(["{", "(", "["])) * depth + text[pos:]
        else:
            text = text[:pos] + draw(st.sampled_from(["// " + "x" * 1_000_000 + "\n",
                                                      "add.s32 %r1, %r1, 1; " * 50_000])) + text[pos:]
    return text


@settings(max_examples=200, deadline=timedelta(seconds=60),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_mutated_input_round_trips_or_raises_parse_error(text):
    try:
        module = ptxgrammar.parse(text, "mutant.ptx")
    except ParseError as e:
        assert e.line >= 1 and e.column >= 1
        assert str(e).startswith(f"mutant.ptx:{e.line}:{e.column}: error: ")
        return
    assert ptxgrammar.emit(module) == text


# --- every construct, with and without trivia ----------------------------------------------

from strategies import bare_full_modules, full_modules, without_trivia  # noqa: E402


@SETTINGS
@given(full_modules())
def test_drawn_trees_of_every_construct_emit_text_that_parses_back(module):
    text = ptxgrammar.emit(module)
    assert ptxgrammar.parse(text) == module
    assert parse_full(text) == module


@SETTINGS
@given(bare_full_modules())
def test_hand_built_trees_of_every_construct_parse_back_to_the_same_structure(module):
    text = ptxgrammar.emit(module)
    assert without_trivia(ptxgrammar.parse(text)) == module
