"""from-triton / to-triton (tritonbridge/): Triton source -> the corpus PTX and named Python,
and the edited PTX back through Triton 3.9's kernel override (no GPU needed: the override's
PTX is what Triton assembles, and its cubin is ptxas's output for that PTX)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")

from conftest import ROOT  # noqa: E402

from ptx2py import cli  # noqa: E402
from ptx2py.launch.plan import entry_params  # noqa: E402
from ptx2py.transpile import python_to_ptx  # noqa: E402

KERNELS = ROOT / "corpus" / "src" / "triton" / "kernels.py"
LAUNCH = ROOT / "corpus" / "launch" / "triton"
PTX = ROOT / "corpus" / "ptx" / "triton"
FILE_LINE = re.compile(r'^\s*\.file\s+1\s+"([^"]+)"', re.M)
TRITON_ROOT = re.compile(r'^\s*\.file\s+\d+\s+"([^"]*/triton)/language/', re.M)


def recorded_paths(corpus_ptx: str) -> list[str]:
    """The paths the corpus build recorded: its kernels.py and (when used) Triton's own library."""
    args = ["--record-path", FILE_LINE.search(corpus_ptx).group(1)]
    lib = TRITON_ROOT.search(corpus_ptx)
    return args + (["--record-triton-root", lib.group(1)] if lib else [])


def from_triton(stem: str, out: Path, *extra: str) -> Path:
    side = json.loads((LAUNCH / f"{stem}.json").read_text())
    kernel = side["source"].split("::")[1]
    recorded = recorded_paths((PTX / f"{stem}.ptx").read_text())  # where the corpus was built
    py = out / f"{stem}.py"
    rc = cli.ptx2py_main(["from-triton", f"{KERNELS}::{kernel}", "--like", str(LAUNCH / f"{stem}.json"),
                          *recorded, "--sugar", "-o", str(py), *extra])
    assert rc == 0
    return py


@pytest.mark.parametrize("stem", ["add_fp32_sm90", "matmul_tma_fp16_sm90", "layernorm_fp16_b1024_w4_sm80",
                                  "matmul_tma_fp16_sm80"])
def test_from_triton_gives_the_corpus_ptx_and_named_python(stem, tmp_path):
    py = from_triton(stem, tmp_path)
    ptx = py.with_suffix(".ptx").read_text()
    assert ptx == (PTX / f"{stem}.ptx").read_text()
    source = py.read_text()
    assert python_to_ptx(source) == ptx
    side = json.loads(py.with_suffix(".json").read_text())
    names = side["param_names"]
    n_params = len(entry_params(ptx, side["kernel"]))
    assert len(names) == n_params and not any(re.fullmatch(r"param_\d+", n) for n in names)
    for a in side["args"]:
        assert a["name"] in names
    assert 'params="' in source and "_param_" not in source.split("kernel_name(", 1)[1].split(")", 1)[0]


def test_sidecar_is_one_launch_plan_reads(tmp_path):
    from ptx2py.launch.plan import entry_info, kernel_specs, plan_arguments

    py = from_triton("matmul_tma_fp16_sm90", tmp_path)
    side = json.loads(py.with_suffix(".json").read_text())
    spec = kernel_specs(side)[0]
    plans = plan_arguments(entry_info(py.with_suffix(".ptx").read_text(), spec["kernel"]), spec)
    assert [p.role for p in plans].count("tensormap") == 3
    assert side["triton"]["override"]["file"] == "matmul_tma_kernel.ptx"


def test_jit_specialization_from_launch_values(tmp_path):
    py = tmp_path / "add.py"
    rc = cli.ptx2py_main(["from-triton", f"{KERNELS}::add_kernel", "--signature", "*fp32,*fp32,*fp32,i32",
                          "--constexprs", "BLOCK=1024", "--arg", "x_ptr=4096", "--arg", "y_ptr=4096",
                          "--arg", "out_ptr=4096:zeros", "--arg", "n_elements=4096", "--grid", "4", "-o", str(py)])
    assert rc == 0
    side = json.loads(py.with_suffix(".json").read_text())
    assert side["triton"]["specialization"] == "jit" and "incomplete" not in side
    # 16-byte aligned tensors and n % 16 == 0: the JIT's divisibility attributes reach the PTX
    plain = (PTX / "add_fp32_sm90.ptx").read_text()
    assert py.with_suffix(".ptx").read_text() != plain


