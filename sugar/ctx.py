"""What passes share: the module, the generator, and the tree node behind each
`ptx.loc`/`ptx.data.*` statement (matched in order once, before any pass runs)."""

from __future__ import annotations

from ptx2py.ptxgrammar.tree import Loc, SectionData


class Context:
    def __init__(self, module, generator, stmts=(), options=None):
        self.options = dict(options or {})  # filename, launch (sidecar path), source (kernel source path)
        self.module = module
        self.generator = generator
        self.node: dict = {}
        self.param_names: dict = {}  # kernel spelling -> Python parameter names (from its source)
        if module is None:
            return
        for cls, pred in ((Loc, lambda h: h == "ptx.loc"), (SectionData, lambda h: h.startswith("ptx.data."))):
            nodes = [n for n in module.walk() if n.__class__ is cls]
            idx = [s for s in stmts if getattr(s.expr, "head", None).__class__ is str and pred(s.expr.head)]
            if len(nodes) == len(idx):
                for s, n in zip(idx, nodes):
                    self.node[id(s)] = n
