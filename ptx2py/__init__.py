"""ptx2py: PTX <-> Python, composed. The packages below build on one another
(docs/architecture.md); this module puts them together for callers:

    source = ptx2py.ptx_to_python(text, sugar=True)   # transpile + the sugar passes
    assert ptx2py.python_to_ptx(source) == text        # byte for byte
    kernel = ptx2py.open("k.ptx")                      # notebooks: .python(), .ptx(), .diff(), .verify()
"""

from __future__ import annotations

from sugar import pipeline
from transpile import DSLError, python_to_ptx
from transpile import ptx_to_python as _plain_python

from .notebook import from_triton, open  # noqa: A004 - `ptx2py.open` is the API's name

__all__ = ["ptx_to_python", "python_to_ptx", "DSLError", "open", "from_triton"]


def ptx_to_python(text: str, *, sugar: bool = False, filename: str = "<string>", param_names=None) -> str:
    """Parse PTX and write the DSL Python that rebuilds it exactly; `sugar=True`: readable
    Python (the `sugar/` passes), still rebuilding the same bytes. `param_names` (with `sugar`):
    {kernel spelling: [Python name per .param]} names Triton's `<kernel>_param_<i>` parameters."""
    return _plain_python(text, passes=pipeline.passes(param_names=param_names) if sugar else None,
                         filename=filename)
