"""ptx2py: PTX <-> Python, composed. The packages below build on one another
(docs/architecture.md); this module puts them together for callers:

    source = ptx2py.ptx_to_python(text, sugar=True)   # transpile + the sugar passes
    assert ptx2py.python_to_ptx(source) == text        # byte for byte
    kernel = ptx2py.open("k.ptx")                      # notebooks: .python(), .ptx(), .diff(), .verify()
"""

from __future__ import annotations

from transpile import DSLError, python_to_ptx

from .compose import ptx_to_python
from .notebook import from_triton, open  # noqa: A004 - `ptx2py.open` is the API's name

__all__ = ["ptx_to_python", "python_to_ptx", "DSLError", "open", "from_triton"]
