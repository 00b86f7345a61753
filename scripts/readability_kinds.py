"""Lines per instruction per kind of Triton / Pallas kernel, corpus/ beside the fresh set: reads
the `FILE` rows of two `measure_readability.py --per-file` outputs (corpus first) and prints a
Markdown table of each kind's file count and median (min-max). A file's kind is the kernel its name
starts with (the table below); the kinds are those of corpus/src and corpus_fresh/src.

    python scripts/measure_readability.py --per-file -j 2 corpus/ptx/triton corpus/ptx/pallas > corpus.txt
    python scripts/measure_readability.py --per-file -j 2 OUT/triton OUT/pallas > fresh.txt
    python scripts/readability_kinds.py corpus.txt fresh.txt
"""

from __future__ import annotations

import argparse
import statistics
import sys

# (producer, kind, corpus kernel name prefixes, fresh kernel name prefixes)
KINDS = [
    ("triton", "pointer matmul", ("matmul_fp16_", "matmul_bf16_", "matmul_fp32_", "matmul_fp8"),
     ("linear_bias_relu", "batched_matmul")),
    ("triton", "host tensor-descriptor (TMA) matmul", ("matmul_tma_",), ("tma_gemm_scaled",)),
    ("triton", "on-device tensor-descriptor matmul", ("matmul_devdesc_",), ("devdesc_gemm_relu",)),
    ("triton", "persistent matmul", ("matmul_persistent",), ("persistent_gemm",)),
    ("triton", "attention", ("attn_fwd",), ("alibi_attention", "decode_attention")),
    ("triton", "scan (associative_scan, cumsum/cumprod)", ("cumsum", "cummax", "linear_recurrence"),
     ("running_argmax", "cumprod_rows")),
    ("triton", "elementwise / random numbers", ("add_", "gelu", "swiglu", "dropout"),
     ("softplus_clamp", "gaussian_noise")),
    ("triton", "normalisation / softmax / row reduction", ("layernorm", "rmsnorm", "softmax", "row_reduce"),
     ("residual_rmsnorm", "masked_scaled_softmax", "cross_entropy", "row_variance")),
    ("triton", "transpose", ("transpose",), ("transpose_2d",)),
    ("triton", "atomics", ("atomic", "histogram"), ("segment_sum",)),
    ("pallas", "matmul", ("matmul_",), ("matmul_",)),
    ("pallas", "elementwise", ("add_", "gelu"), ("swiglu",)),
    ("pallas", "softmax", ("softmax",), ("residual_log_softmax",)),
    ("pallas", "normalisation", ("layernorm", "rmsnorm"), ("residual_layernorm",)),
    ("pallas", "reduction", ("row_sum_max",), ("col_stats",)),
    ("pallas", "attention", (), ("attention",)),
]


def rows(path: str) -> list:
    """(producer, file name, lines per instruction) of each `FILE` row."""
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("FILE "):
                _, producer, _, _, ratio, name = line.split(maxsplit=5)
                out.append((producer, name.strip().rsplit("/", 1)[-1], float(ratio)))
    return out


def _cell(xs) -> str:
    return f"{statistics.median(xs):.3f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "-"


def table(corpus: list, fresh: list) -> list:
    lines = ["| producer | kind | corpus files | corpus median (min-max) | fresh files | fresh median (min-max) |",
             "|---|---|---:|---:|---:|---:|"]
    for producer, kind, cp, fp in KINDS:
        c = [r for p, n, r in corpus if p == producer and cp and n.startswith(cp)]
        f = [r for p, n, r in fresh if p == producer and n.startswith(fp)]
        lines.append(f"| {producer} | {kind} | {len(c)} | {_cell(c)} | {len(f)} | {_cell(f)} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="measure_readability.py --per-file output for corpus/")
    ap.add_argument("fresh", help="measure_readability.py --per-file output for the fresh set")
    args = ap.parse_args(argv)
    print("\n".join(table(rows(args.corpus), rows(args.fresh))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
