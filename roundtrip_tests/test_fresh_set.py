"""The fresh readability set (scripts/make_fresh_set.py) and the per-file figures of
scripts/measure_readability.py."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import make_fresh_set as fresh  # noqa: E402
import measure_readability as measure  # noqa: E402


def _defined(paths) -> set:
    """The names of the module-level functions and the KERNELS keys the files define."""
    names = set()
    for p in paths:
        tree = ast.parse(Path(p).read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "KERNELS" for t in node.targets):
                names.update(k.value for k in node.value.keys)
    return names


def test_signature_split_keeps_block_shapes_whole():
    sig = "tensordesc<fp16[64,128]>,tensordesc<bf16[128,64]>,*fp16,i32,fp32"
    assert fresh.SIG_SPLIT.split(sig) == ["tensordesc<fp16[64,128]>", "tensordesc<bf16[128,64]>", "*fp16", "i32",
                                          "fp32"]
    assert fresh.SIG_SPLIT.split("*fp32,*fp32,i32") == ["*fp32", "*fp32", "i32"]


def test_every_triton_entry_names_a_fresh_kernel_with_its_arguments():
    src = ROOT / "corpus_fresh" / "src" / "triton" / "fresh_kernels.py"
    tree = ast.parse(src.read_text())
    params = {f.name: [a.arg for a in f.args.args] for f in tree.body if isinstance(f, ast.FunctionDef)}
    for name, sig, consts, *_ in fresh.TRITON:
        args = [a for a in params[name] if a not in consts]
        assert len(fresh.SIG_SPLIT.split(sig)) == len(args), name
        assert set(consts) <= set(params[name]), name


def test_fresh_kernels_are_not_corpus_kernels():
    """Kept apart: no fresh kernel has a corpus kernel's name (Triton functions, Pallas KERNELS)."""
    for producer in ("triton", "pallas"):
        mine = _defined((ROOT / "corpus_fresh" / "src" / producer).glob("*.py")) - {"_params", "_sds"}
        corpus = _defined((ROOT / "corpus" / "src" / producer).glob("*.py"))
        assert mine and not (mine & corpus), (producer, sorted(mine & corpus))


def test_fresh_set_has_every_nvcc_build_variant_of_the_corpus():
    flags = [set(f) for _, _, f in fresh.NVCC]
    assert any("-G" in f for f in flags)
    assert any("-lineinfo" in f and "-use_fast_math" not in f for f in flags)
    assert any("-rdc=true" in f for f in flags)
    assert any("-use_fast_math" in f for f in flags)


def test_per_file_rows_give_instructions_and_lines(tmp_path):
    src = ROOT / "corpus" / "ptx" / "llvm" / "vadd.sm_80.ptx"
    (tmp_path / "llvm").mkdir()
    (tmp_path / "llvm" / src.name).write_bytes(src.read_bytes())
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "measure_readability.py"), "--per-file", "--min", "1",
                          "-j", "1", str(tmp_path)], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in out.splitlines() if line.startswith("FILE ")]
    assert len(rows) == 1
    _, producer, n, lines, ratio, path = rows[0]
    import ptx2py
    from ptx2py.ptxgrammar import parse
    from ptx2py.ptxgrammar.tree import Instruction

    text = src.read_text()
    want_n = sum(1 for x in parse(text).walk() if x.__class__ is Instruction)
    want_lines = measure.code_lines(ptx2py.ptx_to_python(text, sugar=True, filename=path))
    assert (producer, int(n), int(lines)) == ("llvm", want_n, want_lines)
    assert abs(float(ratio) - want_lines / want_n) < 1e-3


def test_kind_table_groups_files_by_kernel_name(tmp_path):
    import readability_kinds as kinds

    corpus, fresh = tmp_path / "c.txt", tmp_path / "f.txt"
    corpus.write_text("FILE triton 600 300 0.500 corpus/ptx/triton/cumsum_i32_sm80.ptx\n"
                      "FILE triton 700 700 1.000 corpus/ptx/triton/cummax_2d_fp32_sm80.ptx\n"
                      "producer files median\n")
    fresh.write_text("FILE triton 800 200 0.250 /t/triton/cumprod_rows_fp32_sm90.ptx\n")
    got = {line.split("|")[2].strip(): line for line in kinds.table(kinds.rows(corpus), kinds.rows(fresh))[2:]}
    assert "| 2 | 0.750 (0.50-1.00) | 1 | 0.250 (0.25-0.25) |" in got["scan (associative_scan, cumsum/cumprod)"]
    assert "| 0 | - | 0 | - |" in got["transpose"]


def test_breakdown_counts_each_kind_of_line():
    src = "\n".join([
        "from ptx2py.dsl import *  # noqa",
        "with k.entry():",
        "    ptx.label(L.tmp3)",
        "    loc(1, 2)",
        "    # a comment line is not code",
        "    ptx.add.s32(r[1], r[2],",
        "                r[3])",
        "    ptx.label(L.bb0_2)",
        '    ptx.comment(" x")',
        'with ptx.section(".debug_info"):',
        "    ptx.data.b32(1)",
        "",
    ])
    assert measure.breakdown(src) == {"instructions": 2, "tmp labels": 1, "loc lines": 1, "ptx.comment": 1,
                                      "sections": 2, "rest": 3}


# a --sugar body written by hand: each line's family and bracket spelling is known
_SPELLED = '''from ptx2py.dsl import *  # noqa: F401,F403

tma_load = asm.cp_async_bulk_tensor._2d.shared__cta.global_.mbarrier__complete_tx__bytes
with ptx.entry("k", params=[], visible=True):
    r, rd = regs(b32=40, b64=40)
    ptx.wgmma.fence.sync.aligned()
    asm.here.wgmma_mma.m64n128k16.f32.f16.f16(d=r[1:65], a=rd[1], b=rd[2], scale_d=1)
    with asm():
        at(265, 15).wgmma.wait_group.sync.aligned(1)
    label(L.tmp0).at(3, 4).add.s32(r[1], r[2], 1)
    tma_load(dst=[r[3]], src=[rd[4], (r[5], r[6])], mbar=[r[7]])
    mbarrier_wait([r[27]], r[8])
    ptx.cp.async_.bulk.commit_group()
    ptx.ret()
'''


def test_family_spellings_count_each_bracket_spelling_per_family():
    got = measure.family_spellings(_SPELLED)
    assert got["wgmma"] == {"": 1, "asm.here": 1, "with asm": 1}
    assert got["add"] == {"": 1} and got["ret"] == {"": 1} and got["mbarrier"] == {"": 1}
    assert got["cp"] == {"asm": 1, "": 1}   # the alias spells what it names
