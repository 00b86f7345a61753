"""kernelir.compile_kernel: the fifteen problems compile for sm_80 and sm_90a,
ptxas accepts them, ptx2py round-trips and lints them clean, their structure
matches the IR, and what cannot be lowered is refused naming the node."""
from __future__ import annotations

import dataclasses
import re
import subprocess

import pytest
from conftest import PTXAS, needs_ptxas

from ptx2py import cli, transpile
from ptx2py.kernelir import PROBLEM_NAMES, CompileError, compile_kernel, ir, load_problem
from ptx2py.kernelir.problems import problem_path
from ptx2py.kernelir.problems.dsl import V, f, i, mod
from ptx2py.kernelir.tables import LN2, LOG2E, f32_hex
from ptx2py.lint import lint_module
from ptx2py.ptxgrammar import emit, parse

TARGETS = ("sm_80", "sm_90a")
CASES = [(n, t) for n in PROBLEM_NAMES for t in TARGETS]
_CACHE: dict = {}


def compiled(name, target):
    key = (name, target)
    if key not in _CACHE:
        _CACHE[key] = compile_kernel(load_problem(name)[0], target)
    return _CACHE[key]


def walk(stmts):
    for s in stmts:
        yield s
        for attr in ("body", "then", "else_"):
            yield from walk(getattr(s, attr, ()) or ())


