"""Defects 7, 9 and 12: outputs are safe, the help and errors read like a compiler
tool's, one exit-code scheme, and `check --jobs/--shard`."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from conftest import CORPUS, ROOT, corpus_files, sample

from ptx2py import cli

GOOD = ".version 9.0\n.target sm_90\n.entry k() {\n\tret;\n}\n"
PROBLEM = ROOT / "kernelir" / "problems" / "array_sum.json"


def run(*argv, stdin=None):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *argv], capture_output=True, text=True,
                          input=stdin)


def run_py2ptx(*argv):
    return subprocess.run([sys.executable, "-c", "import sys; from ptx2py import cli; sys.exit(cli.py2ptx_main())",
                           *argv],
                          capture_output=True, text=True, cwd=ROOT)


# --- defect 7: outputs ----------------------------------------------------------------

def test_an_output_in_a_missing_folder_is_a_clean_error(tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(GOOD)
    proc = run(str(src), "-o", str(tmp_path / "nodir" / "k.py"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "no such folder" in proc.stderr
    assert proc.stderr.startswith(f"{tmp_path / 'nodir' / 'k.py'}: error: ")


def test_py2ptx_into_a_missing_folder_is_a_clean_error(tmp_path):
    py = tmp_path / "k.py"
    src = tmp_path / "k.ptx"
    src.write_text(GOOD)
    assert cli.ptx2py_main([str(src), "-o", str(py)]) == 0
    proc = run_py2ptx(str(py), "-o", str(tmp_path / "nodir" / "k.ptx"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "no such folder" in proc.stderr


def test_the_output_never_replaces_the_input(tmp_path):
    src = tmp_path / "same.ptx"
    src.write_text(GOOD)
    proc = run(str(src), "-o", str(src))
    assert proc.returncode == 2 and "overwrite the input" in proc.stderr
    assert src.read_text() == GOOD


def test_outputs_get_ordinary_permissions(tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(GOOD)
    old = os.umask(0o022)
    try:
        assert cli.ptx2py_main([str(src), "-o", str(tmp_path / "k.py")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "k.py").st_mode) == 0o644


def test_compile_ir_errors_do_not_name_its_temp_file(tmp_path):
    proc = run("compile-ir", str(PROBLEM), "-o", str(tmp_path / "nodir" / "k.ptx"))
    assert proc.returncode == 2
    assert ".tmp" not in proc.stderr and "ptx2py-" not in proc.stderr and "Traceback" not in proc.stderr


# --- defect 9: help --------------------------------------------------------------------

def test_top_level_help_names_every_subcommand_and_shows_examples():
    proc = run("--help")
    assert proc.returncode == 0
    usage = proc.stdout.split("\n\n")[0]
    for name in cli.SUBCOMMANDS:
        assert name in usage
    assert "examples:" in proc.stdout and "exit codes" in proc.stdout


@pytest.mark.parametrize("name", ["check", "lint", "verify", "compile-ir"])
def test_every_subcommand_help_has_an_example_and_help_for_each_argument(name):
    proc = run(name, "--help")
    assert proc.returncode == 0
    assert f"example:\n  ptx2py {name}" in proc.stdout
    args = proc.stdout.split("positional arguments:")[1].split("options:")[0]
    for line in args.strip().splitlines():
        assert len(line.split()) > 1, f"argument without help: {line!r}"


def test_version():
    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("ptx2py ")


def test_a_mistyped_command_is_named_with_a_suggestion():
    proc = run("chek", "foo")
    assert proc.returncode == 2
    assert "unknown command 'chek' — did you mean 'check'?" in proc.stderr


def test_compile_ir_description_is_not_its_usage_line():
    proc = run("compile-ir", "--help")
    description = proc.stdout.split("\n\n")[1]
    assert not description.startswith("`ptx2py")


@pytest.mark.parametrize("target, says", [("banana", "not a GPU target name"), ("sm_70", "older than sm_80")])
def test_a_bad_target_says_what_is_wrong(target, says):
    proc = run("compile-ir", str(PROBLEM), "--target", target)
    assert proc.returncode == 2 and says in proc.stderr


# --- defect 8: exit codes ---------------------------------------------------------------

def test_exit_codes_follow_one_scheme(tmp_path):
    good, bad = tmp_path / "good.ptx", tmp_path / "bad.ptx"
    good.write_text(GOOD)
    bad.write_text(GOOD.replace("ret;", "ret"))
    assert run("check", str(good)).returncode == 0
    assert run("check", str(bad)).returncode == 1          # a finding
    assert run(str(bad)).returncode == 2                   # bad input
    assert run("check", str(tmp_path / "none")).returncode == 2  # a path that does not exist
    assert run("check").returncode == 2                    # usage
    assert run("--bogus").returncode == 2
    assert run_py2ptx(str(tmp_path / "missing.py")).returncode == 2


# --- defect 12: check --jobs and --shard ------------------------------------------------

def test_check_in_parallel_gives_the_same_results_as_in_one_process(tmp_path, capsys):
    files = sample(corpus_files(), 24)
    for i, f in enumerate(files):
        (tmp_path / f"{i:02d}_{f.name}").write_bytes(f.read_bytes())
    serial, parallel = tmp_path / "one.json", tmp_path / "two.json"
    assert cli.ptx2py_main(["check", str(tmp_path), "--no-python", "--jobs", "1", "--json", str(serial)]) == 0
    one = capsys.readouterr().out
    assert cli.ptx2py_main(["check", str(tmp_path), "--no-python", "--jobs", "2", "--json", str(parallel)]) == 0
    assert capsys.readouterr().out == one
    assert serial.read_text() == parallel.read_text()


def test_shards_split_the_files_without_overlap(tmp_path, capsys):
    for i in range(7):
        (tmp_path / f"k{i}.ptx").write_text(GOOD)
    seen = []
    for i in (1, 2, 3):
        out = tmp_path / f"s{i}.json"
        assert cli.ptx2py_main(["check", str(tmp_path), "--shard", f"{i}/3", "--jobs", "1", "--json", str(out)]) == 0
        import json
        seen += [r["file"] for r in json.loads(out.read_text())["files"]]
    assert sorted(seen) == sorted(str(p) for p in tmp_path.glob("k*.ptx"))


@pytest.mark.parametrize("value", ["0/3", "4/3", "x", "1/0"])
def test_a_bad_shard_is_a_usage_error(value):
    proc = run("check", str(CORPUS), "--shard", value)
    assert proc.returncode == 2 and "shard" in proc.stderr

