"""The PTX -> Python -> PTX loop leaves no reference cycles behind: the tree and the
generation IR are freed by reference counting as soon as they are dropped, so no garbage
collection ever has to walk them (a cycle holding the tree made every loop pay for one)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from ptx2py import ptxgrammar
from ptx2py.transpile import ptx_to_python, python_to_ptx

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "ptx"
FILES = sorted(CORPUS.rglob("*.ptx"), key=lambda p: p.stat().st_size)


def cyclic_garbage(fn, *args) -> tuple:
    """(objects the first collection after `fn` finds in cycles, what `fn` returned)."""
    fn(*args)            # warm: imports and caches may leave one-off garbage
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        result = fn(*args)
        return gc.collect(), result
    finally:
        if was:
            gc.enable()


@pytest.mark.parametrize("path", [FILES[len(FILES) // 2], FILES[-40]], ids=lambda p: p.name)
def test_the_loop_leaves_no_cyclic_garbage(path):
    text = ptxgrammar.read_ptx(path)
    found, source = cyclic_garbage(ptx_to_python, text)
    assert found == 0
    found, out = cyclic_garbage(python_to_ptx, source)
    assert found == 0
    assert out == text


def test_a_run_after_an_implicit_recorder_gives_the_collector_back():
    # DSL calls outside python_to_ptx make a recorder implicitly; the next run must not
    # take its "GC was off" for the truth and leave the collector off for the process
    from ptx2py.transpile.dsl import recorder

    assert gc.isenabled()
    recorder.current()
    python_to_ptx(ptx_to_python(ptxgrammar.read_ptx(FILES[0])))
    assert gc.isenabled()
