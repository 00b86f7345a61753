"""emulate: run PTX kernels on the CPU, from the typed tree, with sanitizer checks.

    result = emulate.run(ptx_text, launch_sidecar, inputs={"a": a})
    result.outputs["c"], result.reports, result.stats

Modules, one job each: program (flattened functions, CFG, reconvergence points), memory
(state spaces, generic addressing), layout (where variables live), warp (registers, SIMT
stack), machine (CTAs, scheduling, memory routing), semantics/ (the handler table), asyncops
(late-completing asynchronous operations), sanitizer (checks and reports), frontend (launch
sidecars), cli (`ptx2py run`, `ptx2py run-ir`). Value semantics come from ptx2py.emulate.numerics.
"""

from .errors import EmulationError, NotEmulated, Report
from .frontend import Result, reduced_launch, run

__all__ = ["run", "Result", "Report", "EmulationError", "NotEmulated", "reduced_launch"]
