"""`ptx2py check --junit-xml F`: the XML a standard JUnit reader (junitparser) reads: a test case per
file and stage, the located error as the failure's message, each stage's time."""

from __future__ import annotations

import json
import re

import pytest
from conftest import corpus_files, sample, small

from ptx2py import cli
from ptx2py.roundtrip.check import _not_identical
from ptx2py.roundtrip.junit import junit_xml

junitparser = pytest.importorskip("junitparser")   # in the test extra


def _cases(xml_path):
    report = junitparser.JUnitXml.fromfile(str(xml_path))
    suites = list(report) if isinstance(report, junitparser.JUnitXml) else [report]
    return report, [(suite, case) for suite in suites for case in suite]


def _outcome(case):
    kinds = [type(r).__name__ for r in case.result]
    return kinds[0] if kinds else "passed"


def test_a_corpus_check_with_one_broken_file_names_that_file_stage_and_line(tmp_path, capsys):
    files = sample(small(corpus_files()), 5)
    for i, f in enumerate(files):
        (tmp_path / "corpus" / f.parent.name).mkdir(parents=True, exist_ok=True)
        (tmp_path / "corpus" / f.parent.name / f"{i}_{f.name}").write_bytes(f.read_bytes())
    lines = files[0].read_text().split("\n")
    broken_line = next(n for n, text in enumerate(lines, 1) if text.lstrip().startswith(".target"))
    lines[broken_line - 1] = ".target sm_90 %%%"        # not PTX: the parser stops here
    broken = tmp_path / "corpus" / "broken.ptx"
    broken.write_text("\n".join(lines))
    out = tmp_path / "report.xml"

    assert cli.ptx2py_main(["check", str(tmp_path / "corpus"), "--jobs", "1", "--junit-xml", str(out)]) == 1
    capsys.readouterr()
    report, cases = _cases(out)

    assert len(cases) == 2 * (len(files) + 1)            # one per file and stage (ptx, python)
    assert {(c.classname, c.name) for _, c in cases} == {
        (str(p), stage) for p in [broken, *tmp_path.glob("corpus/*/*.ptx")] for stage in ("ptx", "python")}
    failed = [c for _, c in cases if _outcome(c) == "Failure"]
    assert [(c.classname, c.name) for c in failed] == [(str(broken), "ptx")]
    message = failed[0].result[0].message
    assert re.match(rf"{re.escape(str(broken))}:{broken_line}:\d+: error: ", message), message
    skipped = [(c.classname, c.name) for _, c in cases if _outcome(c) == "Skipped"]
    assert skipped == [(str(broken), "python")]           # not run after the failed stage
    assert all(_outcome(c) == "passed" for _, c in cases if c.classname != str(broken))
    assert all(c.time >= 0 for _, c in cases) and sum(c.time for _, c in cases) > 0
    assert (report.tests, report.failures, report.errors, report.skipped) == (len(cases), 1, 0, 1)
    suites = {s.name for s, _ in cases}                   # one suite per folder, as the summary
    assert suites == {str(broken.parent), *(str(p.parent) for p in tmp_path.glob("corpus/*/*.ptx"))}


def test_json_and_junit_together_and_the_json_has_no_times(tmp_path, capsys):
    (tmp_path / "k.ptx").write_text(".version 9.0\n.target sm_90\n.entry k() {\n\tret;\n}\n")
    xml, js = tmp_path / "r.xml", tmp_path / "r.json"
    assert cli.ptx2py_main(["check", str(tmp_path / "k.ptx"), "--sugar", "--junit-xml", str(xml),
                            "--json", str(js)]) == 0
    _, cases = _cases(xml)
    assert [c.name for _, c in cases] == ["ptx", "python", "sugar"]
    assert "seconds" not in json.loads(js.read_text())["files"][0]


def test_a_crash_is_an_error_and_a_difference_is_located(tmp_path):
    row = {"file": "k.ptx", "folder": ".", "ok": False, "ptx": True, "python": False, "sugar": None,
           "stage": "python", "error": "KeyError: 'x'", "crashed": True, "seconds": {"ptx": 0.5, "python": 0.25}}
    (tmp_path / "r.xml").write_text(junit_xml([row], ("ptx", "python"), 1.0))
    report, cases = _cases(tmp_path / "r.xml")
    assert {c.name: _outcome(c) for _, c in cases} == {"ptx": "passed", "python": "Error"}
    assert cases[0][0].time == pytest.approx(0.75) and report.time == pytest.approx(1.0)
    # the first character that differs: line 2, column 3
    assert _not_identical("k.ptx", "ab\ncde\n", "ab\ncdX\n", "parse -> emit").startswith("k.ptx:2:3: error: ")
    assert _not_identical("k.ptx", "ab\n", "ab\nmore", "parse -> emit").startswith("k.ptx:2:1: error: ")


def test_the_pre_commit_hooks_run_on_the_changed_ptx_files(tmp_path):
    """Each hook of .pre-commit-hooks.yaml, run as pre-commit runs it: its entry, then file names."""
    import shlex
    import subprocess
    import sys

    from conftest import ROOT

    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    entries = [shlex.split(e.split("#")[0]) for e in re.findall(r"^  entry: (.+)$", text, re.M)]
    assert [e[:2] for e in entries] == [["ptx2py", "check"], ["ptx2py", "lint"]]
    assert re.findall(r"^  files: (.+)$", text, re.M) == [r"\.ptx$"] * 2
    good, bad = tmp_path / "good.ptx", tmp_path / "bad.ptx"
    good.write_text(".version 9.0\n.target sm_90\n.entry k() {\n\tret;\n}\n")
    bad.write_text(".version 9.0\n.target sm_90\n.entry k() {\n\tmov.u32 %r1, 10u;\n}\n")
    for entry in entries:
        command = [sys.executable, str(ROOT / "cli.py"), *entry[1:]]
        assert subprocess.run([*command, str(good)], capture_output=True).returncode == 0
        proc = subprocess.run([*command, str(good), str(bad)], capture_output=True, text=True)
        assert proc.returncode in (1, 2) and f"{bad}:4:15: error: " in proc.stderr, (entry, proc.stderr)
