"""`ptx2py check --junit-xml F`: the check's results as JUnit XML, the format CI systems and their
dashboards read (Jenkins, GitLab, GitHub Actions reporters, Azure Pipelines).

One `<testsuite>` per reported folder (the rows of the summary), one `<testcase>` per file and
stage: `classname` the file, `name` the stage (`ptx`: parse -> emit, `python`: PTX -> Python -> PTX,
`sugar`: the same with --sugar), `time` its seconds. A stage that fails has a `<failure>` whose
message is the located error (`file:line:col: error: ...`), a crash an `<error>`; a stage not run
because an earlier one failed is `<skipped>`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from xml.etree import ElementTree as ET

WHAT = {"ptx": "parse -> emit", "python": "PTX -> Python -> PTX", "sugar": "PTX -> Python --sugar -> PTX"}


def junit_xml(results: list[dict], stages: tuple[str, ...], seconds: float) -> str:
    """The XML text of `results` (check_file records, each with its `folder` and `seconds`) for the
    asked-for `stages`; `seconds`: the whole run's wall time."""
    root = ET.Element("testsuites", name="ptx2py check")
    stamp = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    by_folder: dict[str, list[dict]] = {}
    for r in results:
        by_folder.setdefault(r["folder"], []).append(r)
    for folder, rows in by_folder.items():
        suite = ET.SubElement(root, "testsuite", name=folder, timestamp=stamp)
        for r in rows:
            for stage in stages:
                _testcase(suite, r, stage)
        _count(suite, suite.findall("testcase"))
        suite.set("time", _seconds(sum(r["seconds"].get(s, 0.0) for r in rows for s in stages)))
    _count(root, root.findall("testsuite/testcase"))
    root.set("time", _seconds(seconds))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(suite: ET.Element, r: dict, stage: str) -> None:
    case = ET.SubElement(suite, "testcase", classname=r["file"], name=stage, file=r["file"],
                         time=_seconds(r["seconds"].get(stage, 0.0)))
    if r[stage] is False:
        kind = "error" if r.get("crashed") else "failure"
        ET.SubElement(case, kind, message=r["error"], type=f"{stage}: {WHAT[stage]}").text = r["error"]
    elif r[stage] is None:
        ET.SubElement(case, "skipped", message=f"not run: the {r['stage']} stage failed")


def _count(element: ET.Element, cases: list[ET.Element]) -> None:
    element.set("tests", str(len(cases)))
    for kind, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attr, str(sum(c.find(kind) is not None for c in cases)))


def _seconds(value: float) -> str:
    return f"{value:.3f}"
