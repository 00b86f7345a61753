"""The command line: check, transpile, errors that leave nothing behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, corpus_files, sample

from ptx2py import cli

GOOD = ".version 9.0\n.target sm_90\n.entry k() {\n\tret;\n}\n"
BAD = ".version 9.0\n.target sm_90\n.entry k() {\n\tmov.u32 %r1, 10u;\n}\n"


def test_check_folder_reports_per_folder_and_writes_json(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "good.ptx").write_text(GOOD)
    (tmp_path / "a" / "crlf.ptx").write_bytes(GOOD.replace("\n", "\r\n").encode())
    out = tmp_path / "results.json"
    assert cli.ptx2py_main(["check", str(tmp_path), "--json", str(out), "--no-python"]) == 0
    printed = capsys.readouterr().out
    assert f"{tmp_path / 'a'}: 2/2 ok" in printed
    data = json.loads(out.read_text())
    assert sorted(r["ok"] for r in data["files"]) == [True, True]


def test_check_fails_on_a_bad_file(tmp_path, capsys):
    (tmp_path / "bad.ptx").write_text(BAD)
    (tmp_path / "good.ptx").write_text(GOOD)
    assert cli.ptx2py_main(["check", str(tmp_path), "--no-python"]) == 1
    err = capsys.readouterr().err
    assert "bad.ptx:4:15: error:" in err


def test_transpile_error_is_located_and_writes_nothing(tmp_path):
    src = tmp_path / "bad.ptx"
    src.write_text(BAD)
    out = tmp_path / "out.py"
    proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), str(src), "-o", str(out)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"{src}:4:15: error: ")
    assert lines[1] == " mov.u32 %r1, 10u;" and lines[2].endswith("^")
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_existing_output_is_not_clobbered_on_error(tmp_path):
    src = tmp_path / "bad.ptx"
    src.write_text(BAD)
    out = tmp_path / "out.py"
    out.write_text("keep me\n")
    assert cli.ptx2py_main([str(src), "-o", str(out)]) == 2
    assert out.read_text() == "keep me\n"
    assert {p.name for p in tmp_path.iterdir()} == {"bad.ptx", "out.py"}   # no temp file left


def crlf_file(tmp: Path) -> Path:
    path = tmp / "crlf.ptx"
    path.write_bytes(b".version 9.0\r\n.target sm_90\r\n.entry k()\r\n{\r\n\tret;\r\n}")
    return path


@pytest.mark.parametrize("path", sample(corpus_files(), 4) + [None], ids=lambda p: p.name if p else "crlf")
def test_ptx2py_then_py2ptx_gives_the_same_bytes(path, tmp_path):
    path = path or crlf_file(tmp_path)
    py = tmp_path / "k.py"
    ptx = tmp_path / "k.ptx"
    assert cli.ptx2py_main([str(path), "-o", str(py)]) == 0
    assert cli.py2ptx_main([str(py), "-o", str(ptx)]) == 0
    assert ptx.read_bytes() == path.read_bytes()


def test_missing_file_is_an_error_without_traceback(tmp_path, capsys):
    assert cli.ptx2py_main([str(tmp_path / "nope.ptx")]) == 2
    assert "error" in capsys.readouterr().err
