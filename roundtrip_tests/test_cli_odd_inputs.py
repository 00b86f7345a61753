"""The command line on odd inputs and outputs, as a demanding user tries them: every input
gets a located error or its output, every output lands where it was asked to (a pipe, a
device, through a symlink) without replacing what is there, and nothing prints a traceback
or raw bytes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import pytest
from conftest import ROOT

from ptx2py import cli, outfile, ptxgrammar

GOOD = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"

PY2PTX = "import sys; from ptx2py import cli; sys.exit(cli.py2ptx_main())"

def run(*argv, stdin=None, timeout=120):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *argv], capture_output=True,
                          input=stdin, timeout=timeout)


# (name, file bytes, where the error is "line:col", what the message says)
ODD_BYTES = [
    ("elf", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "1:1", "binary file, not PTX text"),
    ("utf8_bom", b"\xef\xbb\xbf" + GOOD.encode(), "1:1", "byte order mark (BOM)"),
    ("utf16", "\ufeff.version 9.0\n".encode("utf-16-le"), "1:1", "UTF-16 file"),
    ("nul_in_text", GOOD.replace("ret;", "ret\x00;").encode(), "6:5", "control character '\\x00'"),
    ("control_before_non_ascii", b".version 9.0\n// \x01 caf\xc3\xa9\n", "2:4", "control character '\\x01'"),
    ("non_ascii_comment", b".version 9.0\n// caf\xc3\xa9\n", "2:7", "non-ASCII byte 0xc3"),
    ("long_line_error_at_its_end", (GOOD + ".global .u32 x[2] = {" + "1," * 20_000 + " @};\n").encode(),
     "8:40023", "unexpected '@'"),
]


@pytest.mark.parametrize("name, data, where, says", ODD_BYTES, ids=[c[0] for c in ODD_BYTES])
@pytest.mark.parametrize("how", ["file", "stdin", "lint", "check"])
def test_odd_bytes_are_a_located_error_shown_escaped(tmp_path, name, data, where, says, how):
    path = tmp_path / "odd.ptx"
    path.write_bytes(data)
    argv = {"file": [str(path), "-o", str(tmp_path / "out.py")], "stdin": ["-", "-o", str(tmp_path / "out.py")],
            "lint": ["lint", str(path)], "check": ["check", str(path)]}[how]
    proc = run(*argv, stdin=data if how == "stdin" else None)
    err = proc.stderr.decode("ascii")   # escaped: never a raw byte on the terminal
    shown = "<stdin>" if how == "stdin" else str(path)
    assert proc.returncode == (1 if how == "check" else 2), err
    assert f"{shown}:{where}: error: " in err and says in err, err
    assert "Traceback" not in err
    assert all(len(line) < 400 for line in err.splitlines()), "an excerpt, not the whole line"
    assert not (tmp_path / "out.py").exists()


def test_a_device_as_input_is_refused_not_read_forever():
    for argv in (["/dev/zero"], ["lint", "/dev/zero"]):
        proc = run(*argv, timeout=60)
        assert proc.returncode == 2 and b"/dev/zero: error: a device, not a file" in proc.stderr
    proc = subprocess.run([sys.executable, "-c", PY2PTX, "/dev/zero"],
                          capture_output=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and b"a device, not a file" in proc.stderr


def test_check_reports_a_device_as_a_failed_file():
    proc = run("check", "/dev/zero", timeout=60)
    assert proc.returncode == 1 and b"/dev/zero: FAIL at ptx: /dev/zero: error: a device" in proc.stderr


def test_an_unreadable_file_is_a_clean_error(tmp_path, monkeypatch, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(GOOD)
    real_open = open

    def no_permission(file, *a, **k):   # the tests may run as root, where chmod 000 does not stop a read
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(ptxgrammar.files, "open", no_permission, raising=False)   # where input bytes are read
    assert cli.ptx2py_main([str(path)]) == 2
    assert capsys.readouterr().err == f"{path}: error: Permission denied\n"


def test_python_with_a_bom_or_crlf_lines_builds_the_same_ptx(tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(GOOD)
    source = run(str(ptx)).stdout
    for name, data in (("bom.py", b"\xef\xbb\xbf" + source), ("crlf.py", source.replace(b"\n", b"\r\n"))):
        (tmp_path / name).write_bytes(data)
        proc = subprocess.run([sys.executable, "-c", "import sys; from ptx2py import cli; sys.exit(cli.py2ptx_main())",
                               str(tmp_path / name)], capture_output=True, cwd=ROOT)
        assert proc.returncode == 0 and proc.stdout == GOOD.encode(), proc.stderr



def test_py2ptx_given_a_ptx_file_says_so_and_names_the_command_that_reads_it(tmp_path):
    src, out = tmp_path / "k.ptx", tmp_path / "k.out.ptx"
    src.write_text("// a comment\n" + GOOD)
    line = next(i for i, x in enumerate(src.read_text().splitlines(), 1) if x.startswith(".version"))
    proc = subprocess.run([sys.executable, "-c", PY2PTX, str(src),
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "" and not out.exists()
    head, shown, caret = proc.stderr.splitlines()
    assert head.startswith(f"{src}:{line}:1: error: this input looks like PTX") and f"run `ptx2py {src}`" in head
    assert shown.startswith(".version") and caret == "^" and "Traceback" not in proc.stderr
    # Python that does not parse is still told as such
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    proc = subprocess.run([sys.executable, "-c", PY2PTX, str(bad)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and "invalid Python" in proc.stderr and "looks like PTX" not in proc.stderr

# --- outputs --------------------------------------------------------------------------

def test_an_output_into_a_pipe_is_written_in_place(tmp_path):
    src, fifo = tmp_path / "k.ptx", tmp_path / "out.fifo"
    src.write_text(GOOD)
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    proc = run(str(src), "-o", str(fifo))
    reader.join(60)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the pipe is still a pipe"
    assert got and got[0].startswith(b"from ptx2py.dsl import")


def test_a_device_output_is_never_renamed_over(monkeypatch):
    """`-o /dev/null` writes to the device; a rename over it (as root) would replace /dev/null."""
    def no_rename(*a):
        raise AssertionError("os.replace on a device")

    monkeypatch.setattr(outfile.os, "replace", no_rename)
    outfile.write_atomic(os.devnull, GOOD)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_an_output_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    src, target, link = tmp_path / "k.ptx", tmp_path / "real.py", tmp_path / "link.py"
    src.write_text(GOOD)
    target.write_text("old\n")
    link.symlink_to(target.name)
    proc = run(str(src), "-o", str(link))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and target.read_bytes().startswith(b"from ptx2py.dsl import")


def test_a_folder_as_output_is_a_clean_error(tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(GOOD)
    for argv in ([str(src), "-o", str(tmp_path)], ["check", str(src), "--json", str(tmp_path)]):
        proc = run(*argv)
        assert proc.returncode == 2 and f"{tmp_path}: error: is a folder".encode() in proc.stderr, proc.stderr
        assert b"Traceback" not in proc.stderr


def test_a_folder_as_input_is_a_clean_error(tmp_path):
    proc = run(str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.decode().startswith(f"{tmp_path}: error: ")
    assert b"Traceback" not in proc.stderr


def test_an_empty_output_name_is_a_clean_error(tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(GOOD)
    proc = run(str(src), "-o", "")
    assert proc.returncode == 2 and proc.stderr == b"error: the output file name is empty\n"


@pytest.mark.parametrize("command", ["check", "lint"])
def test_a_folder_without_ptx_files_is_named(tmp_path, command):
    proc = run(command, str(tmp_path))
    assert proc.returncode == 2 and proc.stderr == f"{tmp_path}: error: no .ptx files found\n".encode()
