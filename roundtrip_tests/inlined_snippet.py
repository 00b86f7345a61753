"""A DSL module with one inlined-call frame (`k_6`), for the tests of the debug-scope forms:
a function body goes between `HEAD` and a tail that ends it."""

from __future__ import annotations

from ptx2py import transpile

HEAD = '''from ptx2py.dsl import *  # noqa: F401,F403

ptx.version("8.0")
ptx.target("sm_80")
ptx.address_size(64)
k_6 = inlined(fn=0, at=(1, 6, 3))
with ptx.entry("k", params=[], visible=True):
    r, rd = regs(b32=10, b64=10)
'''
FILE = 'ptx.file(1, "/src/k.py")\n'


def body_lines(body: str, tail: str) -> list:
    """The PTX lines of the function body (blanks between words joined), without `.reg` lines."""
    out = transpile.python_to_ptx(HEAD + body + tail + FILE).split("\n")
    lines = [" ".join(line.split()) for line in out[out.index("{") + 1:len(out) - out[::-1].index("}") - 1]]
    return [line for line in lines if not line.startswith(".reg")]
