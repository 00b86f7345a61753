"""verify: assemble base and edited PTX with ptxas, compare ptxas -v figures and SASS."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest
from conftest import CASES, CORPUS, ROOT, needs

from ptx2py.verify import locate, sass, tools
from ptx2py.verify import report as verify

PTXAS = tools.find_ptxas((8, 0))[0]
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="no ptxas found")
DISASM = tools.find_disassembler()[0]
needs_disasm = pytest.mark.skipif(DISASM is None, reason="no cuobjdump/nvdisasm found (pip install '.[cuda-tools]')")

KERNELS = ["triton/add_bf16_sm80.ptx", "nvcc/atomics.sm_90a.ptx", "nvcc/stencil.sm_100a.ptx",
           "nvcc/tcgen05_sm100.sm_100a.ptx"]
SASS_CASES = json.loads((CASES / "sass_diff" / "cases.json").read_text())


def _cli(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), "verify", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_release_to_ptx_isa():
    assert tools.ptx_isa_for_release((13, 0)) == (9, 0)
    assert tools.ptx_isa_for_release((13, 5)) == (9, 5)
    assert tools.ptx_isa_for_release((12, 9)) == (8, 8)
    assert tools.ptx_isa_for_release((12, 4)) == (8, 4)


def test_parse_ptxas_info():
    text = ("ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
            "ptxas info    : Function properties for k\n"
            "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
            "ptxas info    : Used 29 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n")
    k = verify.parse_ptxas_info(text)["k"]
    assert (k["registers"], k["stack"], k["spill_stores"], k["spill_loads"], k["smem"], k["barriers"]) == \
        (29, 8, 4, 4, 1024, 1)


def test_parse_sass():
    text = ("\t\tFunction : k\n        /*0000*/                   MOV R1, c[0x0][0x28] ;\n"
            "        /*0010*/              @!P0 BRA 0x40 ;\n"
            "        /*0020*/                   LDG.E.128 R4, [R2.64] ;\n")
    assert sass.parse_sass(text) == {"k": ["MOV R1, c[0x0][0x28]", "@!P0 BRA 0x40", "LDG.E.128 R4, [R2.64]"]}
    assert [i.address for i in sass.parse_sass_listing(text)["k"]] == [0, 16, 32]
    assert sass.mix(sass.parse_sass(text)["k"]) == {"MOV": 1, "BRA": 1, "LDG": 1}
    assert sass.family_mix(sass.parse_sass(text)["k"]) == {"integer": 1, "control flow": 1, "global memory": 1}


def _stream(items):
    return [sass.SassInstr(*x) if isinstance(x, list) else sass.SassInstr(16 * n, x) for n, x in enumerate(items)]


@pytest.mark.parametrize("case", SASS_CASES, ids=[c["name"] for c in SASS_CASES])
def test_sass_diff(case):
    k = sass.compare_kernel(_stream(case["base"]), _stream(case["edited"]))
    assert [c["line"] for c in k["changed"]] == case["changed"]
    assert len(k["moved"]) == case["moved"]
    assert k["renamed"] == case["renamed"]
    assert k["equivalent"] == (not case["changed"] and not case["moved"])
    if "moved_first" in case:
        assert k["moved"][0]["line"] == case["moved_first"]
        assert not any(m["text"].startswith("BAR.") for m in k["moved"])


def test_changed_instructions_come_before_moves_and_renames():
    case = SASS_CASES[0]
    k = sass.compare_kernel(_stream(case["base"]), _stream(case["edited"]))
    lines = verify.sass_lines(k, None, False)
    assert "1 changed, 0 moved, 0 differ only in register names" in lines[0]
    assert lines[1] == "    changed: WARPGROUP.DEPBAR.LE gsb0, 0x1 -> 0x0"


def test_context_and_full_aligned_diff():
    base = ["MOV R%d, 0x%x" % (n, n) for n in range(20)]
    edited = list(base)
    edited[10] = "MOV R10, 0x99"
    k = sass.compare_kernel(_stream(base), _stream(edited))
    ctx = verify.sass_lines(k, 2, False)
    body = ctx[ctx.index(next(x for x in ctx if x.startswith("  aligned diff"))) + 1:]
    assert len(body) == 2 + 2 + 2        # 2 rows of context each side, the - and + lines
    assert any("- MOV R10, 0xa" in x for x in body) and any("+ MOV R10, 0x99" in x for x in body)
    full = verify.sass_lines(k, None, True)
    assert len(full) - full.index(next(x for x in full if x.startswith("  aligned diff"))) - 1 == 21


# --- tools ----------------------------------------------------------------------------------------

def _fake_tool(path, release):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {release}, V{release}.1'\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("layout", ["nvidia/cu13/bin", "nvidia/cuda_cuobjdump/bin"])
def test_disassembler_found_in_both_wheel_layouts(tmp_path, monkeypatch, layout):
    site = tmp_path / "site-packages"
    fake = _fake_tool(site / layout / "cuobjdump", "13.5")
    monkeypatch.setattr(tools, "site_dirs", lambda: [site])
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.delenv("PTX2PY_CUOBJDUMP", raising=False)
    tool, kind = tools.find_disassembler()
    assert kind == "cuobjdump" and tool.path == str(fake) and tool.release == (13, 5)


def test_ptxas_search_order_and_overrides(tmp_path, monkeypatch):
    old = _fake_tool(tmp_path / "path" / "ptxas", "12.4")
    home = _fake_tool(tmp_path / "cuda" / "bin" / "ptxas", "13.0")
    mine = _fake_tool(tmp_path / "mine" / "ptxas", "13.4")
    monkeypatch.setattr(tools, "site_dirs", lambda: [])
    monkeypatch.setenv("PATH", str(old.parent))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    monkeypatch.delenv("PTX2PY_PTXAS", raising=False)
    assert tools.find_ptxas((8, 0))[0].path == str(old)          # PATH first when new enough
    assert tools.find_ptxas((9, 0))[0].path == str(home)         # else $CUDA_HOME
    monkeypatch.setenv("PTX2PY_PTXAS", str(mine))
    assert tools.find_ptxas((8, 0))[0].origin == "$PTX2PY_PTXAS"
    assert tools.find_ptxas((8, 0), explicit=str(old))[0].path == str(old)   # --ptxas wins


def test_chromium_search_override_then_path_names(tmp_path, monkeypatch):
    shell = _fake_tool(tmp_path / "path" / "chrome-headless-shell", "1.0")
    mine = _fake_tool(tmp_path / "mine" / "chromium", "1.0")
    monkeypatch.setattr(tools, "site_dirs", lambda: [])
    monkeypatch.setenv("PATH", str(shell.parent))
    monkeypatch.delenv("PTX2PY_CHROMIUM", raising=False)
    assert tools.find_chromium().path == str(shell)                   # any of the browser names on PATH
    monkeypatch.setenv("PTX2PY_CHROMIUM", str(mine))
    found = tools.find_chromium()
    assert (found.path, found.origin) == (str(mine), "$PTX2PY_CHROMIUM")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("PTX2PY_CHROMIUM")
    assert tools.find_chromium() is None


def test_no_new_enough_ptxas_says_what_to_install(tmp_path, monkeypatch):
    _fake_tool(tmp_path / "path" / "ptxas", "13.0")
    monkeypatch.setattr(tools, "site_dirs", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    for var in ("CUDA_HOME", "CUDA_PATH", "PTX2PY_PTXAS"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(tools.ToolError) as e:
        tools.require_ptxas((9, 4))
    msg = str(e.value)
    assert "PTX ISA 9.4" in msg and "CUDA 13.4 or newer" in msg
    assert "CUDA 13.0, PTX ISA <= 9.0" in msg                      # what was found
    assert "pip install 'ptx2py[cuda-tools]'" in msg and "--ptxas" in msg


def test_cuda_tools_extra_names_the_wheels():
    text = (ROOT / "pyproject.toml").read_text()
    line = next(x for x in text.splitlines() if x.startswith("cuda-tools"))
    for wheel in ("nvidia-cuda-nvcc", "nvidia-cuda-cuobjdump", "nvidia-cuda-nvdisasm"):
        assert wheel in line


# --- diagnostics located in the input -------------------------------------------------------------

def test_ptxas_error_located_in_ptx_input():
    text = ".version 8.0\n.target sm_80\n.entry k()\n{\n\twgmma.fence.sync.aligned;\n\tret;\n}\n"
    stderr = ("ptxas /tmp/ptx2py-verify-x/module.ptx, line 5; error   : Instruction 'wgmma.fence' not supported "
              "on .target 'sm_80'\nptxas fatal   : Ptx assembly aborted due to errors\n")
    errors, _ = locate.located_diagnostics(stderr, locate.Source("k.ptx", text), text)
    assert errors[0].splitlines() == ["k.ptx:5:2: error: Instruction 'wgmma.fence' not supported on .target 'sm_80'",
                                      "\twgmma.fence.sync.aligned;", " ^"]
    assert errors[1] == "k.ptx: error: Ptx assembly aborted due to errors"
    assert "/tmp/" not in "".join(errors)


def test_ptxas_error_located_in_python_input():
    ptx = ".version 8.0\n.target sm_80\n.entry k()\n{\n\twgmma.fence.sync.aligned;\n\tret;\n}\n"
    py = "import ptx\n\nwith kernel():\n    ptx.wgmma.fence.sync.aligned()\n    ptx.ret()\n"
    stderr = "ptxas /tmp/x/module.ptx, line 5; error   : Instruction 'wgmma.fence' not supported on .target 'sm_80'\n"
    errors, _ = locate.located_diagnostics(stderr, locate.Source("k.py", py, {5: 4, 6: 5}, True), ptx)
    first, line, caret, note = errors[0].splitlines()
    assert first.startswith("k.py:4:9: error: Instruction 'wgmma.fence'")
    assert line == "    ptx.wgmma.fence.sync.aligned()" and caret == " " * 8 + "^"
    assert note == "  (PTX line 5: `wgmma.fence.sync.aligned;`)"


@needs_ptxas
@needs(CORPUS)
@pytest.mark.parametrize("rel", KERNELS)
def test_kernel_against_itself(rel):
    path = CORPUS / rel
    if not path.exists():
        pytest.skip(f"{rel} not in the corpus")
    report = verify.verify_files(str(path), str(path))
    assert report["ok"] and report["exit"] == 0
    assert report["identical_figures"] and report["identical_cubin"]
    assert report["identical_sass"] in (True, None)
    assert report["kernels"]


@needs_ptxas
@needs(CORPUS)
def test_hand_edit_is_reported(tmp_path):
    base = CORPUS / "nvcc/atomics.sm_90a.ptx"
    text = base.read_text()
    edited, n = re.subn(r"\badd\.s32(\s+)(%r\d+), (%r\d+), (%r\d+);", r"mul.lo.s32\1\2, \3, \4;", text, count=1)
    assert n == 1
    path = tmp_path / "edited.ptx"
    path.write_text(edited)
    report = verify.verify_files(str(base), str(path))
    assert report["ok"]
    assert not report["identical_cubin"]
    assert report["identical_sass"] in (False, None)
    out = verify.format_report(report)
    assert "SASS differs" in out or "cubin differs" in out


@needs_ptxas
@needs(CORPUS)
def test_edit_that_does_not_assemble(tmp_path):
    base = CORPUS / "triton/add_bf16_sm80.ptx"
    lines = base.read_text().splitlines(keepends=True)
    i = next(n for n, x in enumerate(lines) if x.strip().startswith("ret;"))
    lines.insert(i, "\twgmma.fence.sync.aligned;\n")      # not on sm_80
    path = tmp_path / "bad.ptx"
    path.write_text("".join(lines))
    r = _cli(str(base), str(path))
    assert r.returncode == 1
    assert re.search(rf"^{re.escape(str(path))}:{i + 1}:2: error: .*wgmma", r.stderr, re.M), r.stderr
    assert "ptx2py-verify-" not in r.stderr          # never the deleted temp file


@needs_ptxas
@needs(CORPUS)
def test_cli_json_and_python_input(tmp_path):
    from ptx2py.transpile import ptx_to_python

    base = CORPUS / "triton/add_bf16_sm80.ptx"
    py = tmp_path / "k.py"
    py.write_text(ptx_to_python(base.read_text(), filename=str(base)))
    out = tmp_path / "r.json"
    r = _cli(str(base), str(py), "--json", str(out))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["identical_figures"] and data["ptxas"]
    assert "identical" in r.stdout


@needs_ptxas
@needs(CORPUS)
def test_run_skips_cleanly_without_gpu(tmp_path):
    from ptx2py.verify import gpu_run

    base = CORPUS / "triton/add_bf16_sm80.ptx"
    res = gpu_run.run_pair(str(base), base.read_text())
    if res["status"] == "skipped":
        assert res["message"].startswith("--run skipped:")
    else:
        assert res["status"] == "match"


@needs_ptxas
@needs(CORPUS)
def test_python_edit_error_maps_to_python_line(tmp_path):
    from ptx2py.transpile import ptx_to_python

    base = CORPUS / "triton/add_bf16_sm80.ptx"
    lines = ptx_to_python(base.read_text(), filename=str(base)).splitlines()
    i = next(n for n, x in enumerate(lines) if x.strip() == "ptx.ret()")
    lines.insert(i, lines[i].replace("ptx.ret()", "ptx.wgmma.fence.sync.aligned()"))
    py = tmp_path / "bad.py"
    py.write_text("\n".join(lines) + "\n")
    r = _cli(str(base), str(py))
    assert r.returncode == 1
    first = r.stderr.splitlines()[0]                   # checked mode's finding first, at the Python line
    assert re.match(rf"{re.escape(str(py))}:{i + 1}:\d+: error: .*needs sm_90a", first), r.stderr
    assert re.search(rf"^{re.escape(str(py))}:{i + 1}:\d+: error: .*wgmma", r.stderr, re.M), r.stderr
    assert "ptx2py-verify-" not in r.stderr


@needs_ptxas
@needs(CORPUS)
def test_module_calling_external_functions_is_assembled_relocatable():
    path = CORPUS / "nvcc" / "rdc_main.sm_80.rdc.ptx"
    if not path.exists():
        pytest.skip("rdc_main.sm_80.rdc.ptx not in the corpus")
    report = verify.verify_files(str(path), str(path))
    assert report["ok"] and report["identical_figures"] and "relocatable" in report["mode"]


# --- the worked example, the HTML page ------------------------------------------------------------

WORKED = ROOT / "examples" / "worked_matmul"
MATMUL = CORPUS / "triton" / "matmul_tma_fp16_sm90.ptx"


@needs_ptxas
@needs_disasm
@needs(CORPUS)
def test_worked_example_two_edits_show_the_depbar_change_first(tmp_path):
    page = tmp_path / "r.html"
    r = _cli(str(MATMUL), str(WORKED / "matmul_edited.py"), "--json", str(tmp_path / "r.json"), "--html", str(page))
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[:3]
    assert first[0] == "matmul_tma_kernel:"
    assert "1 changed" in first[1] and "moved" in first[1]
    assert first[2].startswith("    changed: WARPGROUP.DEPBAR.LE gsb0, 0x1 -> 0x0")
    data = json.loads((tmp_path / "r.json").read_text())
    k = data["kernels"]["matmul_tma_kernel"]["sass"]
    assert len(k["rows"]) >= k["base_count"] and k["moved"]      # the JSON carries the whole aligned diff
    # the moved arrive itself is named (first: it crossed a barrier), not the barrier it crossed
    assert "SYNCS.ARRIVE.TRANS64" in k["moved"][0]["text"] and k["moved"][0]["across"] >= 1
    assert not any(m["text"].startswith("BAR.") for m in k["moved"])
    assert r.stdout.splitlines()[3].startswith("    moved:   @P2 SYNCS.ARRIVE.TRANS64")
    _check_page(page.read_text(), data)
    ctx = _cli(str(MATMUL), str(WORKED / "matmul_edited.py"), "--context", "1").stdout.splitlines()
    diff = ctx[ctx.index(next(x for x in ctx if x.startswith("  aligned diff"))) + 1:]
    assert "261   261 - WARPGROUP.DEPBAR.LE gsb0, 0x1" in [x.strip() for x in diff]
    assert "..." in [x.strip() for x in diff]            # rows far from a change are left out


class _Tables(HTMLParser):
    """Every table on the page as (class, rows of cell texts)."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append((dict(attrs).get("class"), []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _check_page(page: str, report: dict):
    p = _Tables()
    p.feed(page)
    by_class = {}
    for cls, rows in p.tables:
        by_class.setdefault(cls, []).append(rows)
    summary = dict(r for r in by_class["summary"][0][1:])
    assert summary["result"] == verify.verdict(report).removeprefix("result: ")
    assert summary["ptxas"] == report["ptxas"]
    for (name, k), figures, sass_rows in zip(report["kernels"].items(), by_class["figures"], by_class["sass"]):
        regs = next(r for r in figures if r[0] == "registers")
        assert regs[1:] == [str(k["base"]["registers"]), str(k["edited"]["registers"])]
        bars = [r for r in sass_rows if len(r) == 1]               # a folded run's "N equal rows" bar
        assert len(sass_rows) - 1 - len(bars) == len(k["sass"]["rows"])      # one table row per aligned row
        assert sum(int(r[0].split()[0]) for r in bars) <= len(k["sass"]["rows"])
        side = [r for r in sass_rows[1:] if len(r) == 4 and r[1] != r[3]]
        assert any(r[1] == "WARPGROUP.DEPBAR.LE gsb0, 0x1" and r[3] == "WARPGROUP.DEPBAR.LE gsb0, 0x0" for r in side)


