"""The unchanged PyTorch program of docs/triton_override.md: it launches corpus/src/triton/kernels.py's
add_kernel and reports which sum it got, so running it with and without the override shows the
edited kernel ran (needs a GPU, torch and triton 3.9)."""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "corpus" / "src" / "triton"))
from kernels import add_kernel  # noqa: E402


def main() -> int:
    n = 1 << 20
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(n, device="cuda", generator=g)
    y = torch.randn(n, device="cuda", generator=g)
    out = torch.empty_like(x)
    add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    print("out == x + y:", torch.equal(out, x + y), " out == x - y:", torch.equal(out, x - y))
    return 0


if __name__ == "__main__":
    sys.exit(main())
