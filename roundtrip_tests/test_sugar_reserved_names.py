"""Defect 4: --sugar never binds a Python keyword, builtin or DSL name to a PTX name."""

from __future__ import annotations

import builtins
import re

import pytest

from ptx2py import ptx_to_python, python_to_ptx
from ptx2py.transpile import dsl

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"


def module_with_global(name: str) -> str:
    arrays = "".join(f".global .align 1 .b8 {n}[8] = {{1,2,3,4,5,6,7,{i}}};\n"
                     for i, n in enumerate((name, "other")))
    uses = "".join(f"\tmov.u64 %rd{i}, {name};\n" for i in range(1, 9))
    return HEADER + arrays + ".visible .entry k()\n{\n\t.reg .b64 %rd<9>;\n" + uses + "\tret;\n}\n"


NAMES = ["bytes", "enumerate", "range", "zip", "len", "print", "getattr", "sym", "ptx", "reg"]


@pytest.mark.parametrize("name", NAMES)
def test_a_global_named_like_a_python_or_dsl_name_round_trips_with_sugar(name):
    text = module_with_global(name)
    source = ptx_to_python(text, sugar=True)
    assert python_to_ptx(source) == text
    reserved = set(dir(builtins)) | set(dsl.__all__)
    bound = {m.group(1) for m in re.finditer(r"^(\w+) = ", source, re.M)}
    assert not bound & reserved, bound & reserved
