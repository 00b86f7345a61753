"""The Python producers of lint's fresh corpus (make_lint_corpus.py --numba / --cute): numba-cuda
kernels through `numba.cuda.compile_ptx` and CuTe DSL kernels through `cute.compile`, both without a
GPU. The kernel sources live in corpus/lint-fresh/numba_kernels.py and cute_kernels.py.

Neither package is a project dependency: install them into a folder of their own and name it with
--site (its .pth files are run, as site-packages' would be: numba-cuda's redirects `numba.cuda`):

    pip install --target /tmp/fresh_deps numba-cuda nvidia-cutlass-dsl
    pip install --no-deps --target /tmp/fresh_nvrtc nvidia-cuda-nvrtc    # numba-cuda links shims with NVRTC
    python scripts/make_lint_corpus.py --out /tmp/lintnumba --no-nvcc \
        --numba --cute --site /tmp/fresh_deps --site /tmp/fresh_nvrtc
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import site
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS_DIR = ROOT / "corpus" / "lint-fresh"
NUMBA_CCS = ((7, 5), (8, 0), (9, 0))
# (cc, option name, compile_ptx keywords): every cc optimized, then line info and debug on sm_80
NUMBA_MATRIX = [(cc, "O3", {}) for cc in NUMBA_CCS] + [((8, 0), "lineinfo", {"lineinfo": True}),
                                                       ((8, 0), "G", {"debug": True, "opt": False})]
CUTE_MATRIX = [("sm_80", "O3"), ("sm_90a", "O3"), ("sm_90a", "lineinfo")]


def add_sites(dirs: list[str]) -> None:
    """Make pip --target folders importable the way site-packages is, and load the NVRTC a folder
    holds (numba-cuda looks it up by name; a library already loaded answers that look-up)."""
    for d in dirs:
        site.addsitedir(d)
        for lib in sorted(Path(d).glob("nvidia/cu*/lib/libnvrtc.so.*")):
            if re.fullmatch(r"libnvrtc\.so\.\d+", lib.name):
                ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)


def ptx_row(out_dir: Path, ptx: Path, **fields) -> dict:
    """The manifest row of one PTX file (the fields make_lint_corpus records for nvcc's)."""
    data = ptx.read_bytes()
    version = re.search(rb"\.version (\S+)", data)
    return {**fields, "ok": True, "ptx": str(ptx.relative_to(out_dir)), "bytes": len(data),
            "lines": data.count(b"\n"), "sha1": hashlib.sha1(data).hexdigest(), "kernels": data.count(b".entry "),
            "version": version.group(1).decode() if version else "none"}


def build_numba(out_dir: Path) -> list[dict]:
    sys.path.insert(0, str(KERNELS_DIR))
    import numba_cuda
    import numba_kernels
    from numba import cuda

    release = f"numba-cuda{numba_cuda.__version__}"
    rows = []
    for name, fn, sig in numba_kernels.KERNELS:
        for cc, flags, opts in NUMBA_MATRIX:
            target = f"sm_{cc[0]}{cc[1]}"
            fields = {"producer": "numba", "compiler": release, "source": name, "target": target, "flags": flags}
            try:
                text, _ = cuda.compile_ptx(fn, sig, cc=cc, **opts)
            except Exception as e:  # noqa: BLE001 - recorded in the manifest, the run goes on
                rows.append({**fields, "ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}"})
                continue
            ptx = out_dir / "ptx" / release / f"{name}.{target}.{flags}.ptx"
            ptx.parent.mkdir(parents=True, exist_ok=True)
            ptx.write_text(text)
            rows.append(ptx_row(out_dir, ptx, **fields))
    return rows


def cute_version(sites: list[str]) -> str:
    for d in sites:
        for info in Path(d).glob("nvidia_cutlass_dsl-*.dist-info"):
            return info.name.removesuffix(".dist-info").split("-")[1]
    return "unknown"


def build_cute(out_dir: Path, sites: list[str]) -> list[dict]:
    """One process per target: the DSL reads its target from the environment when it starts."""
    release = f"cutlass-dsl{cute_version(sites)}"
    script = KERNELS_DIR / "cute_kernels.py"
    boot = (f"import runpy, site; [site.addsitedir(d) for d in {sites!r}];"
            f" runpy.run_path({str(script)!r}, run_name='__main__')")
    rows = []
    for target, flags in CUTE_MATRIX:
        tag = f"{target}.{flags}"
        env = {**os.environ, "CUTE_DSL_ARCH": target, "CUTE_DSL_KEEP": "ptx",
               "CUTE_DSL_DUMP_DIR": str(out_dir / "src" / release / tag),
               "CUTE_DSL_LINEINFO": str(int(flags == "lineinfo"))}
        stage = out_dir / "src" / release / f"{tag}.out"
        r = subprocess.run([sys.executable, "-c", boot, str(stage)], env=env, capture_output=True, text=True)
        fields = {"producer": "cute", "compiler": release, "target": target, "flags": flags}
        if r.returncode != 0:
            rows.append({**fields, "source": "cute_kernels", "ok": False, "error": r.stderr[-600:]})
            continue
        for staged in sorted(stage.glob("*.ptx")):
            ptx = out_dir / "ptx" / release / f"{staged.stem}.{tag}.ptx"
            ptx.parent.mkdir(parents=True, exist_ok=True)
            ptx.write_bytes(staged.read_bytes())
            rows.append(ptx_row(out_dir, ptx, source=staged.stem, **fields))
    return rows
