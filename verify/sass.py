"""Assemble a base PTX module and an edited one (PTX, or DSL Python) with ptxas and compare
what the hardware would get: per kernel registers, spills, stack, shared memory (`ptxas -v`)
and the SASS instruction mix (`cuobjdump -sass`, else `nvdisasm`).

    report = verify_files("k.ptx", "k_edited.py")
    print(format_report(report)); sys.exit(report["exit"])

Tools are searched in a fixed order and the report names the ones used:
ptxas: system `ptxas`, Triton's wheel (`triton/backends/nvidia/bin/ptxas`, `ptxas-blackwell`),
the `nvidia-cuda-nvcc` wheel; the first whose CUDA release supports the module's `.version`.
Disassembler: `cuobjdump` / `nvdisasm` on PATH, then Triton's wheel, then the
`nvidia-cuda-cuobjdump` / `nvidia-cuda-nvdisasm` wheels; without one, the comparison falls
back to `ptxas -v` figures and cubin bytes (the report says so).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


class VerifyError(Exception):
    """Input or tool problem (exit 2)."""


# --- tools ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tool:
    path: str
    release: tuple[int, int] | None  # CUDA release, from --version
    origin: str

    @property
    def max_ptx(self) -> tuple[int, int]:
        return ptx_isa_for_release(self.release)

    def describe(self) -> str:
        rel = f"CUDA {self.release[0]}.{self.release[1]}" if self.release else "unknown release"
        mx = self.max_ptx
        return f"{self.path} ({self.origin}, {rel}, PTX ISA <= {mx[0]}.{mx[1]})"


_PTX_12 = {0: (8, 0), 1: (8, 1), 2: (8, 2), 3: (8, 3), 4: (8, 4), 5: (8, 5), 6: (8, 5), 7: (8, 6), 8: (8, 7),
           9: (8, 8)}


def ptx_isa_for_release(release) -> tuple[int, int]:
    """Newest PTX ISA a CUDA release's ptxas accepts."""
    if release is None:
        return (0, 0)
    major, minor = release
    if major >= 13:
        return (9, minor)
    if major == 12:
        return _PTX_12.get(minor, (8, 8))
    if major == 11:
        return (7, min(minor, 8))
    return (6, 4)


