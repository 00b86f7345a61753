"""Which types ptxas accepts for each special register, per PTX version: the data behind lint's
special-register operand check (ptxgrammar/isa/special_register_widths.json).

    python scripts/probe_special_registers.py            # ask ptxas, rewrite the JSON
    python scripts/probe_special_registers.py --check    # ask ptxas, compare with the JSON (exit 1 on change)

The PTX ISA gives each register one type (%gridid is .u64), but ptxas takes other widths too
(`mov.u32 %r, %gridid;`, which nvcc and clang write). One module per (PTX version, target) holds every
register x type as a line of its own, for three uses: `mov.T d, sreg`, `add.T d, sreg, 1` (an operand
of arithmetic) and `cvt.u64.T d, sreg` (a conversion's source); the lines ptxas blames are the
refused ones. A register ptxas refuses at every type of a version is not recorded for it (it does
not exist there, or not on that target).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT / "ptxgrammar" / "isa" / "special_register_widths.json"  # read by lint/special_widths.py

REGISTERS = (
    [f"%{n}.{c}" for n in ("tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid",
                           "cluster_nctaid") for c in "xyz"]
    + "%laneid %warpid %nwarpid %smid %nsmid %gridid %lanemask_eq %lanemask_le %lanemask_lt %lanemask_ge"
      " %lanemask_gt %clock %clock_hi %clock64 %globaltimer %globaltimer_lo %globaltimer_hi %pm0 %pm7 %pm0_64"
      " %pm7_64 %envreg0 %envreg31 %cluster_ctarank %cluster_nctarank %is_explicit_cluster %dynamic_smem_size"
      " %total_smem_size %aggr_smem_size %reserved_smem_offset_begin %reserved_smem_offset_end"
      " %reserved_smem_offset_cap %reserved_smem_offset_0 %reserved_smem_offset_1 %current_graph_exec".split()
)
# (use, types, instruction template); {d} is a destination register of the template's result type
_INTS = ".u8 .s8 .u16 .s16 .u32 .s32 .u64 .s64".split()
USES = {
    "mov": (".pred .b16 .u16 .s16 .b32 .u32 .s32 .f32 .b64 .u64 .s64 .f64".split(), "mov{t} {d}, {s};"),
    "add": (".u16 .s16 .u32 .s32 .u64 .s64 .f32 .f64".split(), "add{t} {d}, {s}, {s};"),
    **{f"cvt.{d}": (_INTS, f"cvt{'.rn' if d[0] == 'f' else ''}.{d}{{t}} {{dd}}, {{s}};")
       for d in ("u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64")},
}
DEST = {"pred": "%p0", "16": "%h0", "32": "%r0", "64": "%rd0", "f32": "%f0", "f64": "%fd0"}
# PTX versions and the target each is asked for (the newest the version knows, so no register is
# refused for its target alone)
VERSIONS = (("7.0", "sm_80"), ("7.8", "sm_90"), ("8.0", "sm_90a"), ("8.3", "sm_90a"), ("8.6", "sm_100a"),
            ("8.8", "sm_100a"), ("9.0", "sm_100a"))
HEAD = (".version {v}\n.target {t}\n.address_size 64\n.visible .entry k()\n{{\n"
        ".reg .pred %p<2>; .reg .b16 %h<2>; .reg .b32 %r<2>; .reg .b64 %rd<2>; .reg .f32 %f<2>;"
        " .reg .f64 %fd<2>;\n")


def _dest(t: str) -> str:
    t = t.lstrip(".")
    if t in DEST:
        return DEST[t]
    return DEST.get(re.sub(r"\D", "", t), "%h0")


def module(version: str, target: str) -> tuple[str, dict[int, tuple[str, str, str]]]:
    lines, where = [], {}
    first = HEAD.format(v=version, t=target).count("\n") + 1
    for reg in REGISTERS:
        for use, (types, template) in USES.items():
            for t in types:
                where[first + len(lines)] = (reg, use, t)
                lines.append(template.format(t=t, d=_dest(t), dd=_dest(use.split(".")[-1]), s=reg))
    return HEAD.format(v=version, t=target) + "\n".join(lines) + "\nret;\n}\n", where


def probe(ptxas: str) -> dict:
    out: dict = {"ptxas": None, "versions": {}}
    from ptx2py.lint.differential import ptxas_version

    out["ptxas"] = ptxas_version(ptxas)
    for version, target in VERSIONS:
        text, where = module(version, target)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sreg.ptx")
            Path(path).write_text(text)
            r = subprocess.run([ptxas, "-O0", "-arch", target, path, "-o", os.path.join(tmp, "o")],
                               capture_output=True, text=True)
        refused = {int(n) for n in re.findall(r"line (\d+); error", r.stdout + r.stderr)}
        if r.returncode != 0 and not refused:
            raise SystemExit(f"ptxas failed without naming a line for {version}/{target}:\n{r.stderr[-2000:]}")
        accepted: dict = {}
        for line, (reg, use, t) in where.items():
            if line not in refused:
                accepted.setdefault(reg, {}).setdefault(use, []).append(t.lstrip("."))
        out["versions"][version] = {"target": target, "registers": accepted}
    return out


def compact(found: dict) -> dict:
    """{register: [[first PTX version, {use: [types]}], ...]}: a row where the accepted types change."""
    table: dict = {}
    for version, _ in VERSIONS:
        for reg in REGISTERS:
            uses = found["versions"][version]["registers"].get(reg, {})
            rows = table.setdefault(reg, [])
            if (rows[-1][1] if rows else {}) != uses:
                rows.append([version, uses])
    return {"ptxas": found["ptxas"], "targets": dict(VERSIONS), "uses": sorted(USES), "registers": table}


def main() -> int:
    from ptx2py.lint.differential import default_ptxas

    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxas")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    found = compact(probe(args.ptxas or default_ptxas()))
    text = json.dumps(found, sort_keys=True).replace('"], "', '"],\n "').replace("]]], ", "]]],\n") + "\n"
    if args.check:
        old = json.loads(DATA.read_text())
        same = old["registers"] == found["registers"]
        print("special-register widths: " + ("as recorded" if same else "ptxas differs from the recorded table"))
        return 0 if same else 1
    DATA.write_text(text)
    print(f"{DATA}: {len(REGISTERS)} registers x {len(VERSIONS)} versions (ptxas {found['ptxas']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