@needs_ptxas
@pytest.mark.parametrize("name, target", CASES)
def test_ptxas_accepts(name, target, tmp_path):
    src = tmp_path / f"{name}.ptx"
    src.write_text(compiled(name, target))
    r = subprocess.run([PTXAS, f"-arch={target}", "-o", "/dev/null", str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name, target", CASES)
def test_roundtrip_and_lint_clean(name, target):
    text = compiled(name, target)
    module = parse(text, f"{name}.ptx")
    assert emit(module) == text
    assert lint_module(module, f"{name}.ptx") == []
    assert transpile.python_to_ptx(transpile.ptx_to_python(text)) == text


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_structure_matches_ir(name):
    kernel, _ = load_problem(name)
    text = compiled(name, "sm_90a")
    body = text[text.index("{"):]
    stmts = list(walk(kernel.body))
    # header: version/target, one cvta per buffer, every param loaded
    assert text.startswith(".version 8.0\n.target sm_90a\n.address_size 64\n")
    assert compiled(name, "sm_80").startswith(".version 7.1\n.target sm_80\n")
    assert body.count("cvta.to.global.u64") == len(kernel.buffers)
    assert body.count("ld.param.") == len(kernel.buffers) + len(kernel.params)
    # barriers: one per Sync, and ceil(log2(count)) + 1 per TreeHalve
    want = sum(1 for s in stmts if isinstance(s, ir.Sync))
    want += sum((s.count - 1).bit_length() + 1 for s in stmts if isinstance(s, ir.TreeHalve))
    assert len(re.findall(r"\bbar\.sync 0;", body)) == want
    # no early exit: the only ret is the last instruction, no exit at all
    assert "exit;" not in body
    assert re.findall(r"\bret;", body) == ["ret;"]
    assert body.rstrip().endswith("ret;\n}") or body.rstrip().endswith("ret;\n}".rstrip())
    if want:
        assert body.rindex("bar.sync") < body.rindex("ret;")
    # shuffles: log2(width) butterfly steps each, full mask
    shuffles = sum(s.width.bit_length() - 1 for s in stmts if isinstance(s, ir.WarpShuffle))
    assert body.count("shfl.sync.bfly.b32") == shuffles
    # 16-bit data lives in a .b16 bank
    halves = [b for b in kernel.buffers if b.dtype in ("f16", "bf16")]
    assert (".reg .b16 %h<" in body) == bool(halves)
    for b in halves:
        assert f"cvt.f32.{b.dtype}" in body
    # cp.async: .ca for 4/8 bytes, .cg for 16, commit/wait per IR statement
    copies = [s for s in stmts if isinstance(s, ir.CpAsyncCopy)]
    assert body.count("cp.async.ca.shared.global") == sum(s.bytes < 16 for s in copies)
    assert body.count("cp.async.cg.shared.global") == sum(s.bytes == 16 for s in copies)
    assert body.count("cp.async.commit_group") == sum(isinstance(s, ir.CpAsyncCommit) for s in stmts)
    assert body.count("cp.async.wait_group") == sum(isinstance(s, ir.CpAsyncWait) for s in stmts)
    # float constants are hex bit patterns only
    assert not re.search(r"[^\w.]\d+\.\d+", body)
    if '"exp"' in problem_path(name).read_text():
        assert "ex2.approx.ftz.f32" in body and LOG2E in body


@pytest.mark.parametrize("name", PROBLEM_NAMES)
def test_layout_is_the_dsl_default(name):
    """The compiler writes PTX text itself (kernelir/ptxtext.py): the layout must be the
    one a DSL program records with no layout arguments, so the generated Python
    carries no fmt=/indent=/lead=/tail/text/comment, only the inferred style: the one-space
    gaps are the fallback rule's, so it records nothing."""
    py = transpile.ptx_to_python(compiled(name, "sm_90a"))
    style = "ptx.style()"
    layout = [line for line in py.splitlines()
              if re.search(r"\b(fmt|indent|lead)=|ptx\.(tail|text|comment|style)\(", line)]
    assert layout == [style]


def test_constants_are_exact():
    assert LOG2E == "0f3FB8AA3B" and LN2 == "0f3F317218"
    assert f32_hex(1.0) == "0f3F800000" and f32_hex(float("-inf")) == "0fFF800000"
    text = compiled("row_softmax", "sm_90a")
    assert "0fFF800000" in text                      # the -inf start of the max


def _kernel(body, params=(ir.Param("n", "s32"),), dtype="f32"):
    return ir.Kernel("k", (ir.Buffer("x", dtype, ("n",), "input"),
                           ir.Buffer("y", dtype, ("n",), "output")),
                     tuple(params), ir.Launch((1, 1, 1), (32, 1, 1)), tuple(body))


def test_signed_and_unsigned_int_to_float():
    for dt in ("s32", "u32"):
        k = _kernel([ir.Assign("v", dt, ir.Cast(dt, V("n"))),
                     ir.Write("y", i(0), ir.Cast("f32", V("v")))])
        assert f"cvt.rn.f32.{dt}" in compile_kernel(k)


def test_float_modulo_is_refused_naming_the_node():
    k = _kernel([ir.Load("v", "x", i(0)),
                 ir.Cond(ir.Binary("lt", i(0), V("n")),
                         (ir.Write("y", i(0), mod(V("v"), f(2.0))),), ())])
    with pytest.raises(CompileError) as e:
        compile_kernel(k)
    assert str(e.value) == ("body[1].then[0].value (Binary mod): "
                            "float modulo has no PTX instruction")


@dataclasses.dataclass(frozen=True)
class Mystery(ir.Stmt):
    pass


@dataclasses.dataclass(frozen=True)
class Riddle(ir.Expr):
    pass


def test_unknown_statement_and_expression_are_refused():
    with pytest.raises(CompileError, match=r"^body\[1\] \(Mystery\): unknown statement kind"):
        compile_kernel(_kernel([ir.Sync(), Mystery()]))
    with pytest.raises(CompileError, match=r"^body\[0\]\.value\.b \(Riddle\): unknown expression kind"):
        compile_kernel(_kernel([ir.Write("y", i(0), ir.Binary("add", f(1.0), Riddle()))]))


def test_type_errors_are_refused():
    with pytest.raises(CompileError, match=r"^body\[0\]\.value \(Binary add\): operand dtypes differ"):
        compile_kernel(_kernel([ir.Write("y", i(0), ir.Binary("add", f(1.0), i(1)))]))
    with pytest.raises(CompileError, match="shuffle width 3"):
        compile_kernel(_kernel([ir.ZeroInit(("a",)), ir.WarpShuffle("a", V("a"), 3)]))


def test_odd_tree_and_xor_swizzle_compile(tmp_path):
    shared = (ir.Shared("s", "f32", 64),)
    body = [ir.Load("v", "x", ir.Builtin("tid.x")),
            ir.Write("s", ir.Builtin("tid.x"), V("v"), swizzle=ir.Swizzle("xor", 8)),
            ir.Sync(), ir.TreeHalve("s", "t", "max", 7, 3),
            ir.Cond(ir.Binary("eq", ir.Builtin("tid.x"), i(0)), (ir.Write("y", i(0), V("t")),), ())]
    k = dataclasses.replace(_kernel(body), shared=shared,
                            launch=ir.Launch((1, 1, 1), (33, 1, 1)))
    text = compile_kernel(k)
    assert text.count("bar.sync 0;") == 1 + 3 + 1
    assert "xor.b32" in text and "max.f32" in text
    if PTXAS:
        p = tmp_path / "k.ptx"
        p.write_text(text)
        assert subprocess.run([PTXAS, "-arch=sm_90a", "-o", "/dev/null", str(p)]).returncode == 0


def test_cli_compiles_and_writes_python(tmp_path):
    out = tmp_path / "mean.ptx"
    assert cli.ptx2py_main(["compile-ir", str(problem_path("mean")), "-o", str(out),
                            "--target", "sm_80"]) == 0
    assert out.read_text() == compiled("mean", "sm_80")
    py = tmp_path / "mean.py"
    assert cli.ptx2py_main(["compile-ir", str(problem_path("mean")), "-o", str(py), "--python"]) == 0
    assert transpile.python_to_ptx(py.read_text()) == compiled("mean", "sm_90a")


def test_cli_error_names_the_node_and_writes_nothing(tmp_path, capsys):
    import json

    from ptx2py.kernelir import dump_kernel
    k = _kernel([ir.Load("v", "x", i(0)), ir.Write("y", i(0), mod(V("v"), f(2.0)))])
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(dump_kernel(k)))
    out = tmp_path / "bad.ptx"
    assert cli.ptx2py_main(["compile-ir", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"{src}: error: body[1].value (Binary mod): "
                           "float modulo has no PTX instruction")
    assert not out.exists() and list(tmp_path.iterdir()) == [src]