def _release(path: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _site_dirs() -> list[Path]:
    import site
    import sys

    dirs = [Path(p) for p in sys.path if p.endswith("site-packages")]
    try:
        dirs += [Path(p) for p in site.getsitepackages()]
    except AttributeError:
        pass
    seen, out = set(), []
    for d in dirs:
        if d not in seen and d.is_dir():
            seen.add(d)
            out.append(d)
    return out


def _candidates(names: tuple[str, ...], wheel_dirs: tuple[str, ...]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for name in names:
        p = shutil.which(name)
        if p:
            found.append((p, "PATH"))
    for site in _site_dirs():
        for sub in ("triton/backends/nvidia/bin",):
            for name in names + tuple(n + "-blackwell" for n in names):
                p = site / sub / name
                if p.is_file() and os.access(p, os.X_OK):
                    found.append((str(p), "triton wheel"))
        for sub in wheel_dirs:
            for name in names:
                p = site / sub / name
                if p.is_file() and os.access(p, os.X_OK):
                    found.append((str(p), sub.split("/")[1] + " wheel"))
    out, seen = [], set()
    for p, origin in found:
        real = os.path.realpath(p)
        if real not in seen:
            seen.add(real)
            out.append((p, origin))
    return out


def find_ptxas_all() -> list[Tool]:
    return [Tool(p, _release(p), origin) for p, origin in
            _candidates(("ptxas",), ("nvidia/cuda_nvcc/bin", "nvidia/cu13/bin", "nvidia/cuda_nvcc/nvvm/bin"))]


def find_ptxas(version: tuple[int, int] | None) -> tuple[Tool | None, list[Tool]]:
    """The first ptxas (in search order) new enough for `version`, and all found."""
    tools = find_ptxas_all()
    for t in tools:
        if version is None or t.max_ptx >= version:
            return t, tools
    return None, tools


def find_disassembler() -> tuple[Tool | None, str]:
    """(tool, kind) with kind 'cuobjdump' or 'nvdisasm'; the newest release of each kind wins."""
    for name, wheel in (("cuobjdump", "nvidia/cuda_cuobjdump/bin"), ("nvdisasm", "nvidia/cuda_nvdisasm/bin")):
        tools = [Tool(p, _release(p), origin) for p, origin in _candidates((name,), (wheel,))
                 if not p.endswith("-blackwell")]
        if tools:
            tools.sort(key=lambda t: t.release or (0, 0), reverse=True)
            return tools[0], name
    return None, ""


# --- ptxas -v and SASS ----------------------------------------------------------------------

_PTXAS_ERR = re.compile(r"^ptxas\s+(?P<file>.+?), line (?P<line>\d+); (?P<kind>error|warning)\s*: (?P<msg>.*)$",
                        re.M)


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
            if b:
                current["barriers"] = int(b.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(s.group(1)) if s else 0
            current["cmem"] = {k: int(v) for v, k in re.findall(r"(\d+) bytes (cmem\[\d+\])", line)}
    return kernels


# `/*1050*/  @P0 WARPGROUP.DEPBAR.LE gsb0, 0x1 ;`: group 1 is the whole instruction (guard,
# opcode, operands) without its address and encoding; group 2 its opcode.
_SASS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+((?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)[^;]*?)\s*;")


def parse_sass(text: str) -> dict[str, list[str]]:
    """Kernel name -> SASS instructions (guard, opcode, operands) in order; cuobjdump or nvdisasm output."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line) or re.match(r"\s*\.text\.([\w$.]+):", line)
        if m:
            current = out.setdefault(m.group(1), [])
            continue
        if current is None:
            continue
        m = _SASS_LINE.search(line)
        if m:
            current.append(" ".join(m.group(1).split()))
    return out


@dataclass
class Assembly:
    ok: bool
    stderr: str
    kernels: dict
    sass: dict | None
    cubin_sha256: str | None
    errors: list[tuple[int, str]]


def assemble(ptx: str, gpu: str, ptxas: Tool, disasm: Tool | None, kind: str, name: str,
             relocatable: bool = False) -> Assembly:
    """ptxas (with -c for a module that calls functions defined elsewhere), then the disassembler."""
    with tempfile.TemporaryDirectory(prefix="ptx2py-verify-") as tmp:
        src = Path(tmp) / (name + ".ptx")
        src.write_text(ptx, newline="")
        cubin = Path(tmp) / (name + ".cubin")
        mode = ["-c"] if relocatable else []
        r = subprocess.run([ptxas.path, "-v", *mode, "--gpu-name", gpu, "-o", str(cubin), str(src)],
                           capture_output=True, text=True, timeout=600)
        errors = [(int(m.group("line")), m.group("msg").strip()) for m in _PTXAS_ERR.finditer(r.stderr)
                  if m.group("kind") == "error"]
        if r.returncode != 0 or not cubin.exists():
            if not errors:
                errors = [(0, line.strip()) for line in r.stderr.splitlines() if "error" in line or "fatal" in line]
            return Assembly(False, r.stderr, {}, None, None, errors)
        data = cubin.read_bytes()
        sass = None
        if disasm is not None:
            args = [disasm.path, "-sass", str(cubin)] if kind == "cuobjdump" else [disasm.path, "-c", str(cubin)]
            d = subprocess.run(args, capture_output=True, text=True, timeout=600)
            if d.returncode == 0:
                sass = parse_sass(d.stdout)
        return Assembly(True, r.stderr, parse_ptxas_info(r.stderr), sass, hashlib.sha256(data).hexdigest(), [])


# --- inputs ---------------------------------------------------------------------------------

def module_facts(ptx: str, filename: str):
    """(.version, .target list, whether it declares functions it does not define)."""
    import ptxgrammar

    from lint import module_targets, module_version

    module = ptxgrammar.parse(ptx, filename)
    extern = any(f.body is None and ".extern" in f.head.linkage for f in module.functions)
    return module_version(module), module_targets(module), extern


def gpu_name(targets) -> str:
    for t in targets:
        if re.fullmatch(r"sm_\d+[af]?", t):
            return t
    return "sm_80"


def load_edited(path: str) -> tuple[str, dict[int, int] | None]:
    """PTX text of the edited input and, for Python, a PTX line -> Python line map (or None)."""
    text = Path(path).read_text()
    if not path.endswith(".py"):
        return text, None
    import transpile

    mapped = getattr(transpile, "python_to_ptx_with_map", None)
    if mapped is not None:  # DSL hook: (ptx, {ptx_line: py_line})
        ptx, line_map = mapped(text, filename=path)
        return ptx, dict(line_map)
    return _python_to_ptx_traced(text, path)


def _python_to_ptx_traced(source: str, filename: str) -> tuple[str, dict[int, int] | None]:
    """Run the DSL while noting which Python line recorded each instruction; then the PTX line
    of each instruction (from the module the recorder finished) maps back to that Python line.
    Any mismatch with the recorder's internals gives no map rather than a wrong one."""
    import sys

    import transpile

    try:
        from transpile.dsl import recorder
        Recorder = recorder.Recorder
        original_record, original_finish = Recorder.record, Recorder.finish
    except (ImportError, AttributeError):
        return transpile.python_to_ptx(source, filename=filename), None
    lines: dict[int, tuple[object, int]] = {}
    finished: list = []

    def record(self, stmt, *args, **kwargs):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != filename:
            frame = frame.f_back
        if frame is not None:
            lines[id(stmt)] = (stmt, frame.f_lineno)
        return original_record(self, stmt, *args, **kwargs)

    def finish(self):
        module = original_finish(self)
        finished.append(module)
        return module

    Recorder.record, Recorder.finish = record, finish
    try:
        ptx = transpile.python_to_ptx(source, filename=filename)
    finally:
        Recorder.record, Recorder.finish = original_record, original_finish
    if not finished:
        return ptx, None
    from lint import instruction_positions

    line_map = {}
    for instr, line, _ in instruction_positions(finished[-1]):
        hit = lines.get(id(instr))
        if hit is not None and hit[0] is instr:
            line_map[line] = hit[1]
    return ptx, line_map or None


# --- comparison -----------------------------------------------------------------------------

def _mix(instructions: list[str]) -> Counter:
    """Opcode counts (without modifiers or guard)."""
    return Counter(i.split()[1 if i.startswith("@") else 0].split(".")[0] for i in instructions)


def _changed_instructions(base: list[str], edited: list[str], limit: int = 12) -> list[str]:
    """The SASS lines that differ, as `- old` / `+ new` (at most `limit`)."""
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, base, edited, autojunk=False).get_opcodes():
        if tag != "equal":
            out += [f"- {x}" for x in base[i1:i2]] + [f"+ {x}" for x in edited[j1:j2]]
    return out[:limit]


def compare(base: Assembly, edited: Assembly) -> dict:
    kernels = {}
    for name in sorted(set(base.kernels) | set(edited.kernels)):
        b, e = base.kernels.get(name), edited.kernels.get(name)
        entry: dict = {"base": b, "edited": e}
        if b and e:
            entry["changed"] = {k: [b[k], e[k]] for k in b if b[k] != e.get(k)}
        if base.sass is not None and edited.sass is not None:
            bs, es = base.sass.get(name, []), edited.sass.get(name, [])
            bm, em = _mix(bs), _mix(es)
            entry["sass"] = {"base_count": len(bs), "edited_count": len(es), "identical": bs == es,
                             "mix_diff": {op: em[op] - bm[op] for op in sorted(set(bm) | set(em)) if em[op] != bm[op]},
                             "changed": _changed_instructions(bs, es)}
        kernels[name] = entry
    same_figures = all(not k.get("changed") and k["base"] and k["edited"] for k in kernels.values())
    same_sass = None if base.sass is None or edited.sass is None else all(
        k["sass"]["identical"] for k in kernels.values())
    return {"kernels": kernels, "identical_figures": same_figures, "identical_sass": same_sass,
            "identical_cubin": base.cubin_sha256 == edited.cubin_sha256}


def verify_texts(base_ptx: str, edited_ptx: str, *, base_name="base.ptx", edited_name="edited.ptx",
                 line_map: dict[int, int] | None = None, edited_source: str | None = None) -> dict:
    base_version, base_targets, base_extern = module_facts(base_ptx, base_name)
    ed_version, ed_targets, ed_extern = module_facts(edited_ptx, edited_name)
    relocatable = base_extern or ed_extern     # both the same way, so the two compare
    need = max(v for v in (base_version, ed_version, (0, 0)) if v is not None)
    ptxas, all_ptxas = find_ptxas(need)
    report: dict = {"base": base_name, "edited": edited_source or edited_name,
                    "ptxas_found": [t.describe() for t in all_ptxas]}
    if ptxas is None:
        raise VerifyError(f"no ptxas supports PTX ISA {need[0]}.{need[1]}; found: "
                          + ("; ".join(report["ptxas_found"]) or "none"))
    disasm, kind = find_disassembler()
    gpu = gpu_name(base_targets or ed_targets)
    report.update(ptxas=ptxas.describe(), disassembler=disasm.describe() if disasm else None, gpu=gpu)
    if disasm is None:
        report["note"] = "no cuobjdump/nvdisasm found: compared ptxas -v figures and cubin bytes only"
    if relocatable:
        report["mode"] = "relocatable (ptxas -c): the module calls functions defined elsewhere"
    base = assemble(base_ptx, gpu, ptxas, disasm, kind, "base", relocatable)
    if not base.ok:
        raise VerifyError(f"{base_name}: the base module does not assemble:\n{base.stderr.strip()}")
    edited = assemble(edited_ptx, gpu, ptxas, disasm, kind, "edited", relocatable)
    if not edited.ok:
        where = edited_source or edited_name
        msgs = []
        for line, msg in edited.errors:
            if line and line_map and line in line_map:
                msgs.append(f"{where}:{line_map[line]}: error: {msg} (PTX line {line})")
            elif line:
                mapped = " (PTX line; no Python line map)" if edited_source and edited_source.endswith(".py") else ""
                msgs.append(f"{edited_name}:{line}: error: {msg}{mapped}")
            else:
                msgs.append(f"{where}: error: {msg}")
        report.update(ok=False, errors=msgs, exit=EXIT_FAIL)
        return report
    report.update(compare(base, edited), ok=True, exit=EXIT_OK)
    return report


def verify_files(base_path: str, edited_path: str) -> dict:
    from ptxgrammar import read_ptx

    base_ptx = read_ptx(base_path)
    edited_ptx, line_map = load_edited(edited_path)
    edited_name = edited_path if not edited_path.endswith(".py") else edited_path[:-3] + ".emitted.ptx"
    report = verify_texts(base_ptx, edited_ptx, base_name=base_path, edited_name=edited_name,
                          line_map=line_map, edited_source=edited_path)
    report["edited_ptx"] = edited_ptx if not report.get("ok") and edited_path.endswith(".py") else None
    return report


def format_report(report: dict) -> str:
    lines = [f"ptxas: {report['ptxas']}", f"disassembler: {report.get('disassembler') or 'none'}",
             f"gpu: {report['gpu']}"]
    if report.get("note"):
        lines.append(f"note: {report['note']}")
    if not report.get("ok"):
        lines += report.get("errors", [])
        lines.append(f"FAIL: {report['edited']} does not assemble")
        return "\n".join(lines)
    for name, k in report["kernels"].items():
        b, e = k["base"], k["edited"]
        if not b or not e:
            lines.append(f"{name}: only in {'edited' if e else 'base'}")
            continue
        fig = lambda d: (f"{d['registers']} regs, {d['spill_stores']}/{d['spill_loads']} B spill st/ld, "
                         f"{d['stack']} B stack, {d['smem']} B smem")
        if k.get("changed"):
            lines.append(f"{name}: {fig(b)} -> {fig(e)}")
        else:
            lines.append(f"{name}: {fig(b)} (unchanged)")
        s = k.get("sass")
        if s:
            if s["identical"]:
                lines.append(f"  SASS identical ({s['base_count']} instructions)")
            else:
                diff = ", ".join(f"{op} {d:+d}" for op, d in s["mix_diff"].items()) or "same mix, different order/operands"
                lines.append(f"  SASS {s['base_count']} -> {s['edited_count']} instructions: {diff}")
                lines += [f"    {line}" for line in s.get("changed", [])]
    verdict = ("identical SASS" if report["identical_sass"] else "SASS differs") if report["identical_sass"] is not None \
        else ("identical cubin" if report["identical_cubin"] else "cubin differs")
    lines.append(f"result: {verdict}; ptxas figures {'identical' if report['identical_figures'] else 'differ'}")
    return "\n".join(lines)
