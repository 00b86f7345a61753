"""ptx2py: PTX <-> Python, composed. The packages below build on one another
(docs/architecture.md); this module puts them together for callers:

    source = ptx2py.ptx_to_python(text, sugar=True)   # transpile + the sugar passes
    assert ptx2py.python_to_ptx(source) == text        # byte for byte
    kernel = ptx2py.open("k.ptx")                      # notebooks: .python(), .ptx(), .diff(), .verify()

Every part of the product is a subpackage of this one: ptx2py.ptxgrammar, ptx2py.transpile,
ptx2py.sugar, ptx2py.lint, ptx2py.emulate, ... (the only name the distribution installs).
The entry points load on first use, so `import ptx2py.ptxgrammar` costs only the grammar.
"""

from __future__ import annotations

import importlib
from pathlib import Path

# In a checkout the subpackages are folders beside this one (the design card's layout:
# ptxgrammar/, transpile/, sugar/, ..., cli.py at the top); the wheel maps them inside this
# package. Looking beside this folder too lets a checkout (or a git worktree) import its own code.
_CHECKOUT = Path(__file__).resolve().parent.parent
if (_CHECKOUT / "ptxgrammar" / "ptx.lark").is_file() and str(_CHECKOUT) not in __path__:
    __path__.append(str(_CHECKOUT))

# name -> (module, attribute): PEP 562's lazy attributes
_ENTRY_POINTS = {
    "ptx_to_python": ("ptx2py.compose", "ptx_to_python"),
    "python_to_ptx": ("ptx2py.transpile", "python_to_ptx"),
    "DSLError": ("ptx2py.transpile", "DSLError"),
    "open": ("ptx2py.notebook", "open"),
    "from_triton": ("ptx2py.notebook", "from_triton"),
}

__all__ = ["ptx_to_python", "python_to_ptx", "DSLError", "open", "from_triton"]
__version__ = "0.2.0"


def __getattr__(name: str):
    if name not in _ENTRY_POINTS:
        raise AttributeError(f"module 'ptx2py' has no attribute {name!r}")
    module, attr = _ENTRY_POINTS[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
