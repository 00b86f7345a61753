"""scripts/gpu_suite.py on a real GPU (run with ``-m gpu``): round trips and their must-differ
edits against independent references, the worked example, the kernelir problems, and the CPU
engine beside the GPU (scripts/gpusuite/gpu_cases.py). Skips cleanly without cuda-python or a GPU."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "scripts" / "gpu_suite.py"


@pytest.mark.slow
def test_suite_plans_without_gpu():
    """The host-side half of the suite (every case's PTX made, argument plans, cluster and TMA
    requests) runs anywhere."""
    r = subprocess.run([sys.executable, str(SUITE), "--plan-only"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.gpu
def test_gpu_suite():
    from ptx2py.verify import gpu_run

    why = gpu_run.skip_reason()
    if why:
        pytest.skip(why)
    r = subprocess.run([sys.executable, str(SUITE), "--repeat", "20"], capture_output=True, text=True,
                       timeout=1800)
    print(r.stdout)
    if r.returncode == 77:
        pytest.skip(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-4000:]
