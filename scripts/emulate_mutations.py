#!/usr/bin/env python3
"""Synchronisation mutation test on the CPU engine: for each kernel, delete one `bar.sync` /
`barrier.sync`, or one `cp.async.wait_group` / `wait_all`, or weaken one `shfl.sync` member
mask to its low half, one at a time; run the mutant at the same reduced launch with the same
seeded inputs; it is *caught* when its outputs differ from the unmutated kernel's or it gets a
sanitizer report (or the run deadlocks/refuses). The unmutated kernels must run clean.

Kernels: the 15 IR problems compiled for sm_80 and sm_90a (test sizes), and the corpus kernels
with sidecars for sm_80/sm_89 that run clean (scripts/emulate_corpus.py).

    python scripts/emulate_mutations.py [--no-corpus] [--no-ir] [--json out.json]
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ptxgrammar  # noqa: E402
from ptxgrammar.tree import Block, Function, Instruction, IntLiteral  # noqa: E402

from emulate import EmulationError, run  # noqa: E402
from emulate.operands import constant  # noqa: E402
from emulate.corpus_check import small_launch  # noqa: E402


def sync_sites(module, kernel=None):
    """(path to the instruction, mutation kind) for every synchronisation instruction of the
    launched kernel (and of the device functions of the module, which it may call)."""
    out = []

    def visit(items, path):
        for i, item in enumerate(items):
            if isinstance(item, Block):
                visit(item.items, path + (i,))
            elif isinstance(item, Instruction):
                name = item.name
                if item.opcode in ("bar", "barrier") and ".sync" in item.modifiers:
                    out.append((path + (i,), "delete " + name))
                elif item.opcode == "cp" and (".wait_group" in item.modifiers or ".wait_all" in item.modifiers):
                    out.append((path + (i,), "delete " + name))
                elif item.opcode == "shfl" and ".sync" in item.modifiers:
                    mask = constant(item.operands[-1])      # 0xffffffff, or Triton's -1
                    if mask is not None and mask & 0xFFFFFFFF == 0xFFFFFFFF:
                        out.append((path + (i,), "weaken mask of " + name))
    for fi, fn in enumerate(module.items):
        if isinstance(fn, Function) and fn.body is not None and (
                kernel is None or fn.name == kernel or fn.head.kind != ".entry"):
            visit(fn.body.items, (fi,))
    return out


def mutate(module, path, kind):
    def edit_block(block, rest):
        items = list(block.items)
        i = rest[0]
        if len(rest) > 1:
            items[i] = edit_block(items[i], rest[1:])
        elif kind.startswith("delete"):
            del items[i]
        else:
            instr = items[i]
            mask = IntLiteral("0x0000ffff", trivia=instr.operands[-1].trivia)
            items[i] = instr.with_changes(operands=instr.operands[:-1] + (mask,))
        return block.with_changes(items=tuple(items))

    items = list(module.items)
    fn = items[path[0]]
    items[path[0]] = fn.with_changes(body=edit_block(fn.body, path[1:]))
    return module.with_changes(items=tuple(items))


def outcome(module, launch, inputs, filename, executed=None):
    try:
        r = run(module, launch, inputs, filename=filename, max_steps=300_000)
    except EmulationError as e:
        return None, [str(e)]
    if executed is not None:
        executed |= r.executed
    return r.outputs, [x.render() for x in r.reports]


def instruction_at(module, path):
    node = module.items[path[0]].body
    for i in path[1:]:
        node = node.items[i]
    return node


def same(a, b):
    return a is not None and b is not None and all(np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8)) for k in a)


def ir_kernels():
    from kernelir.run_cpu import ir_launch
    from kernelir import PROBLEM_NAMES, compile_kernel, load_problem, make_inputs

    for name in PROBLEM_NAMES:
        kernel, meta = load_problem(name)
        params = {**meta["params"], **meta["test_params"]}
        launch, inputs = ir_launch(kernel, params, make_inputs(name, params))
        for target in ("sm_80", "sm_90a"):
            yield f"ir:{name}.{target}", compile_kernel(kernel, target), launch, inputs


def corpus_kernels(sweep_json):
    from launch.plan import kernel_specs

    results = json.loads(Path(sweep_json).read_text())
    for r in results:
        if r["status"] != "pass":
            continue
        side = ROOT / "corpus" / "launch" / Path(r["ptx"]).relative_to("corpus/ptx").with_suffix(".json")
        spec = next(s for s in kernel_specs(json.loads(side.read_text())) if s["kernel"] == r["kernel"])
        yield f"{r['ptx']}::{r['kernel']}", (ROOT / r["ptx"]).read_text(), small_launch(spec, 2), None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-ir", action="store_true")
    ap.add_argument("--corpus-sweep", help="the --json of scripts/emulate_corpus.py (corpus kernels that pass)")
    ap.add_argument("--skip", default="", help="comma-separated substrings of kernels to leave out")
    ap.add_argument("--skip-file", help="a file of comma-separated kernel labels to leave out (done before)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    sources = [] if args.no_ir else list(ir_kernels())
    skip = [s for s in args.skip.split(",") if s]
    if args.corpus_sweep:
        sources += list(corpus_kernels(args.corpus_sweep))
    if args.skip_file:
        skip += [s for s in Path(args.skip_file).read_text().split(",") if s]
    sources = [s for s in sources if not any(k in s[0] for k in skip)]
    tally = collections.Counter()
    rows = []
    kernels_with_sites = 0
    for label, text, launch, inputs in sources:
        module = ptxgrammar.parse(text, filename=label)
        kernel = launch["kernel"]
        sites = sync_sites(module, kernel)
        if not sites:
            continue
        ran = set()
        base_out, base_reports = outcome(module, launch, inputs, label, ran)
        if base_out is None or base_reports:
            rows.append({"kernel": label, "base": "not clean", "why": base_reports[:1]})
            tally["base not clean"] += 1
            continue
        kernels_with_sites += 1
        for path, kind in sites:
            if id(instruction_at(module, path)) not in ran:    # never runs at this size: unobservable
                tally["not executed"] += 1
                rows.append({"kernel": label, "mutation": kind, "site": list(path), "how": "not executed"})
                continue
            out, reports = outcome(mutate(module, path, kind), launch, inputs, label)
            caught = bool(reports) or not same(base_out, out)
            how = "report" if reports else "output" if caught else "missed"
            tally[how] += 1
            rows.append({"kernel": label, "mutation": kind, "site": list(path), "caught": caught, "how": how,
                         "why": reports[:1]})
            print(f"{how:7} {label} {kind} at {list(path)} {reports[0][:160] if reports else ''}", flush=True)
        del kernel
    return summarize(kernels_with_sites, tally, rows, args.json)


def summarize(kernels: int, tally, rows: list, json_path: str | None) -> int:
    """The closing line of a mutation run (caught by a report / by outputs, missed, never run) and its JSON."""
    n = tally["report"] + tally["output"] + tally["missed"]
    print(f"\n{kernels} kernels, {n} mutants: caught {tally['report'] + tally['output']} "
          f"({tally['report']} by a report, {tally['output']} by different outputs), missed {tally['missed']}; "
          f"{tally['not executed']} more sites never run at this size; "
          f"unmutated kernels not clean: {tally['base not clean']}")
    if json_path:
        Path(json_path).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