def test_page_structure_from_a_report():
    from ptx2py.verify.html import render_html

    k = sass.compare_kernel(_stream(SASS_CASES[0]["base"]), _stream(SASS_CASES[0]["edited"]))
    fig = {"registers": 90, "spill_stores": 0, "spill_loads": 0, "stack": 0, "smem": 0, "barriers": 1}
    report = {"ok": True, "base": "b.ptx", "edited": "e.py", "ptxas": "ptxas (PATH)", "disassembler": "cuobjdump",
              "gpu": "sm_90a", "lint": [], "identical_sass": False, "equivalent_sass": False, "identical_figures": True,
              "identical_cubin": False, "kernels": {"k": {"base": fig, "edited": dict(fig, registers=96),
                                                          "changed": {"registers": [90, 96]}, "sass": k}}}
    _check_page(render_html(report), report)


def test_equal_runs_fold_beyond_the_context_of_each_change():
    from ptx2py.verify.views import FOLD_CONTEXT, FOLD_MIN, fold_runs

    assert (FOLD_CONTEXT, FOLD_MIN) == (3, 4)          # the figures below are worked out for these
    rows = [{"tag": t} for t in ["equal"] * 10 + ["changed"] + ["renamed"] * 9 + ["inserted"] + ["equal"] * 5]
    shape = [(folded, len(part)) for folded, part in fold_runs(rows)]
    # 10 before the change: 7 folded, 3 kept; 9 between: 3 kept each side leave 3, too few to fold;
    # 5 after: 3 kept leave 2, too few
    assert shape == [(True, 7), (False, 3), (False, 1), (False, 9), (False, 1), (False, 5)]
    assert sum(n for _, n in shape) == len(rows)
    assert [f for f, _ in fold_runs([{"tag": "equal"}] * 4)] == [True]          # nothing changed: one fold


