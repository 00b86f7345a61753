"""The composition: transpile's generator with the sugar passes."""

from __future__ import annotations

from ptx2py.transpile import ptx_to_python as _plain_python


def ptx_to_python(text: str, *, sugar: bool = False, filename: str = "<string>", param_names=None,
                  launch: str | None = None, source: str | None = None) -> str:
    """Parse PTX and write the DSL Python that rebuilds it exactly; `sugar=True`: readable
    Python (the `sugar/` passes), still rebuilding the same bytes. `param_names` (with `sugar`):
    {kernel spelling: [Python name per .param]} names Triton's `<kernel>_param_<i>` parameters;
    `launch`, `source`: a launch sidecar and a kernel source the sugar may name parameters from."""
    if not sugar:     # the sugar passes load only when asked for (a tenth of a plain start-up)
        return _plain_python(text, filename=filename)
    from ptx2py.sugar import pipeline

    passes = pipeline.passes(filename=filename, param_names=param_names, launch=launch, source=source)
    return _plain_python(text, passes=passes, filename=filename)
