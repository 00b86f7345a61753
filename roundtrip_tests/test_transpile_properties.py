"""Property tests for the transpiler: drawn trees survive tree -> Python -> tree.

`modules()` draws whole modules with arbitrary trivia (strategies.py); each is
emitted, turned into DSL Python, checked to be valid Python, run back to PTX and
parsed: the result is the same tree, byte for byte.
"""

from __future__ import annotations

import ast
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from strategies import modules

from ptx2py import ptxgrammar
from ptx2py.transpile import ptx_to_python, python_to_ptx

SETTINGS = settings(max_examples=250, deadline=timedelta(seconds=20),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(modules())
def test_drawn_trees_survive_tree_python_tree(module):
    text = ptxgrammar.emit(module)
    source = ptx_to_python(text)
    ast.parse(source)  # valid Python
    back = python_to_ptx(source)
    assert back == text
    assert ptxgrammar.parse(back) == module
