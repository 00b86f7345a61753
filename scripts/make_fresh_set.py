"""The fresh readability set: PTX from kernels and flag combinations corpus/ does not contain
(sources in corpus_fresh/src, nothing in sugar/ or the style presets fitted to them), generated
into a folder of its own (default: a new temp dir), one subfolder per producer, so that
`python scripts/measure_readability.py OUT/triton OUT/nvcc OUT/pallas` reports them beside corpus/.

    python scripts/make_fresh_set.py --out /tmp/fresh      # Triton (no GPU needed) and nvcc (or: ... /tmp/fresh)
    python scripts/make_fresh_set.py --out /tmp/fresh --jax-python /path/to/jax-venv/bin/python

The set covers the kinds of kernels and builds corpus/ has (the tables below say which, and the
targets each kind is built for follow corpus/'s rule), so that its medians compare with corpus/'s;
kernels are chosen by kind, never by their figure. A kernel that does not compile is reported
(FAILED) and the run exits non-zero.

Pallas needs jax 0.10.2 + jaxlib 0.10.2 + triton 3.9.0 (corpus/README.md), best in a venv of its
own: `--jax-python` (or $PTX2PY_JAX_PYTHON) names its interpreter, which lowers the kernels of
corpus_fresh/src/pallas the way corpus/scripts/build_pallas.py does (no GPU needed). Without
jax the Pallas part is reported as skipped, not written.
"""

from __future__ import annotations

import argparse
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "corpus_fresh" / "src"

# The capabilities corpus/ builds each kind of Triton kernel for (corpus/scripts/build_triton.py):
# every kernel for all five targets, tensor-descriptor (TMA) kernels for sm_90+, fp8 for sm_89+.
CAPS = (80, 89, 90, 100, 120)
TMA_CAPS = (90, 100, 120)
FP8_CAPS = (89, 90, 100, 120)
D16 = "tensordesc<fp16[{}]>"  # a host tensor descriptor of that block shape
# (kernel, signature, constexprs, num_warps, num_stages, capabilities): one entry (or two) per kind
# of kernel corpus/src/triton has, each with sources, sizes and flags of its own; chosen by kind
# before any was measured, never by its figure
TRITON = [
    ("linear_bias_relu", "*fp16,*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32", dict(BM=64, BN=128, BK=32), 4, 2, CAPS),
    ("linear_bias_relu", "*fp16,*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32", dict(BM=128, BN=64, BK=64), 8, 4, CAPS),
    ("row_variance", "*fp32,*fp32,*fp32,i32,i32", dict(BLOCK=2048), 8, 1, CAPS),
    ("transpose_2d", "*fp16,*fp16,i32,i32", dict(BM=64, BN=64), 4, 1, CAPS),
    ("decode_attention", "*fp16,*fp16,*fp16,*fp16,i32,fp32", dict(D=128, BL=64), 4, 2, CAPS),
    ("cross_entropy_fwd", "*fp16,*i64,*fp32,i32,i32", dict(BLOCK=4096), 16, 1, CAPS),
    ("softplus_clamp", "*fp16,*fp16,i32,fp32,fp32,fp32", dict(BLOCK=4096), 8, 1, CAPS),
    ("gaussian_noise", "*fp32,*fp32,i32,fp32,i32", dict(BLOCK=2048), 4, 1, CAPS),
    ("residual_rmsnorm", "*bf16,*bf16,*bf16,*bf16,*bf16,i32,fp32", dict(BLOCK=4096), 8, 1, CAPS),
    ("segment_sum_atomic", "*i32,*fp32,*fp32,*i32,i32", dict(D=64, BLOCK=32), 4, 1, CAPS),
    ("running_argmax", "*fp32,*fp32,*i32,i32", dict(BLOCK=2048), 8, 1, CAPS),
    ("cumprod_rows", "*fp32,*fp32", dict(BM=16, BN=256), 4, 1, CAPS),
    ("batched_matmul", "*fp32,*fp32,*fp32,i32,i32,i32", dict(BM=64, BN=32, BK=32), 4, 2, CAPS),
    ("batched_matmul", "*bf16,*bf16,*bf16,i32,i32,i32", dict(BM=64, BN=128, BK=64), 4, 3, CAPS),
    ("batched_matmul", "*fp8e5,*fp8e5,*fp16,i32,i32,i32", dict(BM=128, BN=64, BK=128), 8, 3, FP8_CAPS),
    ("tma_gemm_scaled", f"{D16.format('64,64')},{D16.format('64,128')},{D16.format('64,128')},i32,fp32",
     dict(BM=64, BN=128, BK=64), 4, 3, TMA_CAPS),
    ("tma_gemm_scaled", "tensordesc<bf16[128,64]>,tensordesc<bf16[64,128]>,tensordesc<bf16[128,128]>,i32,fp32",
     dict(BM=128, BN=128, BK=64), 8, 4, TMA_CAPS),
    ("devdesc_gemm_relu", "*fp16,*fp16,*fp16,i32,i32,i32", dict(BM=128, BN=64, BK=64), 4, 3, TMA_CAPS),
    ("persistent_gemm_bias", f"{D16.format('128,64')},{D16.format('64,128')},{D16.format('128,128')},*fp16,i32,i32,i32",
     dict(BM=128, BN=128, BK=64, GRID=148), 8, 3, TMA_CAPS),
    ("masked_scaled_softmax", "*fp16,*fp16,i32,i32,fp32", dict(BLOCK=2048), 8, 1, CAPS),
    ("alibi_attention", "*fp16,*fp16,*fp16,*fp16,i32,*fp32,fp32", dict(D=64, BQ=64, BKV=64), 4, 2, CAPS),
]
FAILED: list = []  # what did not compile (printed; the run then exits non-zero)
SIG_SPLIT = re.compile(r",(?![^\[]*\])")  # the commas between parameters, not those of a block shape
# (source stem, -arch, flags): every build variant corpus/ has (plain -O3, -lineinfo, -G with its
# DWARF sections, -rdc=true, -use_fast_math; corpus/README.md) at least once, with targets and
# flag combinations corpus/ does not use (-O1, -O2, -ftz/-prec-div, fast math with line info,
# -G on sm_89, -rdc on sm_100a with -lineinfo)
NVCC = [
    ("fresh_kernels", "sm_86", ["-O3"]),
    ("fresh_kernels", "sm_89", ["-O1"]),
    ("fresh_kernels", "sm_90a", ["-O3", "-lineinfo", "-use_fast_math"]),
    ("fresh_kernels", "sm_80", ["-O3", "-ftz=true", "-prec-div=false", "-prec-sqrt=false"]),
    ("fresh_kernels", "sm_100a", ["-O2", "--extra-device-vectorization"]),
    ("fresh_kernels", "sm_86", ["-O3", "-lineinfo"]),
    ("fresh_kernels", "sm_89", ["-G"]),
    ("fresh_kernels", "sm_100a", ["-O3", "-rdc=true", "-lineinfo"]),
]


