"""The whole pipeline under fuzzing (roundtrip/pipeline.py): drawn trees of every
construct and mutated corpus files give the same bytes back through PTX -> Python ->
PTX (plain and --sugar) or a located error, never another exception. The long run
(>= 100,000 inputs) is scripts/fuzz_pipeline.py; a short one is marked slow here."""

from __future__ import annotations

import json
import random
from datetime import timedelta

import pytest
from conftest import CASES, ROOT, corpus_files, probe_files, sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import MUTATIONS, mutate
from strategies import any_modules

from ptx2py import ptxgrammar
from ptx2py.roundtrip.pipeline import outcome

SETTINGS = settings(max_examples=40, deadline=timedelta(seconds=60),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SEEDS = [ptxgrammar.read_ptx(p) for p in sample([f for f in corpus_files() if f.stat().st_size < 2500], 8)
         + sample([f for f in probe_files() if f.stat().st_size < 2500], 8)]

# Inputs the fuzzing found, kept as regressions: each must round-trip or be located.
FOUND = [
    # a register count spelled with leading zeros was written as a second register name
    ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b64 \t%rd<0001>;\n\tret;\n}\n",
    # a .loc split over lines took the fast path's scanner off the statement
    ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t.loc 1 2 3, function_name $L__info0"
    ",\n\tinlined_at 1 5 6\n\tret;\n}\n",
]


_K = ".version 9.0\n.target sm_80\n.address_size 64\n\n\t// .globl\tk\n.visible .entry k("
_BODY = "{\n\t.reg .b64 \t%rd<4>;\n\n\tld.param.u64 \t%rd1, [k_param_0];\n\tret;\n\n}\n"
# Finds of the run seeded beyond corpus/ (../shared/corpus-external, declaration mutations):
FOUND += [
    # a line break inside one of several like parameters: --sugar's `ptr * 3` shared one `.align`
    # node between them, so one parameter's trivia was every parameter's
    *(_K + "\n\t.param .u64 .ptr .align 1 k_param_0,\n\t.param .u64 .ptr" + brk + ".align 1 k_param_1,\n"
      "\t.param .u64 .ptr .align 1 k_param_2\n)\n" + _BODY for brk in (" \r\n ", "\r", "\n\t")),
    # a register type with `_` in it, or a Python keyword's: --sugar wrote regs(address_size_r=6),
    # regs(import__r=29), which the DSL refuses
    *(_K + ")\n{\n\t.reg .b32 %rd<6>;\n\t.reg " + t + " %r<6>;\n\tmov.u32 %r1, 1;\n\tret;\n}\n"
      for t in (".address_size", ".import", ".match", ".b32_r")),
    _K + ")\n{\n\t.reg .b32 %rd<6>;\n\t.reg .b32 %f<6>;\n\t.reg .match %fd<6>;\n\tret;\n}\n",
]


@pytest.mark.parametrize("text", FOUND)
def test_inputs_found_by_fuzzing(text):
    assert outcome(text) == ("identical", None)


# Larger finds of the long run, one file each (named for the bug they caught).
@pytest.mark.parametrize("path", sorted((CASES / "fuzz").glob("*.ptx")), ids=lambda p: p.stem)
def test_files_found_by_fuzzing(path):
    assert outcome(path.read_bytes().decode("latin-1"), path.name)[0] == "identical"


@pytest.mark.parametrize("text", [
    "\n.version 8.0\r\n  .target sm_90a , sm_80\r\n  .address_size 64",   # found by the drawn trees
    ".version 8.0\r\n\n  .target sm_90a\r\n.address_size 64\r\n",
    ".version 8.0\r\n.target sm_90a\r\n.address_size 64\r\n\n.global .u32 x;\r\n",
    # the statement after one led by a lone LF (seed 14): its lead key names the previous lead alike
    "\n.version 9.0\r\n.version 9.0\r\n.target sm_90\r\n",
    ".version 9.0\r\n\n  .version 9.0\r\n\n  .version 9.0\r\n.target sm_90\r\n",
    ".version 9.0\r\n.target sm_90\r\n.address_size\t// note 7\n\t64\n",
])
def test_a_lone_line_feed_in_a_crlf_module_round_trips(text):
    """An indent that starts with LF (not the module's newline) is not read as a blank line."""
    assert outcome(text) == ("identical", None)


def assert_sound(text):
    kind, detail = outcome(text)
    assert kind in ("identical", "located"), detail


@SETTINGS
@given(any_modules())
def test_drawn_trees_go_through_the_whole_pipeline(module):
    assert_sound(ptxgrammar.emit(module))


@settings(max_examples=80, deadline=timedelta(seconds=60),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(SEEDS), st.integers(0, 2**32))
def test_mutated_files_go_through_the_whole_pipeline(text, seed):
    assert_sound(mutate(text, random.Random(seed)))


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.__name__)
def test_every_mutation_changes_some_seed_and_stays_sound(mutation):
    rng = random.Random(7)
    changed = 0
    for text in SEEDS:
        out = mutation(text, rng)
        changed += out != text
        assert_sound(out)
    assert changed


@pytest.mark.slow
def test_a_short_long_run_finds_nothing(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fuzz_pipeline.py"), "--inputs", "2000",
                           "--jobs", "2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]


LONG_RUN = json.loads((CASES / "fuzz" / "long_run_finds.json").read_text())["cases"]


@pytest.mark.parametrize("case", LONG_RUN, ids=[f"{c['expect']}-{i}" for i, c in enumerate(LONG_RUN)])
def test_finds_of_the_long_run(case):
    assert outcome(case["input"])[0] == case["expect"]


def _fuzz_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fuzz_pipeline", ROOT / "scripts" / "fuzz_pipeline.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_long_run_mutates_files_beyond_corpus_and_any_folder_given(tmp_path):
    fuzz = _fuzz_script()
    (tmp_path / "mine.ptx").write_text(".version 9.0\n.target sm_90\n")
    files = fuzz.seed_files(2500, [tmp_path])
    assert tmp_path / "mine.ptx" in files
    external = ROOT.parent / "shared" / "corpus-external"
    assert (external.is_dir() and any(external.rglob("*.ptx"))) <= any(p.is_relative_to(external) for p in files)
    with pytest.raises(SystemExit) as e:
        fuzz.main(["--seeds", str(tmp_path / "absent"), "--inputs", "1"])
    assert e.value.code == 2


@pytest.mark.parametrize("mutation", ["declaration_type", "family_name", "break_inside_statement"])
def test_declaration_mutations_change_what_they_say(mutation):
    import mutations

    text = (".visible .entry k(\n\t.param .u64 .ptr .align 1 k_param_0\n)\n"
            "{\n\t.reg .b32 \t%r<3>;\n\tmov.u32 \t%r1, %r2;\n}\n")
    out = getattr(mutations, mutation)(text, random.Random(3))
    assert out != text
    if mutation == "family_name":   # the declaration and every use, alike
        new = out.split("\t", 3)[-1]
        assert "%r<" not in out and "%r1" not in out and "%r2" not in out, new
    if mutation == "break_inside_statement":
        assert out.replace("\r", "").count("\n") > text.count("\n") or "\r" in out
