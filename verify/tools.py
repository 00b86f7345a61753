"""Finding ptxas, cuobjdump and nvdisasm, and the PTX ISA each ptxas accepts.

Search order (the report names the tool used and where it came from):
  1. an explicit path: `--ptxas PATH` / `$PTX2PY_PTXAS` (and `$PTX2PY_CUOBJDUMP`, `$PTX2PY_NVDISASM`);
  2. `PATH`;
  3. `$CUDA_HOME/bin` (or `$CUDA_PATH/bin`);
  4. the CUDA pip wheels in every site-packages: `nvidia/cu13/bin` (CUDA 13 layout, `pip install
     'ptx2py[cuda-tools]'`) and `nvidia/cuda_nvcc/bin`, `nvidia/cuda_cuobjdump/bin`,
     `nvidia/cuda_nvdisasm/bin` (CUDA 12 layout);
  5. Triton's wheel (`triton/backends/nvidia/bin`, with its `-blackwell` variants).
Chromium (the headless browser the verify page is tested in) is found the same way: `$PTX2PY_CHROMIUM`,
then each of BROWSERS on `PATH`.
For ptxas the first one whose CUDA release supports the module's `.version` wins; for the
disassembler the newest release found wins.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

INSTALL_HINT = "pip install 'ptx2py[cuda-tools]'   (nvidia-cuda-nvcc, nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm)"
ENV_OVERRIDE = {"ptxas": "PTX2PY_PTXAS", "cuobjdump": "PTX2PY_CUOBJDUMP", "nvdisasm": "PTX2PY_NVDISASM",
                "chromium": "PTX2PY_CHROMIUM"}
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome", "chrome-headless-shell")
# where each CUDA pip wheel puts its binaries, relative to site-packages (CUDA 13, then CUDA 12 layout)
WHEEL_BIN_DIRS = {
    "ptxas": ("nvidia/cu13/bin", "nvidia/cuda_nvcc/bin"),
    "cuobjdump": ("nvidia/cu13/bin", "nvidia/cuda_cuobjdump/bin"),
    "nvdisasm": ("nvidia/cu13/bin", "nvidia/cuda_nvdisasm/bin"),
}
TRITON_BIN_DIR = "triton/backends/nvidia/bin"
# newest PTX ISA per CUDA 12 minor release (CUDA 13.x accepts PTX ISA 9.x)
_PTX_FOR_CUDA_12 = {0: (8, 0), 1: (8, 1), 2: (8, 2), 3: (8, 3), 4: (8, 4), 5: (8, 5), 6: (8, 5), 7: (8, 6),
                    8: (8, 7), 9: (8, 8)}


class ToolError(Exception):
    """No usable tool (exit 2)."""


@dataclass(frozen=True)
class Tool:
    path: str
    release: tuple[int, int] | None  # CUDA release, from --version
    origin: str

    @property
    def max_ptx(self) -> tuple[int, int]:
        return ptx_isa_for_release(self.release)

    def describe(self) -> str:
        rel = f"CUDA {self.release[0]}.{self.release[1]}" if self.release else "unknown release"
        if Path(self.path).name.startswith("ptxas"):
            rel += ", PTX ISA <= %d.%d" % self.max_ptx
        return f"{self.path} ({self.origin}, {rel})"


def ptx_isa_for_release(release) -> tuple[int, int]:
    """Newest PTX ISA a CUDA release's ptxas accepts."""
    if release is None:
        return (0, 0)
    major, minor = release
    if major >= 13:
        return (9, minor)
    if major == 12:
        return _PTX_FOR_CUDA_12.get(minor, (8, 8))
    if major == 11:
        return (7, min(minor, 8))
    return (6, 4)


