"""One fault, a few lines: `ptx2py run` groups sanitizer reports by fault site (kind x the PTX
line the report blames), prints each site once with its witness and counts, and ends with a
one-line summary; --json keeps every report."""

from __future__ import annotations

import json

from gallery import BASE_PTX, matmul_launch

from ptx2py.cli import ptx2py_main
from ptx2py.emulate.errors import Report, group_reports, render_grouped


def _without_last_wait(tmp_path):
    lines = BASE_PTX.read_text().split("\n")
    waits = [i for i, line in enumerate(lines) if "wgmma.wait_group.sync.aligned 0" in line]
    del lines[waits[-1]]
    ptx, launch = tmp_path / "matmul.ptx", tmp_path / "launch.json"
    ptx.write_text("\n".join(lines))
    launch.write_text(json.dumps(matmul_launch(256, 256, 128)))
    return ptx, launch


def test_deleting_the_last_wgmma_wait_gives_a_few_lines_and_a_summary(tmp_path, capsys):
    ptx, launch = _without_last_wait(tmp_path)
    rep = tmp_path / "rep.json"
    assert ptx2py_main(["run", str(ptx), "--launch", str(launch), "--json", str(rep)]) == 1
    err = capsys.readouterr().err.strip().split("\n")
    saved = json.loads(rep.read_text())
    every = saved["reports"]
    assert len(every) > 30                              # every instance kept in JSON
    assert len(err) <= 12, err
    assert err[-1] == f"{len(every)} reports at {len(saved['sites'])} fault sites: 1 wgmma, 4 race"
    wgmma = [i for i, line in enumerate(err) if ": error: wgmma: " in line]
    assert len(wgmma) == 1                              # the early accumulator reads: one site
    assert "32 reports at 32 PTX places, 32 registers" in err[wgmma[0] + 1]


def test_reports_blaming_one_instruction_form_one_site_and_others_stay_apart():
    reports = [Report("wgmma", "read of %r1", "k.ptx:10:2", {"register": "%r1", "other": "k.ptx:5:2"}),
               Report("wgmma", "read of %r2", "k.ptx:11:2", {"register": "%r2", "other": "k.ptx:5:2"}),
               Report("oob", "read", "k.ptx:20:2", {"thread": "t0"}),
               Report("oob", "read", "k.ptx:20:2", {"thread": "t1"}),
               Report("race", "write", "k.ptx:20:2", {"other": "k.ptx:3:2"})]
    assert [len(g) for g in group_reports(reports)] == [2, 2, 1]
    lines = render_grouped(reports)
    assert lines[0] == "k.ptx:10:2: error: wgmma: read of %r1"
    assert lines[1] == "  ... the same fault: 2 reports at 2 PTX places, 2 registers"
    assert lines[3] == "  ... the same fault: 2 reports at 1 PTX place, 2 threads"
    assert lines[-1] == "5 reports at 3 fault sites: 1 wgmma, 1 oob, 1 race"
    assert render_grouped([]) == []
