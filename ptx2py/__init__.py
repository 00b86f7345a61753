"""ptx2py: PTX <-> Python, composed. The packages below build on one another
(docs/architecture.md); this module puts them together for callers:

    source = ptx2py.ptx_to_python(text, sugar=True)   # transpile + the sugar passes
    assert ptx2py.python_to_ptx(source) == text        # byte for byte
"""

from __future__ import annotations

from sugar import pipeline
from transpile import DSLError, python_to_ptx
from transpile import ptx_to_python as _plain_python

__all__ = ["ptx_to_python", "python_to_ptx", "DSLError"]


def ptx_to_python(text: str, *, sugar: bool = False, filename: str = "<string>") -> str:
    """Parse PTX and write the DSL Python that rebuilds it exactly; `sugar=True`: readable
    Python (the `sugar/` passes), still rebuilding the same bytes."""
    return _plain_python(text, passes=pipeline.apply if sugar else None, filename=filename)
