"""The composition: transpile's generator with the sugar passes."""

from __future__ import annotations

from sugar import pipeline
from transpile import ptx_to_python as _plain_python


def ptx_to_python(text: str, *, sugar: bool = False, filename: str = "<string>", param_names=None) -> str:
    """Parse PTX and write the DSL Python that rebuilds it exactly; `sugar=True`: readable
    Python (the `sugar/` passes), still rebuilding the same bytes. `param_names` (with `sugar`):
    {kernel spelling: [Python name per .param]} names Triton's `<kernel>_param_<i>` parameters."""
    return _plain_python(text, passes=pipeline.passes(param_names=param_names) if sugar else None,
                         filename=filename)