# kernel stem -> (text in the sugared Python, its replacement): an edit ptxas cannot drop
EDITS = {
    "add_fp32_sm90": (r"ptx.add.f32(", "ptx.sub.f32("),
    "softmax_fp32_b1024_w4_sm90": (r"ptx.max.f32(", "ptx.min.f32("),
    "matmul_tma_fp16_sm90": ("            for i in range(3):", "            for i in range(2):"),
}

CHECK = r"""
import json, os, sys, tempfile
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import kernels
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, compile, make_backend
side = json.load(open(sys.argv[2]))
fn = getattr(kernels, side["source"].split("::")[1])
fn.file_name = sys.argv[3]
target = GPUTarget("cuda", side["target"]["capability"], 32)
options = {"num_warps": side["num_warps"], "num_stages": side["num_stages"]}
k = compile(ASTSource(fn=fn, signature=side["signature"], constexprs=side["constexprs"]), target=target,
            options=options)
backend = make_backend(target)
stages = {}
backend.add_stages(stages, backend.parse_options(options),
                   fn.__class__ and __import__("triton").compiler.compiler.Language.TRITON)
md = dict(k.metadata._asdict())
cubins = [stages["cubin"](open(p).read(), dict(md)) for p in sys.argv[4:6]]
print(json.dumps({"ptx": k.asm["ptx"], "same_cubin_as_edited": k.asm["cubin"] == cubins[0],
                  "same_cubin_as_original": k.asm["cubin"] == cubins[1]}))
"""