def test_page_escapes_the_sources():
    from ptx2py.verify.html import render_html

    k = sass.compare_kernel(_stream(SASS_CASES[0]["base"]), _stream(SASS_CASES[0]["edited"]))
    k["located"] = {"base": [[0, 1]] * k["base_count"], "edited": [[0, 2]] * k["edited_count"]}
    evil = "</script><img src=x onerror=alert(1)>"
    sources = {"base_ptx": f"// {evil}\nret;", "edited_ptx": f"// {evil}\nret;", "python": f"# {evil}\nx = 1",
               "python_name": f"{evil}.py", "line_map": {2: 2}}
    page = render_html({"ok": True, "base": "b", "edited": "e", "ptxas": "p", "gpu": "sm_90a", "lint": [],
                        "identical_sass": False, "equivalent_sass": False, "identical_figures": True,
                        "identical_cubin": False, "kernels": {"k": {"base": {}, "edited": {}, "sass": k}}}, sources)
    assert evil not in page and page.count("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") == 4
    assert page.count("<script>") == 1 and "http" not in page          # its one script, nothing fetched
    assert 'data-line="2" data-py="2"' in page                         # edited PTX line 2 -> Python line 2
    ptx_only = render_html({"ok": True, "base": "b", "edited": "e", "ptxas": "p", "gpu": "sm_90a", "lint": [],
                            "identical_sass": False, "equivalent_sass": False, "identical_figures": True,
                            "identical_cubin": False, "kernels": {"k": {"base": {}, "edited": {}, "sass": k}}},
                           dict(sources, python=None, line_map=None)).split("<script>")[0]
    assert 'data-pane="ptx"' in ptx_only and 'data-pane="py"' not in ptx_only and "data-py=" not in ptx_only


