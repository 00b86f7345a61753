"""Control-flow analysis of PTX functions: basic blocks, dominators, post-dominators,
natural loops. Pure functions over `ptxgrammar` trees (and, through `cfg.build`, over
any statement sequence a caller can classify); reused by sugar, lint and the CPU engine.

    from ptx2py.analysis import function_cfg, natural_loops
    for fn in module.functions():
        g = function_cfg(fn)
        for loop in natural_loops(g): ...
"""

from .cfg import BasicBlock, Graph, build, function_cfg, module_cfgs
from .dominators import dominates, dominators, post_dominators
from .loops import Loop, back_edges, irreducible_edges, natural_loops

__all__ = ["BasicBlock", "Graph", "build", "function_cfg", "module_cfgs", "dominators", "post_dominators",
           "dominates", "Loop", "natural_loops", "back_edges", "irreducible_edges"]
