#!/usr/bin/env python3
"""Compile corpus/src/nvcc/*.cu to PTX with nvcc for several targets and flag variants, check each
result with ptxas, and record them in manifest.json (producer "nvcc")."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BUILD, PTX, SRC, clean_dir, record, update_manifest  # noqa: E402

TARGETS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120a"]

# source stem -> source-level feature tags
GENERIC = {
    "elementwise": ["templates", "namespaces"],
    "reduce": ["templates", "cooperative-groups"],
    "atomics": ["libcudacxx"],
    "texture_surface": [],
    "printf_kernels": [],
    "stencil": ["templates"],
    "scan_softmax": ["templates"],
    "matmul_tiled": ["templates", "namespaces", "unrolled"],
    "mma_sync": ["templates"],
    "cub_block": ["cub", "templates"],
    "cub_device": ["cub", "templates"],
    "thrust_kernels": ["thrust", "cub", "templates", "namespaces"],
}
LINEINFO_TARGETS = ["sm_80", "sm_90a"]
DEBUG_TARGETS = ["sm_80", "sm_90a"]
DEBUG_SOURCES = ["elementwise", "reduce", "atomics", "texture_surface", "printf_kernels", "stencil",
                 "scan_softmax", "matmul_tiled", "mma_sync", "cub_block"]
RDC = {"rdc_main": ["rdc", "device-calls", "extern"], "rdc_lib": ["rdc", "extern"]}
ARCH_SPECIFIC = {
    # stem: (targets, tags)
    "wgmma_tma_sm90": (["sm_90a"], ["templates", "namespaces", "wgmma", "tma", "mbarrier", "cluster"]),
    "tcgen05_sm100": (["sm_100a", "sm_103a"], ["templates", "namespaces", "tcgen05", "tma", "mbarrier"]),
}

FLAGS = {"O3": ["-O3"], "lineinfo": ["-O3", "-lineinfo"], "G": ["-G"], "rdc": ["-O3", "-rdc=true"],
         "rdc.G": ["-G", "-rdc=true"], "fastmath": ["-O3", "-use_fast_math"]}
VARIANT_TAGS = {"O3": [], "lineinfo": ["lineinfo"], "G": ["debug"], "rdc": ["rdc"], "rdc.G": ["rdc", "debug"],
                "fastmath": ["fast-math"]}


def nvcc_version() -> str:
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=True).stdout
    return re.search(r"V(\d+\.\d+\.\d+)", out).group(1)


def jobs():
    for stem, tags in GENERIC.items():
        for t in TARGETS:
            yield stem, t, "O3", tags
        for t in LINEINFO_TARGETS:
            yield stem, t, "lineinfo", tags
    for stem in DEBUG_SOURCES:
        for t in DEBUG_TARGETS:
            yield stem, t, "G", GENERIC[stem]
    for stem in ["elementwise", "scan_softmax", "stencil"]:
        yield stem, "sm_89", "fastmath", GENERIC[stem]
    for stem, tags in RDC.items():
        for t in TARGETS:
            yield stem, t, "rdc", tags
        yield stem, "sm_80", "rdc.G", tags
    for stem, (targets, tags) in ARCH_SPECIFIC.items():
        for t in targets:
            yield stem, t, "O3", tags
        yield stem, targets[0], "lineinfo", tags
        yield stem, targets[0], "G", tags


def out_name(stem, target, variant):
    return f"{stem}.{target}.ptx" if variant == "O3" else f"{stem}.{target}.{variant}.ptx"


def build_one(job, outdir: Path, version: str):
    stem, target, variant, tags = job
    src = BUILD / "nvcc" / f"{stem}.cu"
    out = outdir / out_name(stem, target, variant)
    cmd = ["nvcc", "-ptx", f"-arch={target}", "-std=c++17", *FLAGS[variant], src.name, "-o", str(out)]
    r = subprocess.run(cmd, cwd=src.parent, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"nvcc failed: {' '.join(cmd)}\n{r.stderr}"
    pcmd = ["ptxas", f"-arch={target}", "-o", "/dev/null", str(out)]
    if "rdc" in variant:
        pcmd.insert(1, "-c")
    p = subprocess.run(pcmd, capture_output=True, text=True)
    if p.returncode != 0:
        out.unlink()
        return None, f"ptxas failed: {' '.join(pcmd)}\n{p.stderr}"
    rec = record(out, "nvcc", version, features=tags + VARIANT_TAGS[variant],
                 source=f"src/nvcc/{stem}.cu", flags=" ".join(["-ptx", f"-arch={target}", "-std=c++17", *FLAGS[variant]]))
    return rec, None


def main():
    version = nvcc_version()
    outdir = PTX / "nvcc"
    clean_dir(outdir, "*.ptx")
    bdir = BUILD / "nvcc"
    if bdir.exists():
        shutil.rmtree(bdir)
    shutil.copytree(SRC / "nvcc", bdir)
    all_jobs = sorted(jobs(), key=lambda j: (j[0], j[1], j[2]))
    with ThreadPoolExecutor(max_workers=int(os.environ.get("JOBS", os.cpu_count() or 2))) as ex:
        results = list(ex.map(lambda j: build_one(j, outdir, version), all_jobs))
    records, errors = [], []
    for rec, err in results:
        if rec:
            records.append(rec)
        if err:
            errors.append(err)
    for e in errors:
        print(e, file=sys.stderr)
    update_manifest("nvcc", records)
    print(f"nvcc: {len(records)} PTX files, {len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
