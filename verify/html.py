"""The verify report as one self-contained HTML page: the summary, per kernel figures and
instruction mix as tables, the meaningful SASS changes, and the side-by-side aligned SASS diff."""

from __future__ import annotations

from html import escape

from .report import verdict

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.2em}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}
table.sass td{font-family:ui-monospace,monospace;font-size:12px;border:none;white-space:pre}
tr.changed td{background:#fff3bf} tr.deleted td.b{background:#ffd8d8} tr.inserted td.e{background:#d3f9d8}
tr.moved td{background:#e7f5ff} tr.renamed td{color:#777}
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


def _sass_side_by_side(rows: list[dict]) -> str:
    out = ['<table class="sass"><thead><tr><th>#</th><th>base</th><th>#</th><th>edited</th></tr></thead><tbody>']
    for r in rows:
        b = "" if r["base"] is None else r["base"]
        e = "" if r["edited"] is None else r["edited"]
        out.append(f'<tr class="{r["tag"]}"><td>{b}</td><td class="b">{escape(r["base_text"])}</td>'
                   f'<td>{e}</td><td class="e">{escape(r["edited_text"])}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


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
        parts.append("<h3>SASS, side by side</h3>" + _sass_side_by_side(s["rows"]))
    parts.append("</section>")
    return "".join(parts)


def render_html(report: dict) -> str:
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
    body += [_kernel(name, k) for name, k in (report.get("kernels") or {}).items()]
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ptx2py verify</title>"
            f"<style>{_STYLE}</style></head><body>" + "".join(body) + "</body></html>\n")


def write_html(report: dict, path) -> None:
    from ptx2py.outfile import write_atomic

    write_atomic(str(path), render_html(report))     # whole or nothing, like every other output