def scratch_dir(prefix: str) -> str:
    """A Triton cache folder of its own (nothing cached from earlier builds), removed at exit."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def triton_set(out: Path) -> list:
    os.environ["TRITON_CACHE_DIR"] = scratch_dir("ptx2py-fresh-triton-")
    sys.path.insert(0, str(SRC / "triton"))
    import fresh_kernels as K
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    made = []
    (out / "triton").mkdir(parents=True, exist_ok=True)
    for name, sig, consts, warps, stages, caps in TRITON:
        fn = getattr(K, name)
        types = SIG_SPLIT.split(sig)
        args = [a for a in fn.arg_names if a not in consts]
        signature = {a: t for a, t in zip(args, types)} | {c: "constexpr" for c in consts}
        for cap in caps:
            src = ASTSource(fn=fn, signature=signature, constexprs=dict(consts))
            try:
                k = triton.compile(src, target=GPUTarget("cuda", cap, 32),
                                   options={"num_warps": warps, "num_stages": stages})
            except Exception as e:  # noqa: BLE001 - reported, and the run fails at its end
                FAILED.append(f"triton {name} sm_{cap}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                continue
            tag = "_".join([types[0].lstrip("*").split("[")[0].replace("tensordesc<",
                                                                       "")] + [f"{v}" for v in consts.values()])
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


# every kernel of corpus_fresh/src/pallas/fresh_kernels.py, with its own block sizes, warps and
# stages, for the three targets corpus/ builds every Pallas kernel for (sm_80, sm_90: wgmma,
# sm_100: tcgen05; corpus/scripts/build_pallas.py)
PALLAS_CAPS = (80, 90, 100)
def pallas_set(out: Path) -> list:
    """The Pallas PTX (run by an interpreter that has jax: see `--jax-python`)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ["TRITON_CACHE_DIR"] = scratch_dir("ptx2py-fresh-pallas-")
    sys.path[:0] = [str(SRC / "pallas"), str(ROOT / "corpus" / "scripts")]
    import fresh_kernels as K
    import triton
    from build_pallas import lower
    from triton.backends.compiler import GPUTarget

    made = []
    (out / "pallas").mkdir(parents=True, exist_ok=True)
    tdir = out / "pallas_ttir"  # the .file path the PTX names: the same on every run into OUT
    tdir.mkdir(exist_ok=True)
    for name in K.KERNELS:
        caps = PALLAS_CAPS
        fn, specs = K.KERNELS[name]
        ttir, _, warps, stages, _ = lower(fn, specs)
        ttir_path = tdir / f"{name}.ttir"
        ttir_path.write_text(ttir)
        for cap in caps:
            try:
                k = triton.compile(str(ttir_path), target=GPUTarget("cuda", cap, 32),
                                   options={"num_warps": warps, "num_stages": stages})
            except Exception as e:  # noqa: BLE001 - reported, and the run fails at its end
                FAILED.append(f"pallas {name} sm_{cap}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                continue
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
    ap.add_argument("outdir", nargs="?", default=None, help="the same as --out")
    ap.add_argument("--jax-python", default=None,
                    help="a Python with jax 0.10.2, jaxlib and triton 3.9.0 for the Pallas part "
                         "(default: $PTX2PY_JAX_PYTHON)")
    ap.add_argument("--pallas-only", action="store_true", help=argparse.SUPPRESS)  # the --jax-python child
    args = ap.parse_args(argv)
    if args.out and args.outdir and args.out != args.outdir:
        ap.error("give the folder once: --out or OUTDIR")
    out = Path(args.out or args.outdir or tempfile.mkdtemp(prefix="ptx2py-fresh-"))
    if args.pallas_only:
        print(f"pallas: {len(pallas_set(out))} files")
        for f in FAILED:
            print("  FAILED", f)
        return 1 if FAILED else 0
    made = triton_set(out) + nvcc_set(out)
    py = _jax_python(args.jax_python)
    if py is None:
        print("pallas: jax is not installed (give --jax-python); no Pallas kernels in this fresh set")
    else:
        if subprocess.run([py, __file__, "--pallas-only", "--out", str(out)]).returncode:
            FAILED.append("pallas: the --jax-python run failed (above)")
        made += sorted((out / "pallas").glob("*.ptx"))
    print(f"{len(made)} files under {out}")
    for f in FAILED:
        print("  FAILED", f)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
