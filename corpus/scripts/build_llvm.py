#!/usr/bin/env python3
"""Compile corpus/src/llvm/*.ll with llc (NVPTX backend) and corpus/src/clang/*.cu with clang in CUDA
device-only mode (no CUDA headers/libdevice), check each PTX with ptxas, record in manifest.json."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import launch_sidecars  # noqa: E402
from common import BUILD, PTX, SRC, clean_dir, record, update_manifest  # noqa: E402

LLC = os.environ.get("LLC", "llc")
CLANG = os.environ.get("CLANG", "clang")
# (target, ptx feature)
TARGETS = [("sm_75", "ptx65"), ("sm_80", "ptx70"), ("sm_86", "ptx71")]


def tool_version(tool: str) -> str:
    out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"version (\d+\.\d+\.\d+)", out)
    return m.group(1) if m else "unknown"


def ptxas_ok(path: Path, target: str) -> str | None:
    p = subprocess.run(["ptxas", f"-arch={target}", "-o", "/dev/null", str(path)], capture_output=True, text=True)
    return None if p.returncode == 0 else p.stderr


def build(producer, stem, target, feat, variant, cmd, cwd, tags, version, outdir, records, failures):
    out = outdir / (f"{stem}.{target}.ptx" if variant == "O3" else f"{stem}.{target}.{variant}.ptx")
    r = subprocess.run(cmd + ["-o", str(out)], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{out.name}: {r.stderr}")
        return
    err = ptxas_ok(out, target)
    if err:
        out.unlink()
        failures.append(f"{out.name}: ptxas: {err}")
        return
    src = f"src/{producer}/{stem}.{'ll' if producer == 'llvm' else 'cu'}"
    records.append(record(out, producer, version, features=tags, source=src, flags=" ".join(cmd[1:-1])))


def main():
    rc = 0
    for producer, ext in [("llvm", "ll"), ("clang", "cu")]:
        tool = LLC if producer == "llvm" else CLANG
        version = f"{producer} {tool_version(tool)}"
        outdir = PTX / producer
        clean_dir(outdir, "*.ptx")
        bdir = BUILD / producer
        if bdir.exists():
            shutil.rmtree(bdir)
        shutil.copytree(SRC / producer, bdir)
        records, failures = [], []
        for src in sorted(bdir.glob(f"*.{ext}")):
            stem = src.stem
            for target, feat in TARGETS:
                variants = [("O3", ["-O3"], [])]
                if target == "sm_80":
                    variants += [("O0", ["-O0"], ["O0"])]
                    if producer == "clang":
                        variants += [("g", ["-O2", "-g"], ["debug", "lineinfo"])]
                for variant, opt, vtags in variants:
                    if producer == "llvm":
                        cmd = [LLC, "-march=nvptx64", f"-mcpu={target}", f"-mattr=+{feat}", *opt, src.name]
                    else:
                        cmd = [CLANG, "-x", "cuda", "--cuda-device-only", f"--cuda-gpu-arch={target}", "-nocudainc",
                               "-nocudalib",
                               "-Wno-unknown-cuda-version", "-Xclang", "-target-feature", "-Xclang", f"+{feat}",
                               "-std=c++17",
                               "-S", *opt, src.name]
                    tags = [producer] + vtags + (["templates"] if "template" in src.read_text() else [])
                    build(producer, stem, target, feat, variant, cmd, bdir, tags, version, outdir, records, failures)
        update_manifest(producer, records)
        launch_sidecars.write([producer])   # sidecars of the kernels LAUNCH tables describe
        for f in failures:
            print("FAILED", f, file=sys.stderr)
        print(f"{producer}: {len(records)} PTX files, {len(failures)} failures")
        rc |= bool(failures)
    return rc


if __name__ == "__main__":
    sys.exit(main())
