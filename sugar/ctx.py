"""What passes share: the module, the generator and the names in use."""

from __future__ import annotations


class Context:
    def __init__(self, module, generator):
        self.module = module
        self.generator = generator
        self.header: list = []  # extra statements a pass wants right after ptx.style(...)
