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
import launch_sidecars  # noqa: E402
from common import BUILD, CORPUS, LAUNCH, PTX, SRC, clean_dir, record, update_manifest, write_json  # noqa: E402

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
# The thrust/CUB device-wide PTX is large (0.5-2 MB per file): build it for fewer targets to stay within
# the corpus size budget.
TARGET_OVERRIDE = {"thrust_kernels": ["sm_75", "sm_80", "sm_90a", "sm_100a"],
                   "cub_device": ["sm_75", "sm_80", "sm_90a", "sm_100a"]}
LINEINFO_OVERRIDE = {"thrust_kernels": ["sm_90a"]}
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


N = 1 << 20
# Launch descriptions for the unmangled (extern "C") kernels; written next to every plain -O3 PTX of the stem.
LAUNCH_SPECS = {
    "elementwise": [
        {"kernel": "vector_add", "grid": [N // 256, 1, 1], "block": [256, 1, 1], "shared": 0,
         "args": [{"name": "a", "kind": "pointer", "dtype": "fp32", "count": N, "init": "randn"},
                  {"name": "b", "kind": "pointer", "dtype": "fp32", "count": N, "init": "randn"},
                  {"name": "c", "kind": "pointer", "dtype": "fp32", "count": N, "init": "zeros"},
                  {"name": "n", "kind": "scalar", "dtype": "i32", "value": N}]},
    ],
    "reduce": [
        {"kernel": "shared_tree_max", "grid": [N // 512, 1, 1], "block": [256, 1, 1], "shared": 1024,
         "args": [{"name": "x", "kind": "pointer", "dtype": "fp32", "count": N, "init": "randn"},
                  {"name": "out", "kind": "pointer", "dtype": "fp32", "count": N // 512, "init": "zeros"},
                  {"name": "n", "kind": "scalar", "dtype": "i32", "value": N}]},
        {"kernel": "histogram256", "grid": [128, 1, 1], "block": [256, 1, 1], "shared": 0,
         "args": [{"name": "data", "kind": "pointer", "dtype": "u8", "count": N, "init": "randint"},
                  {"name": "hist", "kind": "pointer", "dtype": "u32", "count": 256, "init": "zeros"},
                  {"name": "n", "kind": "scalar", "dtype": "i32", "value": N}]},
        {"kernel": "dot_double", "grid": [128, 1, 1], "block": [256, 1, 1], "shared": 0,
         "args": [{"name": "a", "kind": "pointer", "dtype": "fp64", "count": N, "init": "randn"},
                  {"name": "b", "kind": "pointer", "dtype": "fp64", "count": N, "init": "randn"},
                  {"name": "out", "kind": "pointer", "dtype": "fp64", "count": 1, "init": "zeros"},
                  {"name": "n", "kind": "scalar", "dtype": "i32", "value": N}]},
    ],
    "scan_softmax": [
        {"kernel": "rmsnorm_half", "grid": [1024, 1, 1], "block": [256, 1, 1], "shared": 0,
         "args": [{"name": "x", "kind": "pointer", "dtype": "fp16", "count": 1024 * 4096, "init": "randn"},
                  {"name": "w", "kind": "pointer", "dtype": "fp16", "count": 4096, "init": "ones"},
                  {"name": "y", "kind": "pointer", "dtype": "fp16", "count": 1024 * 4096, "init": "zeros"},
                  {"name": "cols", "kind": "scalar", "dtype": "i32", "value": 4096},
                  {"name": "eps", "kind": "scalar", "dtype": "fp32", "value": 1e-6}]},
    ],
}


def nvcc_version() -> str:
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=True).stdout
    return re.search(r"V(\d+\.\d+\.\d+)", out).group(1)


def jobs():
    for stem, tags in GENERIC.items():
        for t in TARGET_OVERRIDE.get(stem, TARGETS):
            yield stem, t, "O3", tags
        for t in LINEINFO_OVERRIDE.get(stem, LINEINFO_TARGETS):
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
    extra = {}
    if variant == "O3" and stem in LAUNCH_SPECS:
        rel = f"launch/nvcc/{out.stem}.json"
        write_json(CORPUS / rel, {"ptx": f"ptx/nvcc/{out.name}", "target": target, "seed": 0,
                                  "kernels": LAUNCH_SPECS[stem]})
        extra["launch"] = rel
    rec = record(out, "nvcc", version, **extra, features=tags + VARIANT_TAGS[variant],
                 source=f"src/nvcc/{stem}.cu", flags=" ".join(["-ptx", f"-arch={target}", "-std=c++17",
                                                               *FLAGS[variant]]))
    return rec, None


def main():
    version = nvcc_version()
    outdir = PTX / "nvcc"
    clean_dir(outdir, "*.ptx")
    clean_dir(LAUNCH / "nvcc", "*.json")
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
    launch_sidecars.write(["nvcc"])   # sidecars of the kernels LAUNCH tables describe
    print(f"nvcc: {len(records)} PTX files, {len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