@lru_cache(maxsize=None)
def _release(path: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def site_dirs() -> list[Path]:
    import site
    import sys

    dirs = [Path(p) for p in sys.path if p.endswith("site-packages")]
    try:
        dirs += [Path(p) for p in site.getsitepackages()]
    except AttributeError:
        pass
    seen, out = set(), []
    for d in dirs:
        if d not in seen and d.is_dir():
            seen.add(d)
            out.append(d)
    return out


def _executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def candidates(name: str, explicit: str | None = None) -> list[tuple[str, str]]:
    """(path, origin) for every `name` binary found, in search order, each real file once."""
    found: list[tuple[str, str]] = []
    override = explicit or (os.environ.get(ENV_OVERRIDE[name]) if name in ENV_OVERRIDE else None)
    if override:
        if not _executable(Path(override)):
            how = "--ptxas" if explicit else f"${ENV_OVERRIDE[name]}"
            raise ToolError(f"{how} {override}: not an executable file")
        found.append((override, "--ptxas" if explicit else f"${ENV_OVERRIDE[name]}"))
    p = shutil.which(name)
    if p:
        found.append((p, "PATH"))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and _executable(Path(home) / "bin" / name):
            found.append((str(Path(home) / "bin" / name), f"${var}"))
    for site in site_dirs():
        for sub in WHEEL_BIN_DIRS.get(name, ()):
            if _executable(site / sub / name):
                found.append((str(site / sub / name), sub.split("/")[1] + " wheel"))
        for variant in (name, name + "-blackwell"):
            if _executable(site / TRITON_BIN_DIR / variant):
                found.append((str(site / TRITON_BIN_DIR / variant), "triton wheel"))
    out, seen = [], set()
    for p, origin in found:
        real = os.path.realpath(p)
        if real not in seen:
            seen.add(real)
            out.append((p, origin))
    return out


def find_ptxas_all(explicit: str | None = None) -> list[Tool]:
    return [Tool(p, _release(p), origin) for p, origin in candidates("ptxas", explicit)]


def find_ptxas(version: tuple[int, int] | None, explicit: str | None = None) -> tuple[Tool | None, list[Tool]]:
    """The first ptxas (in search order) new enough for `version`, and all found. An explicit
    path is used whatever its release (the caller asked for it)."""
    tools = find_ptxas_all(explicit)
    if explicit and tools:
        return tools[0], tools
    for t in tools:
        if version is None or t.max_ptx >= version:
            return t, tools
    return None, tools


def require_ptxas(version: tuple[int, int] | None, explicit: str | None = None) -> tuple[Tool, list[Tool]]:
    """find_ptxas, or a ToolError naming the PTX ISA needed, what was found and how to get one."""
    tool, found = find_ptxas(version, explicit)
    if tool is not None:
        return tool, found
    need = f"{version[0]}.{version[1]}" if version else "?"
    seen = "\n".join(f"  {t.describe()}" for t in found) or "  none (no ptxas on PATH, $CUDA_HOME, pip wheels, Triton)"
    raise ToolError(f"the module is PTX ISA {need}; no ptxas found supports it (PTX ISA {need} needs "
                    f"CUDA {_release_for_isa(version)} or newer). Found:\n{seen}\n"
                    f"Install one with: {INSTALL_HINT}\nor point at one with --ptxas PATH or "
                    f"${ENV_OVERRIDE['ptxas']}.")


def _release_for_isa(version) -> str:
    if version is None:
        return "?"
    if version[0] >= 9:
        return f"13.{version[1]}"
    for minor, isa in sorted(_PTX_FOR_CUDA_12.items()):
        if isa >= version:
            return f"12.{minor}"
    return "12.9"


def _newest(name: str) -> Tool | None:
    """The tool `name` given by `$PTX2PY_<NAME>`, else its newest release found."""
    tools = [Tool(p, _release(p), origin) for p, origin in candidates(name) if not p.endswith("-blackwell")]
    if tools and tools[0].origin.startswith("$PTX2PY"):
        return tools[0]
    tools.sort(key=lambda t: t.release or (0, 0), reverse=True)
    return tools[0] if tools else None


def find_disassembler() -> tuple[Tool | None, str]:
    """(tool, kind) with kind 'cuobjdump' or 'nvdisasm'; the newest release of each kind wins."""
    for name in ("cuobjdump", "nvdisasm"):
        tool = _newest(name)
        if tool is not None:
            return tool, name
    return None, ""


def find_nvdisasm() -> Tool | None:
    """nvdisasm (its `--print-line-info` maps SASS to source lines; cuobjdump has no such option)."""
    return _newest("nvdisasm")


def find_chromium() -> Tool | None:
    """A Chromium to open the verify page headless in: `$PTX2PY_CHROMIUM`, else the first of
    BROWSERS found on PATH (or beside the CUDA tools)."""
    for name in BROWSERS:
        found = candidates(name)
        if found:
            return Tool(found[0][0], None, found[0][1])
    return None
