"""The fresh readability set: PTX from kernels and flag combinations corpus/ does not contain
(sources in corpus_fresh/src, nothing in sugar/ or the style presets fitted to them), generated
into a folder of its own (default: a new temp dir), one subfolder per producer, so that
`python scripts/measure_readability.py OUT/triton OUT/nvcc` reports them beside corpus/.

    python scripts/make_fresh_set.py --out /tmp/fresh      # Triton (no GPU needed) and nvcc
Pallas needs jax (not installed here: reported, not generated).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "corpus_fresh" / "src"

# (kernel, signature, constexprs, num_warps, num_stages, capabilities)
TRITON = [
    ("linear_bias_relu", "*fp16,*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32", dict(BM=64, BN=128, BK=32), 4, 2, (80, 90, 100)),
    ("linear_bias_relu", "*fp16,*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32", dict(BM=128, BN=64, BK=64), 8, 4, (90,)),
    ("row_variance", "*fp32,*fp32,*fp32,i32,i32", dict(BLOCK=2048), 8, 1, (80, 90, 100)),
    ("transpose_2d", "*fp16,*fp16,i32,i32", dict(BM=64, BN=64), 4, 1, (80, 90)),
    ("decode_attention", "*fp16,*fp16,*fp16,*fp16,i32,fp32", dict(D=128, BL=64), 4, 2, (80, 90, 100)),
    ("cross_entropy_fwd", "*fp16,*i64,*fp32,i32,i32", dict(BLOCK=4096), 16, 1, (80, 90)),
]
# (source stem, -arch, flags): flag combinations corpus/ does not use (-O1, -ftz/-prec-div, fast math
# with line info, sm_86 / sm_89 targets)
NVCC = [
    ("fresh_kernels", "sm_86", ["-O3"]),
    ("fresh_kernels", "sm_89", ["-O1"]),
    ("fresh_kernels", "sm_90a", ["-O3", "-lineinfo", "-use_fast_math"]),
    ("fresh_kernels", "sm_80", ["-O3", "-ftz=true", "-prec-div=false", "-prec-sqrt=false"]),
    ("fresh_kernels", "sm_100a", ["-O2", "--extra-device-vectorization"]),
]


def triton_set(out: Path) -> list:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptx2py-fresh-triton-")
    sys.path.insert(0, str(SRC / "triton"))
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import fresh_kernels as K

    made = []
    (out / "triton").mkdir(parents=True, exist_ok=True)
    for name, sig, consts, warps, stages, caps in TRITON:
        fn = getattr(K, name)
        types = sig.split(",")
        args = [a for a in fn.arg_names if a not in consts]
        signature = {a: t for a, t in zip(args, types)} | {c: "constexpr" for c in consts}
        for cap in caps:
            src = ASTSource(fn=fn, signature=signature, constexprs=dict(consts))
            k = triton.compile(src, target=GPUTarget("cuda", cap, 32), options={"num_warps": warps, "num_stages": stages})
            tag = "_".join(f"{v}" for v in consts.values())
            path = out / "triton" / f"{name}_{tag}_w{warps}s{stages}_sm{cap}.ptx"
            path.write_text(k.asm["ptx"])
            made.append(path)
    return made


def nvcc_set(out: Path) -> list:
    made = []
    (out / "nvcc").mkdir(parents=True, exist_ok=True)
    for stem, arch, flags in NVCC:
        tag = "".join(f.strip("-").replace("=", "").replace("-", "") for f in flags)
        path = out / "nvcc" / f"{stem}.{arch}.{tag}.ptx"
        subprocess.run(["nvcc", "-ptx", f"-arch={arch}", "-std=c++17", *flags, str(SRC / "nvcc" / f"{stem}.cu"),
                        "-o", str(path)], check=True)
        made.append(path)
    return made


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="folder to write into (default: a new temp dir)")
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="ptx2py-fresh-"))
    made = triton_set(out) + nvcc_set(out)
    try:
        import jax  # noqa: F401
        print("jax is installed but the Pallas part of the fresh set is not written yet")
    except ImportError:
        print("pallas: jax is not installed; no Pallas kernels in this fresh set")
    print(f"{len(made)} files under {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
