"""The verify report as one self-contained HTML page: the summary, per kernel figures and
instruction mix as tables, the meaningful SASS changes, and the linked SASS | PTX | Python views
(verify/views.py)."""

from __future__ import annotations

from html import escape

from .report import verdict
from .views import SCRIPT, STYLE, linked_views

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.2em}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}
table.sass td{border:none;white-space:pre}
tr.changed td.n,tr.deleted td.n,tr.inserted td.n{background:#ffd43b} tr.moved td.n{background:#74c0fc}
tr.renamed td{color:#777} tr.changed td.s[data-side=edited]{box-shadow:inset 3px 0 #f08c00}
pre{background:#f6f6f6;padding:.6em}
"""
_FIGURES = (("registers", "registers"), ("spill_stores", "spill stores (B)"), ("spill_loads", "spill loads (B)"),
            ("stack", "stack (B)"), ("smem", "static shared memory (B)"), ("barriers", "barriers"))


def _table(cls: str, header: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _list(title: str, items: list[str]) -> str:
    if not items:
        return ""
    return f"<h3>{escape(title)}</h3><pre>" + escape("\n".join(items)) + "</pre>"


def _kernel(name: str, k: dict) -> str:
    parts = [f'<section class="kernel" id="{escape(name)}"><h2>{escape(name)}</h2>']
    b, e = k.get("base") or {}, k.get("edited") or {}
    parts.append(_table("figures", ["ptxas -v", "base", "edited"],
                        [[label, b.get(key, ""), e.get(key, "")] for key, label in _FIGURES]))
    s = k.get("sass")
    if s:
        parts.append(_table("mix", ["opcode family", "base", "edited"],
                            [[f, v[0], v[1]] for f, v in s["family_mix"].items()]))
        parts.append(_table("changes", ["kind", "base #", "edited #", "instruction"],
                            [["changed", c["base"], c["edited"], c["line"]] for c in s["changed"]]
                            + [["moved", m["base"], m["edited"], m["text"]] for m in s["moved"]]
                            + [["renamed only", "", "", f"{s['renamed']} instructions"]]))
    parts.append("</section>")
    return "".join(parts)


def render_html(report: dict, sources: dict | None = None) -> str:
    """The page; `sources` (base_ptx, edited_ptx, python, python_name, line_map) adds the PTX
    and Python panes beside the SASS."""
    summary = [["result", verdict(report).removeprefix("result: ")], ["base", report.get("base")],
               ["edited", report.get("edited")],
               ["ptxas", report.get("ptxas")], ["disassembler", report.get("disassembler") or "none"],
               ["gpu", report.get("gpu")]]
    races = (report.get("races") or {}).get("kernels") or {}
    for name, k in races.items():
        summary += [[f"races {name} ({side})", k[side].get("verdict")] for side in ("base", "edited")]
    run = report.get("run") or {}
    if run.get("message"):
        summary.append(["GPU run", run["message"]])
    body = [f"<h1>ptx2py verify: {escape(str(report.get('edited')))}</h1>",
            _table("summary", ["", "summary"], summary),
            _list("ptxas diagnostics that differ from the base",
                  [f"{d['change']}: {d['located']}" for d in report.get("diagnostics") or []]),
            _list("errors", report.get("errors", [])), _list("lint", report.get("lint", [])),
            _list("ptxas warnings", report.get("warnings", []))]
    for name, k in races.items():
        body += [_list(f"races {name} ({side})", k[side].get("lines", [])) for side in ("base", "edited")]
    if run.get("kernels"):
        rows = run["kernels"]
        keys = sorted({k for r in rows for k in r})
        body.append("<h3>GPU run</h3>" + _table("run", keys, [[r.get(k, "") for k in keys] for r in rows]))
    kernels = report.get("kernels") or {}
    body += [_kernel(name, k) for name, k in kernels.items()]
    compared = {name: k["sass"] for name, k in kernels.items() if k.get("sass")}
    if compared:
        body.append("<h2>SASS, PTX and Python, linked</h2>" + linked_views(compared, sources))
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ptx2py verify</title>"
            f"<style>{_STYLE}{STYLE}</style></head><body>" + "".join(body)
            + f"<script>{SCRIPT}</script></body></html>\n")


def page_sources(base: str, edited: str, edited_ptx: str | None, line_map: dict | None) -> dict | None:
    """What the page shows beside the SASS: both PTX texts and, for Python input, the Python with
    py2ptx's map from PTX line to Python line (None without the edited PTX: SASS alone)."""
    if edited_ptx is None:
        return None
    from pathlib import Path

    from ptx2py.ptxgrammar import read_ptx

    python = Path(edited).read_text() if edited.endswith(".py") else None
    return {"base_ptx": read_ptx(base), "edited_ptx": edited_ptx, "python": python, "python_name": edited,
            "line_map": line_map if python else None}


def write_html(report: dict, path, sources: dict | None = None) -> None:
    from ptx2py.outfile import write_atomic

    write_atomic(str(path), render_html(report, sources))     # whole or nothing, like every other output