@pytest.mark.skipif(tools.find_chromium() is None, reason="no Chromium found ($PTX2PY_CHROMIUM, PATH)")
def test_page_renders_in_headless_chromium(tmp_path):
    from ptx2py.verify.html import write_html

    k = sass.compare_kernel(_stream(SASS_CASES[0]["base"]), _stream(SASS_CASES[0]["edited"]))
    page = tmp_path / "r.html"
    write_html({"ok": True, "base": "b", "edited": "e", "ptxas": "p", "gpu": "sm_90a", "lint": [],
                "identical_sass": False, "equivalent_sass": False, "identical_figures": True, "identical_cubin": False,
                "kernels": {"k": {"base": {}, "edited": {}, "sass": k}}}, page)
    r = subprocess.run([tools.find_chromium().path, "--headless", "--no-sandbox", "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "WARPGROUP.DEPBAR.LE gsb0, 0x0" in r.stdout


# --- races (SentryWard) ---------------------------------------------------------------------------

def test_races_input_json_from_the_sidecar():
    from ptx2py.launch import plan as lp
    from ptx2py.verify import races

    path = CORPUS / "triton" / "matmul_tma_fp16_sm100.ptx"
    spec = races.launch_spec(str(path))
    doc, shrunk = races.input_json(path.read_text(), spec, cap=128)
    assert doc["schema"] == "spverify.kernel-input/v1" and doc["entry"] == "matmul_tma_kernel"
    assert doc["launch"] == {"grid_dim": [1, 1, 1], "block_dim": [256, 1, 1], "dynamic_shared_bytes": spec["shared"]}
    a = next(d for d in doc["tma_descriptors"] if d["object"] == "a_desc")
    # a is 2048 x 2048 fp16 with a 128 x 64 box: shrunk to 128 x 128, innermost first, 128B swizzle
    assert (a["global_shape"], a["box_shape"], a["global_strides_bytes"]) == ([128, 128], [64, 128], [256])
    assert (a["element_type"], a["swizzle"], a["oob_fill"], a["element_strides"]) == ("f16", "128B", "zero", [1, 1])
    scalars = {x["parameter"]: x["value"] for x in doc["arguments"]}
    entry = lp.entry_info(path.read_text(), "matmul_tma_kernel")
    names = [p.name for p in entry.params]
    assert [scalars[i] for i in range(len(names)) if i in scalars][-3:] == [128, 128, 128]    # M, N, K follow
    assert shrunk["values"] == {"2048": 128}


def test_races_flat_launch_keeps_each_cta_share():
    from ptx2py.verify import races

    path = CORPUS / "triton" / "add_fp32_sm100.ptx"
    doc, shrunk = races.input_json(path.read_text(), races.launch_spec(str(path)), ctas=2)
    assert doc["launch"]["grid_dim"] == [2, 1, 1]
    assert {x["value"] for x in doc["arguments"]} == {2048}        # n_elements: 1024 CTAs x 1024 -> 2 x 1024


def test_races_result_read_and_witness_mapped_to_python():
    from ptx2py.verify import races

    ptx = "l1\nl2\n\tst.shared.u32 [%r1], %r2;\n\tld.shared.u32 %r3, [%r1];\n"
    result = {"result": "potential_race", "checks": {"synchronization": "passed", "memory": "failed"},
              "diagnostics": [{"code": "unordered_access_pair", "message": "write/read",
                               "details": {"first": {"ptx_line": 3}, "second": {"ptx_line": 4}}}]}
    r = races.read_result(result, ptx, "k.py", {3: 30, 4: 31})
    assert r["finding"] and r["verdict"] == "potential_race"
    assert [(w["ptx_line"], w["python_line"]) for w in r["witnesses"]] == [(3, 30), (4, 31)]
    assert "    at k.py:30 (PTX line 3:2): st.shared.u32 [%r1], %r2;" in r["lines"]
    unsupported = races.read_result({"result": "unsupported", "diagnostics": []}, ptx, "k.ptx", None)
    assert not unsupported["finding"] and any("--run cpu" in x for x in unsupported["lines"])


def test_races_kernel_is_given_without_loc_so_race_ends_are_ptx_lines():
    from ptx2py.verify import race_report

    ptx = ("\t.loc\t1 265 5\n\tst.shared.b32 [%r1], %r2;\n\t.loc 2 314 12, function_name $L__info_string0\n"
           "\tbar.sync 0;\n")
    blank = race_report.without_loc(ptx)
    assert blank.splitlines() == ["", "\tst.shared.b32 [%r1], %r2;", "", "\tbar.sync 0;"]    # line numbers kept


def _race(first, second, line1=2, line2=5):
    return {"region": {"address_space": "shared", "bytes": 4, "offset": 0},
            "first": {"mode": first[0], "bytes": 4, "actor": first[1],
                      "location": {"file": "/tmp/x/kernel.ptx", "line": line1, "column": 2}},
            "second": {"mode": second[0], "bytes": 4, "actor": second[1],
                       "location": {"file": "/tmp/x/kernel.ptx", "line": line2, "column": 2}}}


RACE_PTX = ("l1\n\tst.shared.v4.b32 \t[%r1], {%r2, %r3, %r4, %r5};\n\tadd.s32 %r6, %r6, 1;\n"
            "\tbar.sync 0;\n\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r7, %r8}], [%r1];\n")


def test_races_witness_ends_are_the_ptx_and_python_lines_sentryward_names():
    from ptx2py.verify import race_report

    result = {"result": "potential_race", "checks": {}, "races": [_race(("write", 32), ("read", 0))],
              "diagnostics": [{"code": "conflicting_accesses_unordered"}]}
    r = race_report.read_result(result, RACE_PTX, "k.py", {2: 40, 5: 42}, threads_per_cta=128)
    assert [(w["endpoint"], w["ptx_line"], w["column"], w["python_line"]) for w in r["witnesses"]] == [
        ("first", 2, 2, 40), ("second", 5, 2, 42)]
    assert any(x.startswith("      write of 4 B by thread 32 at k.py:40 (PTX line 2:2): st.shared.v4.b32")
               for x in r["lines"])
    assert r["classification"] is None
    ptx_input = race_report.read_result(result, RACE_PTX, "k.ptx", None, threads_per_cta=128)
    assert any("at k.ptx:5:2: cp.async.bulk.tensor" in x for x in ptx_input["lines"])


def test_races_same_warp_duplicate_store_is_said_so_and_stays_a_finding():
    from ptx2py.verify import race_report

    dup = {"result": "potential_race", "checks": {}, "races": [_race(("write", 0), ("write", 1), 2, 2)],
           "diagnostics": [{"code": "conflicting_accesses_unordered"}]}
    r = race_report.read_result(dup, RACE_PTX, "k.ptx", None, threads_per_cta=128)
    assert r["finding"] and r["verdict"] == "potential_race" and r["classification"] == "same_warp_duplicate_store"
    assert any("same-warp duplicate store" in x and "neither SentryWard" in x for x in r["lines"])
    other_warp = dict(dup, races=[_race(("write", 0), ("write", 32), 2, 2)])
    assert race_report.read_result(other_warp, RACE_PTX, "k.ptx", None, threads_per_cta=128)["classification"] is None
    other_cta = dict(dup, races=[_race(("write", 0), ("write", 128), 2, 2)])
    assert race_report.read_result(other_cta, RACE_PTX, "k.ptx", None, threads_per_cta=128)["classification"] is None


def test_edit_sites_name_replaced_and_removed_lines():
    from ptx2py.verify import race_report

    base = "a;\n\tmbarrier.try_wait.parity.b64 p, [%r1], %r2;\nb;\n\tbar.sync 0;\nc;\n"
    edited = "a;\n\tmov.pred p, 1;\nb;\nc;\n"
    sites = race_report.edit_sites(base, edited)
    assert [(s["line"], s["column"], s["text"], s["was"], s["removed"]) for s in sites] == [
        (2, 2, "mov.pred p, 1;", "mbarrier.try_wait.parity.b64 p, [%r1], %r2;", False),
        (4, 1, "c;", "bar.sync 0;", True)]
    assert race_report.edit_sites(base, base) == []


def test_lifecycle_witness_names_the_edited_ptx_and_python_line():
    from ptx2py.verify import race_report

    ptx = ("\tmbarrier.init.shared::cta.b64 [%r1], 1;\n\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%r1];\n"
           "\tmov.pred p, 1;\n\tmbarrier.inval.shared::cta.b64 [%r1];\n")
    base = ptx.replace("mov.pred p, 1;", "mbarrier.try_wait.parity.shared::cta.b64 p, [%r1], %r2;")
    result = {"result": "invalid_lifecycle", "checks": {"synchronization": "failed"},
              "diagnostics": [{"code": "barrier_completion_before_invalidation_not_proven",
                               "message": "Every operation on the mbarrier must finish before its final invalidation.",
                               "details": {"witnesses": [{"from_instruction": 7, "to_instruction": 9,
                                                          "kind": "mbarrier_final_invalidation"}]}}]}
    r = race_report.read_result(result, ptx, "k.py", {3: 33}, edits=race_report.edit_sites(base, ptx))
    edit = [w for w in r["witnesses"] if w.get("role") == "edit"]
    assert [(w["ptx_line"], w["column"], w["python_line"]) for w in edit] == [(3, 2, 33)]
    assert any(x.strip().startswith("edited at k.py:33 (PTX line 3:2): mov.pred p, 1;  (base: mbarrier.try_wait")
               for x in r["lines"])
    assert any("to: its final invalidation: one of PTX lines 4" in x for x in r["lines"])
    assert any("from: an operation on the mbarrier: one of PTX lines 1, 2" in x for x in r["lines"])
    # without a base to compare with, the witness still says SentryWard names no line, and nothing is made up
    alone = race_report.read_result(result, ptx, "k.ptx", None)
    assert not [w for w in alone["witnesses"] if w.get("role") == "edit"]
    assert any("SentryWard names no PTX line" in x for x in alone["lines"])


@pytest.mark.slow
def test_races_cli_on_a_tcgen05_matmul_and_a_removed_wait(tmp_path):
    from ptx2py.verify import races

    if races.sentryward_available():
        pytest.skip(races.sentryward_available())
    path = CORPUS / "triton" / "matmul_tma_fp16_sm100.ptx"
    r = _cli(str(path), str(path), "--races", "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    k = data["races"]["kernels"]["matmul_tma_kernel"]
    assert k["base"]["verdict"] == "race_free" == k["edited"]["verdict"]
    # the MMA-completion wait (after the tcgen05.commit) removed in the Python: reported at the edited line
    from ptx2py import ptx_to_python

    lines = ptx_to_python(path.read_text()).splitlines(keepends=True)
    waits = [i for i, x in enumerate(lines) if "mbarrier.try_wait" in x]
    i = waits[1]
    lines[i] = lines[i][:len(lines[i]) - len(lines[i].lstrip())] + "ptx.mov.pred(complete, 1)\n"
    edited = tmp_path / "edited.py"
    edited.write_text("".join(lines))
    r = _cli(str(path), str(edited), "--races", "--json", str(tmp_path / "e.json"))
    assert r.returncode == 1, r.stderr
    k = json.loads((tmp_path / "e.json").read_text())["races"]["kernels"]["matmul_tma_kernel"]
    assert k["base"]["verdict"] == "race_free" and k["edited"]["verdict"] == "invalid_lifecycle"
    edit = [w for w in k["edited"]["witnesses"] if w.get("role") == "edit"]
    assert [(w["python_line"], w["ptx_line"]) for w in edit] == [(i + 1, 316)]
    assert f"edited at {edited}:{i + 1} (PTX line 316:2): mov.pred complete, 1;" in r.stdout


def test_a_finding_the_base_shares_is_told_by_the_exhaustive_race_count():
    from ptx2py.verify import race_report

    dup = {"result": "potential_race", "checks": {}, "races": [_race(("write", 0), ("write", 1), 2, 2)],
           "diagnostics": [{"code": "conflicting_accesses_unordered"}]}
    sites = [{"line": 4, "column": 2, "text": "x;", "was": "bar.sync 0;", "removed": True}]

    def said(counts):
        return race_report.read_result(dup, RACE_PTX, "k.ptx", None, edits=sites, race_counts=counts,
                                       threads_per_cta=128)["lines"]
    assert any("15872 racing access pairs in the base, 24000 in the edited kernel (+8128), which differs at: "
               "k.ptx:4:2" in x for x in said((15872, 24000)))
    assert any("15872 racing access pairs in both kernels" in x for x in said((15872, 15872)))
    assert any("says nothing about what the edit changed" in x for x in said((None, 24000)))
    assert all("new against the base" not in x for x in said((15872, 24000)))


def test_a_synchronisation_counterexample_names_its_ptx_line_and_the_edit():
    from ptx2py.verify import race_report

    ptx = ("\tmbarrier.init.shared::cta.b64 [%r1], 1;\n\tmov.pred p, 1;\n"
           "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1];\n")
    base = ptx.replace("mov.pred p, 1;", "mbarrier.try_wait.parity.shared::cta.b64 p, [%r1], %r2;")
    result = {"result": "not_wellsynced", "checks": {"synchronization": "failed"},
              "diagnostics": [{"code": "missing_successful_wait_handoff", "details": {"barrier": 1, "event": 1307},
                               "message": "next-phase arrival occurred before a successful prior-phase wait"}],
              "source_events": [{"event": 0, "file": "/tmp/a/kernel.ptx", "line": 1, "column": 2, "instruction": 0},
                                {"event": 1307, "file": "/tmp/a/kernel.ptx", "line": 3, "column": 2,
                                 "instruction": 239}]}
    r = race_report.read_result(result, ptx, "k.py", {2: 20, 3: 21}, edits=race_report.edit_sites(base, ptx))
    assert [(w.get("role"), w["ptx_line"], w["python_line"]) for w in r["witnesses"]] == [
        ("event", 3, 21), ("edit", 2, 20)]
    assert "    at k.py:21 (PTX line 3:2): tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 " \
           "[%r1];  (SentryWard event 1307)" in r["lines"]
    assert any(x.startswith("    edited at k.py:20 (PTX line 2:2): mov.pred p, 1;") for x in r["lines"])


def test_a_timeout_is_no_proof_and_says_how_to_shrink_further():
    from ptx2py.verify import race_report

    r = race_report.read_result({"result": "timeout", "checks": {"synchronization": "incomplete"},
                                 "diagnostics": [{"code": "time_budget"}]}, RACE_PTX, "k.ptx", None)
    assert not r["finding"] and not r["proved"]
    assert any("--races-size 16" in x for x in r["lines"])
