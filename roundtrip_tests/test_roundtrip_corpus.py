"""parse -> emit is byte-identical on every corpus file, from the tree alone."""

from __future__ import annotations

import pytest
from conftest import (
    EXTERNAL,
    corpus_files,
    external_files,
    file_id,
    needs,
    probe_files,
    sample,
    small,
)

from ptx2py import ptxgrammar
from ptx2py.ptxgrammar.parser import Unsure, parse_fast, parse_full


def assert_roundtrip(path):
    text = ptxgrammar.read_ptx(path)
    module = ptxgrammar.parse(text, str(path))
    assert ptxgrammar.emit(module) == text


def test_corpus_is_present():
    assert len(corpus_files()) >= 250


@pytest.mark.parametrize("path", corpus_files(), ids=file_id)
def test_corpus_roundtrip(path):
    assert_roundtrip(path)


@needs(EXTERNAL)
@pytest.mark.parametrize("path", external_files(), ids=file_id)
def test_external_roundtrip(path):
    assert_roundtrip(path)


@pytest.mark.parametrize("path", probe_files(), ids=file_id)
def test_probe_roundtrip(path):
    assert_roundtrip(path)


# The fast path must build exactly the tree the full grammar builds.
@pytest.mark.parametrize(
    "path", sample(small(corpus_files(), 150_000), 40) + probe_files() + sample(external_files(), 40), ids=file_id
)
def test_fast_path_builds_the_full_grammar_tree(path):
    text = ptxgrammar.read_ptx(path)
    full = parse_full(text, str(path))
    try:
        fast = parse_fast(text)
    except Unsure:
        pytest.skip("the scanner defers this file to the full grammar")
    assert fast == full


def test_fast_path_is_taken_on_compiler_output():
    """Real producer output never needs the slow path (it would cost 5-10x)."""
    unsure = []
    for path in sample(corpus_files(), 60):
        try:
            parse_fast(ptxgrammar.read_ptx(path))
        except Unsure:
            unsure.append(file_id(path))
    assert unsure == []
