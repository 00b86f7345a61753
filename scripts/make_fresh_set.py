"""The fresh readability set: PTX from kernels and flag combinations corpus/ does not contain
(sources in corpus_fresh/src, nothing in sugar/ or the style presets fitted to them), generated
into a folder of its own (default: a new temp dir), one subfolder per producer, so that
`python scripts/measure_readability.py OUT/triton OUT/nvcc OUT/pallas` reports them beside corpus/.

    python scripts/make_fresh_set.py --out /tmp/fresh      # Triton (no GPU needed) and nvcc
    python scripts/make_fresh_set.py --out /tmp/fresh --jax-python /path/to/jax-venv/bin/python

Pallas needs jax 0.10.2 + jaxlib 0.10.2 + triton 3.9.0 (corpus/README.md), best in a venv of its
own: `--jax-python` (or $PTX2PY_JAX_PYTHON) names its interpreter, which lowers the kernels of
corpus_fresh/src/pallas the way corpus/scripts/build_pallas.py does (no GPU needed). Without
jax the Pallas part is reported as skipped, not written.
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


# (kernel, capabilities): every kernel of corpus_fresh/src/pallas/fresh_kernels.py, with its own
# block sizes, warps and stages (sm_90 / sm_100 PTX for the two matmuls: wgmma / tcgen05 paths)
PALLAS = [
    ("swiglu_bf16_r8", (80, 90)),
    ("residual_log_softmax_f16_r2_w8", (80, 100)),
    ("matmul_bias_gelu_f16_64x128x32_s2", (80, 90, 100)),
    ("matmul_bias_gelu_bf16_128x64x64_w8s4", (90, 100)),
    ("attention_f16_q64_k128_d64", (80, 90)),
    ("col_stats_f32_1024x128_w8", (80, 90)),
]


def pallas_set(out: Path) -> list:
    """The Pallas PTX (run by an interpreter that has jax: see `--jax-python`)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptx2py-fresh-pallas-")
    sys.path[:0] = [str(SRC / "pallas"), str(ROOT / "corpus" / "scripts")]
    import triton
    from build_pallas import lower
    from triton.backends.compiler import GPUTarget

    import fresh_kernels as K

    made = []
    (out / "pallas").mkdir(parents=True, exist_ok=True)
    tdir = out / "pallas_ttir"  # the .file path the PTX names: the same on every run into OUT
    tdir.mkdir(exist_ok=True)
    for name, caps in PALLAS:
        fn, specs = K.KERNELS[name]
        ttir, _, warps, stages, _ = lower(fn, specs)
        ttir_path = tdir / f"{name}.ttir"
        ttir_path.write_text(ttir)
        for cap in caps:
            k = triton.compile(str(ttir_path), target=GPUTarget("cuda", cap, 32),
                               options={"num_warps": warps, "num_stages": stages})
            path = out / "pallas" / f"{name}_sm{cap}.ptx"
            path.write_text(k.asm["ptx"])
            made.append(path)
    return made


def _jax_python(given):
    """The interpreter to lower the Pallas kernels with, or None when none has jax."""
    try:
        import jax  # noqa: F401

        return sys.executable
    except ImportError:
        return given or os.environ.get("PTX2PY_JAX_PYTHON")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="folder to write into (default: a new temp dir)")
    ap.add_argument("--jax-python", default=None,
                    help="a Python with jax 0.10.2, jaxlib and triton 3.9.0 for the Pallas part (default: $PTX2PY_JAX_PYTHON)")
    ap.add_argument("--pallas-only", action="store_true", help=argparse.SUPPRESS)  # the --jax-python child
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="ptx2py-fresh-"))
    if args.pallas_only:
        print(f"pallas: {len(pallas_set(out))} files")
        return 0
    made = triton_set(out) + nvcc_set(out)
    py = _jax_python(args.jax_python)
    if py is None:
        print("pallas: jax is not installed (give --jax-python); no Pallas kernels in this fresh set")
    else:
        subprocess.run([py, __file__, "--pallas-only", "--out", str(out)], check=True)
        made += sorted((out / "pallas").glob("*.ptx"))
    print(f"{len(made)} files under {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