@pytest.mark.parametrize("stem", sorted(EDITS))
def test_override_loop(stem, tmp_path, capsys):
    py = from_triton(stem, tmp_path)
    old, new = EDITS[stem]
    source = py.read_text()
    assert old in source
    py.write_text(source.replace(old, new, 1))
    capsys.readouterr()
    override = tmp_path / "override"
    assert cli.ptx2py_main(["to-triton", str(py), "--out", str(override)]) == 0
    env_lines = capsys.readouterr().out.strip().splitlines()
    assert env_lines == ["export TRITON_KERNEL_OVERRIDE=1", f"export TRITON_OVERRIDE_DIR={override.resolve()}"]
    side = json.loads(py.with_suffix(".json").read_text())
    written = [override / side["triton"]["override"]["key"] / side["triton"]["override"]["file"]]
    assert written[0] in set(override.glob("*/*.ptx"))          # with the keys of the calls it answers
    assert len({p.read_text() for p in override.glob("*/*.ptx")}) == 1
    edited = written[0].read_text()
    assert edited == python_to_ptx(py.read_text()) and edited != py.with_suffix(".ptx").read_text()
    env = dict(os.environ, TRITON_KERNEL_OVERRIDE="1", TRITON_OVERRIDE_DIR=str(override),
               TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    recorded = FILE_LINE.search(py.with_suffix(".ptx").read_text()).group(1)
    run = subprocess.run([sys.executable, "-c", CHECK, str(KERNELS), str(py.with_suffix(".json")), recorded,
                          str(written[0]), str(py.with_suffix(".ptx"))], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Overriding kernel with file" in run.stdout
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["ptx"] == edited
    assert got["same_cubin_as_edited"] and not got["same_cubin_as_original"]


def test_to_triton_refuses_a_renamed_kernel(tmp_path, capsys):
    py = from_triton("add_fp32_sm90", tmp_path)
    py.write_text(py.read_text().replace('"add_kernel"', '"add_kernel2"', 1))
    assert cli.ptx2py_main(["to-triton", str(py), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "no .entry add_kernel" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_from_triton_errors_are_located_and_write_nothing(tmp_path, capsys):
    out = tmp_path / "k.py"
    assert cli.ptx2py_main(["from-triton", f"{KERNELS}::no_such_kernel", "--signature", "i32", "-o", str(out)]) == 2
    assert f"{KERNELS}:1:1: error: no kernel named 'no_such_kernel'" in capsys.readouterr().err
    assert cli.ptx2py_main(["from-triton", f"{KERNELS}::add_kernel", "--signature", "*fp32", "-o", str(out)]) == 2
    assert "no type for parameter(s) y_ptr" in capsys.readouterr().err
    assert cli.ptx2py_main(["from-triton", f"{KERNELS}::add_kernel", "--signature", "*fp32,*fp32,*fp32,i32",
                            "--constexprs", "BLOCK=1000", "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    line = next(i for i, t in enumerate(KERNELS.read_text().splitlines(), 1) if "tl.arange(0, BLOCK)" in t)
    assert err[0] == f"{KERNELS}:{line}:26: error: Triton: arange's range must be a power of 2"
    assert err[1].strip() == "offs = pid * BLOCK + tl.arange(0, BLOCK)" and err[2].endswith("^")
    assert not list(tmp_path.iterdir())


def _compiled(stem: str, cache: Path):
    """A CompiledKernel, as a notebook user has one, in a fresh cache folder."""
    from ptx2py.tritonbridge.compile import KernelConfig, compile_kernel, load_kernel

    side = json.loads((LAUNCH / f"{stem}.json").read_text())
    fn = load_kernel(f"{KERNELS}::{side['source'].split('::')[1]}")
    cfg = KernelConfig(signature={k: v for k, v in side["signature"].items() if v != "constexpr"},
                       constexprs=side["constexprs"], capability=side["target"]["capability"],
                       num_warps=side["num_warps"], num_stages=side["num_stages"])
    return compile_kernel(fn, cfg).compiled


def test_notebook_api_on_a_compiled_kernel(tmp_path, monkeypatch):
    import ptx2py

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    compiled = _compiled("matmul_tma_fp16_sm90", tmp_path / "cache")
    k = ptx2py.from_triton(compiled)
    assert k.ptx() == compiled.asm["ptx"]
    src = k.python(sugar=True)
    assert python_to_ptx(src) == k.ptx() and re.search(r'params="[^"]*\ba_desc_shape0\b[^"]*\bprofile_scratch"', src)
    edited = k.ptx().replace("wgmma.wait_group.sync.aligned 1;", "wgmma.wait_group.sync.aligned 0;")
    assert edited != k.ptx()
    d = k.diff(edited)
    assert "-\twgmma.wait_group.sync.aligned 1;" in d and "+\twgmma.wait_group.sync.aligned 0;" in d
    html = k._repr_html_()
    assert "<table>" in html and "wgmma" in html and "a_desc_shape0" in html
    # the cache folder Triton wrote: the same kernel, parameters named from its TTIR
    folder = next(p for p in (tmp_path / "cache").iterdir() if list(p.glob("*.ptx")))
    c = ptx2py.open(folder)
    assert c.ptx() == k.ptx() and re.search(r'params="[^"]*\ba_desc_shape0\b', c.python())


def test_from_triton_accepts_a_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    compiled = _compiled("add_fp32_sm90", tmp_path / "cache")
    folder = next(p for p in (tmp_path / "cache").iterdir() if list(p.glob("*.ptx")))
    out = tmp_path / "k.py"
    assert cli.ptx2py_main(["from-triton", str(folder), "--sugar", "-o", str(out)]) == 0
    assert out.with_suffix(".ptx").read_text() == compiled.asm["ptx"]
    assert re.search(r'params="[^"]*\bn_elements\b', out.read_text())
    side = json.loads(out.with_suffix(".json").read_text())
    assert side["triton"]["override"] is None  # a cache folder does not carry the override key
    assert cli.ptx2py_main(["to-triton", str(out), "--out", str(tmp_path / "o")]) == 2


def test_notebook_verify_uses_ptxas(tmp_path):
    import ptx2py
    from ptx2py.verify.tools import find_ptxas_all

    if not find_ptxas_all():
        pytest.skip("no ptxas on this machine")
    k = ptx2py.open(PTX / "add_fp32_sm90.ptx")
    report = k.verify(k.ptx().replace("add.f32", "sub.f32"))
    assert report["ok"] and report["gpu"] == "sm_90a"


def test_gpu_runs_find_the_sidecar_beside_and_refuse_an_incomplete_one(tmp_path):
    from ptx2py.launch.plan import PlanError, entry_info, kernel_specs, plan_arguments, sidecar_for

    py = tmp_path / "k.py"
    assert cli.ptx2py_main(["from-triton", f"{KERNELS}::add_kernel", "--signature", "*fp32,*fp32,*fp32,i32",
                            "--constexprs", "BLOCK=1024", "-o", str(py)]) == 0
    assert sidecar_for(str(py.with_suffix(".ptx"))) == py.with_suffix(".json").resolve()
    side = json.loads(py.with_suffix(".json").read_text())
    assert side["triton"]["specialization"] == "signature" and any("x_ptr" in m for m in side["incomplete"])
    with pytest.raises(PlanError, match="lacks x_ptr: element count"):
        plan_arguments(entry_info(py.with_suffix(".ptx").read_text(), "add_kernel"), kernel_specs(side)[0])


PROGRAM = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from kernels import add_kernel
from ptx2py.tritonbridge.warmup import cpu_only_driver, tensor
n = 1 << 20
with cpu_only_driver(90):  # the program's own compile path: kernel[grid](...) minus the launch
    k = add_kernel.warmup(tensor("float32"), tensor("float32"), tensor("float32"), n, BLOCK=1024, grid=(n // 1024,))
print(json.dumps({"ptx": k.asm["ptx"]}))
"""


def test_the_programs_own_launch_path_picks_up_the_override(tmp_path, capsys):
    """from-triton with the launch's values -> edit -> to-triton; then Triton's launch path
    (JITFunction.warmup, as `add_kernel[grid](x, y, out, n, BLOCK=1024)` runs it) compiles the edited PTX."""
    n = 1 << 20
    py = tmp_path / "add.py"
    assert cli.ptx2py_main(["from-triton", f"{KERNELS}::add_kernel", "--signature", "*fp32,*fp32,*fp32,i32",
                            "--constexprs", "BLOCK=1024", "--arg", f"x_ptr={n}", "--arg", f"y_ptr={n}",
                            "--arg", f"out_ptr={n}:zeros", "--arg", f"n_elements={n}", "--grid", str(n // 1024),
                            "--sugar", "-o", str(py)]) == 0
    py.write_text(py.read_text().replace("ptx.add.f32(", "ptx.sub.f32("))
    assert cli.ptx2py_main(["to-triton", str(py), "--out", str(tmp_path / "override")]) == 0
    capsys.readouterr()
    edited = python_to_ptx(py.read_text())
    env = dict(os.environ, TRITON_KERNEL_OVERRIDE="1", TRITON_OVERRIDE_DIR=str(tmp_path / "override"),
               TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", PROGRAM, str(KERNELS.parent)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Overriding kernel with file" in run.stdout
    assert json.loads(run.stdout.strip().splitlines()[-1])["ptx"] == edited


@pytest.mark.slow
def test_from_triton_over_every_corpus_configuration(tmp_path):
    """scripts/triton_bridge_corpus.py: every corpus/launch/triton sidecar, PTX and names."""
    out = tmp_path / "figures.json"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "triton_bridge_corpus.py"), "--json", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    figures = json.loads(out.read_text())
    assert figures["figures"]["named"] == figures["total"] > 150
