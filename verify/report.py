"""Assemble a base PTX module and an edited one (PTX, or DSL Python) with ptxas and compare what
the hardware would get: per kernel `ptxas -v` figures (registers, spills, stack, shared memory,
barriers) and the SASS (`cuobjdump -sass`, else `nvdisasm`), diffed so that changed instructions
come first (verify/sass.py).

    report = verify_files("k.ptx", "k_edited.py")
    print(format_report(report)); sys.exit(report["exit"])

Python input goes through py2ptx's checked mode first (instruction rules, located at the Python
line); ptxas diagnostics are mapped back to the input (verify/locate.py). Tools: verify/tools.py.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ptx2py.transpile.traced import python_to_ptx_traced  # noqa: F401 (verify.report.python_to_ptx_traced)

from .diagnostics import advisories, diagnostic_lines, differing
from .lineinfo import annotate, ptx_lines, where
from .locate import Source, located_diagnostics
from .sass import SIGNIFICANCE, SassInstr, compare_kernel, parse_sass_listing
from .tools import Tool, ToolError, find_disassembler, find_nvdisasm, require_ptxas

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


class VerifyError(Exception):
    """Input or tool problem (exit 2)."""


# --- ptxas -v -----------------------------------------------------------------------------------

_FIGURES = ("registers", "spill_stores", "spill_loads", "stack", "smem", "barriers")


def parse_ptxas_info(stderr: str) -> dict[str, dict]:
    """Per kernel figures from `ptxas -v`."""
    kernels: dict[str, dict] = {}
    current = None
    for line in stderr.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?([\w$.]+)'?", line)
        if m:
            current = kernels.setdefault(m.group(1), {"registers": None, "stack": 0, "spill_stores": 0,
                                                      "spill_loads": 0, "smem": 0, "cmem": {}, "barriers": 0})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            current["barriers"] = int(b.group(1)) if b else 0
            s = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(s.group(1)) if s else 0
            current["cmem"] = {k: int(v) for v, k in re.findall(r"(\d+) bytes (cmem\[\d+\])", line)}
    return kernels


# --- assembling ---------------------------------------------------------------------------------

@dataclass
class Assembly:
    ok: bool
    stderr: str
    kernels: dict
    sass: dict[str, list[SassInstr]] | None
    cubin_sha256: str | None
    errors: list[str]
    warnings: list[str]
    advisories: list = ()     # warnings and `info` advisories, unlocated (verify/diagnostics.py)
    lines: dict | None = None  # kernel -> {SASS address: (PTX line, opcode)} (verify/lineinfo.py)


def assemble(ptx: str, gpu: str, ptxas: Tool, disasm: Tool | None, kind: str, source: Source,
             relocatable: bool = False) -> Assembly:
    """ptxas (with -c for a module that calls functions defined elsewhere), then the disassembler;
    diagnostics located in `source`."""
    with tempfile.TemporaryDirectory(prefix="ptx2py-verify-") as tmp:
        src = Path(tmp) / "module.ptx"
        src.write_text(ptx, newline="")
        cubin = Path(tmp) / "module.cubin"
        mode = ["-c"] if relocatable else []
        r = subprocess.run([ptxas.path, "-v", *mode, "--gpu-name", gpu, "-o", str(cubin), str(src)],
                           capture_output=True, text=True, timeout=600)
        stderr = r.stderr.replace(str(src), source.name)
        errors, warnings = located_diagnostics(r.stderr, source, ptx)
        if r.returncode != 0 or not cubin.exists():
            if not errors:
                errors = [f"{source.name}: error: {line.strip()}" for line in stderr.splitlines() if line.strip()]
            return Assembly(False, stderr, {}, None, None, errors, warnings)
        data = cubin.read_bytes()
        sass = None
        if disasm is not None:
            args = [disasm.path, "-sass", str(cubin)] if kind == "cuobjdump" else [disasm.path, "-c", str(cubin)]
            d = subprocess.run(args, capture_output=True, text=True, timeout=600)
            if d.returncode == 0:
                sass = parse_sass_listing(d.stdout)
        lines = ptx_lines(ptx, gpu, ptxas, find_nvdisasm(), relocatable) if sass is not None else {}
        return Assembly(True, stderr, parse_ptxas_info(r.stderr), sass, hashlib.sha256(data).hexdigest(), [], warnings,
                        advisories(r.stderr), lines)


# --- inputs -------------------------------------------------------------------------------------

def module_facts(ptx: str, filename: str):
    """(.version, .target list, whether it declares functions it does not define)."""
    from ptx2py import ptxgrammar
    from ptx2py.lint import module_targets, module_version

    module = ptxgrammar.parse(ptx, filename)
    extern = any(f.body is None and ".extern" in f.head.linkage for f in module.functions)
    return module_version(module), module_targets(module), extern


def gpu_name(targets) -> str:
    for t in targets:
        if re.fullmatch(r"sm_\d+[af]?", t):
            return t
    return "sm_80"


def load_edited(path: str) -> tuple[str, Source, list[str]]:
    """(PTX text, the Source to locate diagnostics in, lint findings). Python runs through
    py2ptx's checked mode first; a rule violation is a finding at its Python line, and the PTX
    then comes from the unchecked run so that ptxas still gets to speak."""
    text = Path(path).read_text()
    if not path.endswith(".py"):
        from ptx2py.lint import lint_text

        findings = [str(v) for v in lint_text(text, path)]
        return text, Source(path, text), findings
    from ptx2py.transpile.dsl import DSLError

    try:
        ptx, line_map = python_to_ptx_traced(text, path, check=True)
        return ptx, Source(path, text, line_map, True), []
    except DSLError as e:
        finding = _located_finding(e, text)
    ptx, line_map = python_to_ptx_traced(text, path, check=False)   # a DSLError here is bad input
    return ptx, Source(path, text, line_map, True), [finding]


def _located_finding(err, text: str) -> str:
    """A checked-mode finding as `file:line:col: error: message`, the line and a caret."""
    line = getattr(err, "line", None)
    if not line:
        return str(err)
    lines = text.splitlines()
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    col = getattr(err, "col", None) or len(src) - len(src.lstrip()) + 1
    return f"{err.filename}:{line}:{col}: error: {err.message}\n{src}\n{' ' * (col - 1)}^"


def compare(base: Assembly, edited: Assembly, line_map: dict | None = None) -> dict:
    kernels = {}
    for name in sorted(set(base.kernels) | set(edited.kernels)):
        b, e = base.kernels.get(name), edited.kernels.get(name)
        entry: dict = {"base": b, "edited": e}
        if b and e:
            entry["changed"] = {k: [b[k], e[k]] for k in b if b[k] != e.get(k)}
        if base.sass is not None and edited.sass is not None:
            b_sass, e_sass = base.sass.get(name, []), edited.sass.get(name, [])
            entry["sass"] = compare_kernel(b_sass, e_sass)
            annotate(entry["sass"], b_sass, e_sass, (base.lines or {}).get(name, {}),
                     (edited.lines or {}).get(name, {}), line_map)
        kernels[name] = entry
    same_figures = all(not k.get("changed") and k["base"] and k["edited"] for k in kernels.values())
    sass_known = base.sass is not None and edited.sass is not None
    return {"kernels": kernels, "identical_figures": same_figures,
            "identical_sass": all(k["sass"]["identical"] for k in kernels.values()) if sass_known else None,
            "equivalent_sass": all(k["sass"]["equivalent"] for k in kernels.values()) if sass_known else None,
            "identical_cubin": base.cubin_sha256 == edited.cubin_sha256}


def verify_texts(base_ptx: str, edited_ptx: str, *, base_name="base.ptx", edited_name="edited.ptx",
                 edited_source: Source | None = None, lint_findings: list[str] | None = None,
                 ptxas_path: str | None = None) -> dict:
    """The report for two PTX texts (edited_source: what the edited PTX came from)."""
    source = edited_source or Source(edited_name, edited_ptx)
    base_version, base_targets, base_extern = module_facts(base_ptx, base_name)
    ed_version, ed_targets, ed_extern = module_facts(edited_ptx, source.name)
    relocatable = base_extern or ed_extern     # both the same way, so the two compare
    need = max(v for v in (base_version, ed_version, (0, 0)) if v is not None)
    try:
        ptxas, all_ptxas = require_ptxas(need, ptxas_path)
    except ToolError as e:
        raise VerifyError(str(e)) from None
    disasm, kind = find_disassembler()
    gpu = gpu_name(base_targets or ed_targets)
    report: dict = {"base": base_name, "edited": source.name, "ptxas_found": [t.describe() for t in all_ptxas],
                    "ptxas": ptxas.describe(), "disassembler": disasm.describe() if disasm else None, "gpu": gpu,
                    "lint": list(lint_findings or [])}
    if disasm is None:
        report["note"] = ("no cuobjdump/nvdisasm found: compared ptxas -v figures and cubin bytes only "
                          "(pip install 'ptx2py[cuda-tools]')")
    if relocatable:
        report["mode"] = "relocatable (ptxas -c): the module calls functions defined elsewhere"
    base = assemble(base_ptx, gpu, ptxas, disasm, kind, Source(base_name, base_ptx), relocatable)
    if not base.ok:
        raise VerifyError(f"{base_name}: the base module does not assemble:\n" + "\n".join(base.errors))
    edited = assemble(edited_ptx, gpu, ptxas, disasm, kind, source, relocatable)
    report["warnings"] = edited.warnings
    if not edited.ok:
        report.update(ok=False, errors=edited.errors, exit=EXIT_FAIL)
        return report
    report["diagnostics"] = differing(base.advisories, edited.advisories, Source(base_name, base_ptx), source,
                                      base_ptx, edited_ptx)
    new = any(d["change"] == "new" for d in report["diagnostics"])   # a new advisory is a finding
    report.update(compare(base, edited, source.line_map if source.is_python else None), ok=True,
                  exit=EXIT_FAIL if report["lint"] or new else EXIT_OK)
    return report


def verify_files(base_path: str, edited_path: str, ptxas_path: str | None = None) -> dict:
    from ptx2py.ptxgrammar import read_ptx

    base_ptx = read_ptx(base_path)
    edited_ptx, source, findings = load_edited(edited_path)
    report = verify_texts(base_ptx, edited_ptx, base_name=base_path, edited_source=source,
                          lint_findings=findings, ptxas_path=ptxas_path)
    report["edited_ptx"], report["line_map"] = edited_ptx, source.line_map
    return report


# --- text ---------------------------------------------------------------------------------------

def _figures(d: dict) -> str:
    return (f"{d['registers']} regs, {d['spill_stores']}/{d['spill_loads']} B spill st/ld, {d['stack']} B stack, "
            f"{d['smem']} B static smem, {d['barriers']} barriers")


def verdict(report: dict) -> str:
    if not report.get("ok"):
        return f"FAIL: {report['edited']} does not assemble"
    if report["identical_sass"] is None:
        sass = "identical cubin" if report["identical_cubin"] else "cubin differs (no disassembler)"
    elif report["identical_sass"]:
        sass = "identical SASS"
    elif report["equivalent_sass"]:
        sass = "SASS equivalent (register names only)"
    else:
        sass = "SASS differs"
    figures = "identical" if report["identical_figures"] else "differ"
    diags = report.get("diagnostics") or []
    new = sum(d["change"] == "new" for d in diags)
    said = f"; ptxas diagnostics differ ({new} new, {len(diags) - new} gone)" if diags else ""
    lint = f"; {len(report['lint'])} lint findings" if report["lint"] else ""
    return f"result: both assemble; {sass}; ptxas figures {figures}{said}{lint}"


def sass_lines(s: dict, context: int | None, full: bool, limit: int = 40, edited: str = "edited",
               python: bool = False) -> list[str]:
    """The meaningful changes first (changed, moved, rename count), then the aligned diff when
    asked for (--context N: N rows around each change; --full: every row)."""
    from .sass import Row, context_lines

    if s["identical"]:
        return [f"  SASS identical ({s['base_count']} instructions)"]
    out = [f"  SASS {s['base_count']} -> {s['edited_count']} instructions: {len(s['changed'])} changed, "
           f"{len(s['moved'])} moved, {s['renamed']} differ only in register names"]
    everything = full or context is not None
    shown = s["changed"] if everything else s["changed"][:limit]
    moved = s["moved"] if everything else s["moved"][:limit]
    # changes and moves together, by what they touch (sass.SIGNIFICANCE), a change before a move
    ranked = sorted([(c, 0, "changed: ") for c in shown] + [(m, 1, "moved:   ") for m in moved],
                    key=lambda t: (SIGNIFICANCE[t[0].get("family", "other")], t[1]))
    out += [f"    {kind}{c['line']}{where(c, edited, python)}" for c, _, kind in ranked]
    if len(shown) < len(s["changed"]):
        out.append(f"    ... {len(s['changed']) - len(shown)} more changes (--full, --context N, --json)")
    if s["mix_diff"]:
        out.append("  mix: " + ", ".join(f"{op} {d:+d}" for op, d in s["mix_diff"].items()))
    if full or context is not None:
        rows = [Row(**r) for r in s["rows"]]
        out.append("  aligned diff (base# edited# mark text; ~ renamed, < moved away, > moved here):")
        out += ["    " + line for line in context_lines(rows, -1 if full else context)]
    return out


def format_report(report: dict, context: int | None = None, full: bool = False) -> str:
    """The summary: the meaningful SASS changes first, then tools and figures per kernel."""
    diags = report.get("diagnostics") or []
    lines = diagnostic_lines(diags)           # what ptxas says differently, before anything else
    lines += report.get("lint", [])           # py2ptx's checked mode runs first
    if not report.get("ok"):
        lines += report.get("errors", [])
    shown = {d["located"] for d in diags}
    lines += [w for w in report.get("warnings", []) if w not in shown]
    if report.get("ok"):
        for name, k in report["kernels"].items():
            if k.get("sass") and not k["sass"]["identical"]:
                lines.append(f"{name}:")
                lines += sass_lines(k["sass"], context, full, edited=report["edited"],
                                    python=str(report["edited"]).endswith(".py"))
    lines.append(verdict(report))
    lines += [f"ptxas: {report['ptxas']}", f"disassembler: {report.get('disassembler') or 'none'}",
              f"gpu: {report['gpu']}"]
    lines += [f"note: {report[k]}" for k in ("note", "mode") if report.get(k)]
    for name, k in (report.get("kernels") or {}).items():
        b, e = k["base"], k["edited"]
        if not b or not e:
            lines.append(f"{name}: only in {'edited' if e else 'base'}")
            continue
        lines.append(f"{name}: {_figures(b)}" + (f" -> {_figures(e)}" if k.get("changed") else " (unchanged)"))
        if k.get("sass"):
            fam = k["sass"]["family_mix"]
            lines.append("  mix: " + ", ".join(f"{f} {v[0]}" + (f"->{v[1]}" if v[0] != v[1] else "")
                                                 for f, v in fam.items()))
            if k["sass"]["identical"]:
                lines.append(f"  SASS identical ({k['sass']['base_count']} instructions)")
    return "\n".join(lines)
