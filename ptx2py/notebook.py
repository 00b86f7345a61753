"""A kernel as a notebook object: its PTX, its Python, diffs, ptxas verification and a rich
HTML view (highlighted PTX beside the Python).

    k = ptx2py.open("k.ptx")                  # or k.py, a Triton cache folder, a CompiledKernel
    k.python(sugar=True); k.ptx(); k.diff(other); k.verify(other); k      # (Jupyter shows k as HTML)
    k.run(max_ctas=2).outputs                 # the CPU engine, on the sidecar's launch
"""

from __future__ import annotations

import difflib
import html
import json
from pathlib import Path


class Kernel:
    def __init__(self, ptx: str, *, name: str = "kernel", sidecar: dict | None = None, python: str | None = None,
                 sidecar_path: Path | None = None, line_map: dict | None = None):
        self._ptx, self.name, self.sidecar, self._python = ptx, name, sidecar, python
        self.sidecar_path = sidecar_path      # where `sidecar` was read: run() checks it there, located
        self._line_map = line_map             # {PTX line: Python line} for a kernel opened from a .py

    def ptx(self) -> str:
        return self._ptx

    def python(self, sugar: bool = True) -> str:
        """The Python that re-emits this PTX byte for byte (parameters named from the sidecar when there is one)."""
        from .compose import ptx_to_python

        sidecar = self.sidecar or {}
        names = sidecar.get("param_names")
        table = {sidecar["kernel"]: names} if names else None
        return ptx_to_python(self._ptx, sugar=sugar, filename=self.name, param_names=table)

    def diff(self, other, context: int = 3) -> str:
        """Unified diff of the two modules' PTX."""
        o = _as_kernel(other)
        return "".join(difflib.unified_diff(self._ptx.splitlines(True), o._ptx.splitlines(True),
                                            self.name, o.name, n=context))

    def verify(self, other) -> dict:
        """Assemble both with ptxas and compare (verify/report.py's report: registers, spills, SASS)."""
        from ptx2py.verify.report import verify_texts

        o = _as_kernel(other)
        return verify_texts(self._ptx, o._ptx, base_name=self.name, edited_name=o.name)

    def run(self, inputs: dict | None = None, *, launch: dict | str | Path | None = None, kernel: str | None = None,
            max_ctas: int | None = None, max_elements: int | None = None, schedule: str = "inorder",
            sanitize: bool = True):
        """Run on the CPU engine (emulate.run): the launch (a sidecar's path or its dict) is the sidecar's
        unless given, checked first (launch.sidecar: a located SidecarError); `max_ctas`, `max_elements`
        reduce it as `ptx2py run` does. Returns emulate's Result(outputs, reports, stats); for a kernel
        opened from a .py, the reports name its Python lines, as `ptx2py run k.py` does."""
        from ptx2py.emulate.errors import python_ptx_name
        from ptx2py.emulate.frontend import checked_launch, reduced_launch, run, select_spec

        if launch is None:
            launch = self.sidecar_path or self.sidecar
        if launch is None:
            from ptx2py.launch.sidecar import HOW_TO_WRITE, sidecar_candidates

            looked = ", ".join(map(str, sidecar_candidates(self.name))) if Path(self.name).is_file() else "nowhere"
            raise ValueError(f"{self.name}: no launch sidecar (looked for {looked}): pass launch= (a sidecar's "
                             f"path or dict); {HOW_TO_WRITE.replace(' and pass --launch L.json', '')}")
        launch = checked_launch(launch, self._ptx, kernel)
        if max_ctas or max_elements:
            launch = reduced_launch(select_spec(launch, kernel), max_ctas or 1 << 62, max_elements)
        ptx_name = python_ptx_name(self.name) if self._line_map is not None else self.name
        result = run(self._ptx, launch, inputs, kernel=kernel, schedule=schedule, sanitize=sanitize,
                     filename=ptx_name)
        if self._line_map is not None:
            result.reports[:] = [r.at_python(self._line_map, ptx_name, self.name) for r in result.reports]
        return result

    def _repr_html_(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        from ptx2py.highlight.lexer import highlight_html

        py = highlight(self.python(sugar=True), PythonLexer(), HtmlFormatter(noclasses=True))
        cell = '<td style="vertical-align:top;text-align:left;max-width:50%;overflow:auto">'
        return (f"<table><tr><th>PTX: {html.escape(self.name)}</th><th>Python (--sugar)</th></tr>"
                f"<tr>{cell}{highlight_html(self._ptx)}</td>{cell}{py}</td></tr></table>")

    def __repr__(self):
        return f"<ptx2py.Kernel {self.name}: {self._ptx.count(chr(10))} lines of PTX>"


def _as_kernel(x) -> Kernel:
    if isinstance(x, Kernel):
        return x
    if isinstance(x, str) and "\n" in x:  # PTX text
        return Kernel(x, name="<ptx>")
    return open(x)


def _sidecar_beside(path: Path) -> Path | None:
    """The launch sidecar of a file: beside it (from-triton's k.json) or, for a corpus file, the corpus's own."""
    from ptx2py.launch.plan import sidecar_for

    return sidecar_for(str(path))


def _read_sidecar(side: Path | None) -> dict | None:
    """The sidecar's data for naming parameters (python()); run() checks it fully."""
    try:
        data = json.loads(side.read_text()) if side is not None else None
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and ("kernel" in data or "kernels" in data) else None


def _from_build(build, name: str) -> Kernel:
    from ptx2py.tritonbridge.outputs import kernel_param_names
    from ptx2py.tritonbridge.sidecar import build_sidecar

    sidecar = build_sidecar(build, ptx_file=f"{build.compiled.metadata.name}.ptx")
    sidecar["param_names"] = kernel_param_names(build, sidecar)
    return Kernel(build.ptx, name=name, sidecar=sidecar)


def from_triton(compiled) -> Kernel:
    """A Triton `CompiledKernel` (from `triton.compile(...)` or `kernel.warmup(...)`)."""
    from ptx2py.tritonbridge.compile import from_compiled

    build = from_compiled(compiled)
    return _from_build(build, build.compiled.metadata.name)


def open(source) -> Kernel:  # noqa: A001 - `ptx2py.open`
    """A `.ptx` file, a `.py` file (run through py2ptx), a Triton cache folder, or a `CompiledKernel`."""
    if hasattr(source, "asm") and hasattr(source, "metadata"):
        return from_triton(source)
    path = Path(source)
    if path.is_dir():
        from ptx2py.tritonbridge.compile import from_cache_dir

        return _from_build(from_cache_dir(str(path)), path.name)
    line_map = None
    if path.suffix == ".py":
        from ptx2py.transpile.traced import python_to_ptx_traced

        ptx, line_map = python_to_ptx_traced(path.read_text(), str(path))
        line_map = line_map or {}
    else:
        from ptx2py.ptxgrammar import read_ptx

        ptx = read_ptx(str(path))
    side = _sidecar_beside(path)
    return Kernel(ptx, name=str(path), sidecar=_read_sidecar(side), sidecar_path=side, line_map=line_map)
