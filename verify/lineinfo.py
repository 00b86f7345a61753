"""Which PTX line each SASS instruction came from, through ptxas's own line info.

The module is assembled a second time with `-lineinfo` after its `.loc` directives are replaced
by ones that point at the PTX itself (`.file 1 "<ptx>"`, `.loc 1 <line> 1` before each
instruction line, `<line>` the line in the text the user's PTX has); `nvdisasm --print-line-info`
then names, for each SASS address, the PTX line ptxas compiled it from. Line info does not change
the code ptxas emits, so the addresses are the ones of the listing being compared (checked: an
address without an instruction of the same opcode gives no line).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from .tools import Tool

_LOC = re.compile(r"^\s*\.loc\b")
_FILE = re.compile(r"^\s*\.file\b")
_SASS_AT = re.compile(r"/\*([0-9a-f]{4,})\*/\s+((?:@!?U?P\w+\s+)?[A-Z][A-Z0-9_.]*)")
_LINE_INFO = re.compile(r'//## File "([^"]*)", line (\d+)')
_FUNCTION = re.compile(r"^\.text\.([\w$.]+):")
SELF = "ptx2py-ptx-lines"     # the file name the located copy's `.loc`s point at


def _is_instruction(line: str) -> bool:
    """A line holding an instruction: it ends its statement with `;` and is no directive."""
    code = line.split("//")[0].strip()
    return code.endswith(";") and not code.startswith((".", "{", "}")) and not code.endswith(":")


def self_located(ptx: str) -> str | None:
    """The PTX with line info pointing at its own lines (None: nothing to locate)."""
    out, located, has_file = [], False, False
    for number, line in enumerate(ptx.split("\n"), 1):
        if _LOC.match(line):
            continue
        if _FILE.match(line):   # debug sections name file 1: keep it, under the PTX's name
            if not has_file:
                out.append(f'\t.file\t1 "{SELF}"')
                has_file = True
            continue
        if _is_instruction(line):
            out.append(f"\t.loc\t1 {number} 1")
            located = True
        out.append(line)
    if not located:
        return None
    if not has_file:
        at = next((k + 1 for k, x in enumerate(out) if x.strip().startswith(".address_size")),
                  next((k + 1 for k, x in enumerate(out) if x.strip().startswith(".target")), 0))
        out.insert(at, f'\t.file\t1 "{SELF}"')
    return "\n".join(out)


def parse_line_info(listing: str) -> dict[str, dict[int, tuple[int, str]]]:
    """Kernel -> {SASS address: (PTX line, opcode)} from `nvdisasm --print-line-info -c`."""
    out: dict[str, dict[int, tuple[int, str]]] = {}
    kernel, line = None, None
    for text in listing.splitlines():
        m = _FUNCTION.match(text.strip())
        if m:
            kernel, line = m.group(1), None
            out.setdefault(kernel, {})
            continue
        m = _LINE_INFO.search(text)
        if m:
            line = int(m.group(2)) if m.group(1).endswith(SELF) else None
            continue
        m = _SASS_AT.search(text)
        if m and kernel is not None and line is not None:
            opcode = m.group(2).split()[-1]
            out[kernel][int(m.group(1), 16)] = (line, opcode)
    return out


def ptx_lines(ptx: str, gpu: str, ptxas: Tool, nvdisasm: Tool | None, relocatable: bool = False) -> dict:
    """Kernel -> {SASS address: (PTX line, opcode)}; {} where a tool is missing or refuses."""
    located = self_located(ptx)
    if nvdisasm is None or located is None:
        return {}
    with tempfile.TemporaryDirectory(prefix="ptx2py-lineinfo-") as tmp:
        src, cubin = Path(tmp) / f"{SELF}.ptx", Path(tmp) / "module.cubin"
        src.write_text(located, newline="")
        mode = ["-c"] if relocatable else []
        r = subprocess.run([ptxas.path, "-lineinfo", *mode, "--gpu-name", gpu, "-o", str(cubin), str(src)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or not cubin.exists():
            return {}
        d = subprocess.run([nvdisasm.path, "--print-line-info", "-c", str(cubin)], capture_output=True, text=True,
                           timeout=600)
    return parse_line_info(d.stdout) if d.returncode == 0 else {}


def line_of(lines: dict, instr) -> int | None:
    """The PTX line of a SassInstr of this kernel (None when the address holds another opcode)."""
    got = lines.get(instr.address)
    return got[0] if got is not None and instr.opcode.startswith(got[1].split(".")[0]) else None


def annotate(sass: dict, base: list, edited: list, base_lines: dict, edited_lines: dict,
             line_map: dict | None) -> None:
    """Give each changed and moved entry of a kernel's comparison the PTX lines it came from
    (`base_ptx_line`, `ptx_line`: the edited side's) and, for Python input, its `python_line`;
    `located` gives every instruction of each side as [address, PTX line or None] (the HTML
    page's links from each SASS line to its PTX and Python lines)."""
    sass["located"] = {"base": [[i.address, line_of(base_lines, i)] for i in base],
                       "edited": [[i.address, line_of(edited_lines, i)] for i in edited]}
    for c in sass["changed"] + sass["moved"]:
        b, e = c.get("base"), c.get("edited")
        c["base_ptx_line"] = line_of(base_lines, base[b]) if b is not None and b < len(base) else None
        c["ptx_line"] = line_of(edited_lines, edited[e]) if e is not None and e < len(edited) else None
        c["python_line"] = (line_map or {}).get(c["ptx_line"]) if c["ptx_line"] else None


def where(c: dict, edited_name: str, python: bool) -> str:
    """`  (PTX line 380, k.py:182)`, `  (base PTX line 428)`, or "" when ptxas named no line."""
    parts = []
    if c.get("ptx_line"):
        parts.append(f"PTX line {c['ptx_line']}")
        if python and c.get("python_line"):
            parts.append(f"{edited_name}:{c['python_line']}")
    elif c.get("base_ptx_line"):
        parts.append(f"base PTX line {c['base_ptx_line']}")
    return f"  ({', '.join(parts)})" if parts else ""
