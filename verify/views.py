"""The three linked views of one kernel on the verify page: SASS (base | edited, aligned, the
runs of equal rows folded), PTX (base and edited) and Python (for Python input), side by side.

As Compiler Explorer colours source against assembly, each SASS line takes the colour of the PTX
line ptxas compiled it from (verify/lineinfo.py: `located`), and the Python line that PTX line
came from (py2ptx's source map) takes the same colour. Hovering a line marks the lines linked to
it in the other panes; a click marks them, unfolds the SASS rows holding them and scrolls each
pane to them. Everything is inline (no network) and every text is escaped.
"""

from __future__ import annotations

from html import escape

PALETTE = 10          # colours cycle by PTX line number: neighbouring lines always differ
FOLD_CONTEXT = 3      # equal rows kept visible next to a change
FOLD_MIN = 4          # a shorter equal run is shown, not folded
_QUIET = ("equal", "renamed")   # rows that differ in nothing, or in register names only

STYLE = """
.views{display:grid;grid-template-columns:minmax(0,1.3fr) minmax(0,1fr) minmax(0,1fr);gap:8px;margin:.5em 0 1.5em}
.views.two{grid-template-columns:minmax(0,1.3fr) minmax(0,1fr)} .views.solo{grid-template-columns:minmax(0,1fr)}
.pane h4{margin:.2em 0} .pane button{font-size:11px;margin-left:4px}
.pane button[aria-pressed=true]{font-weight:bold}
.scroll{max-height:70vh;overflow:auto;border:1px solid #ccc;font-family:ui-monospace,monospace;font-size:12px}
.scroll .l{white-space:pre;tab-size:4;cursor:pointer} .scroll .l .n,.sass td.n{color:#999;padding-right:6px}
table.sass td.s{cursor:pointer} tr.fold-bar td{background:#eee;color:#555;cursor:pointer;text-align:center}
.c0{background:#fde2e4}.c1{background:#e2ece9}.c2{background:#fff1c1}.c3{background:#dfe7fd}.c4{background:#f0e2fd}
.c5{background:#d8f3dc}.c6{background:#ffe5d9}.c7{background:#e0f4ff}.c8{background:#f6e7cb}.c9{background:#e9ecef}
.hv{outline:1px dashed #333} .hl{outline:2px solid #d6336c;font-weight:bold}
"""

# events are delegated to each .views block; which lines link is read from the data attributes
SCRIPT = r"""
(function(){
var PTX = '[data-pane=ptx] ', PY = '[data-pane=py] ';
function all(v, sel){ return Array.prototype.slice.call(v.querySelectorAll(sel)); }
function sideOf(el){ var s = el.closest('[data-side]'); return s ? s.dataset.side : 'edited'; }
function ptxLines(v, side, line){ return all(v, PTX + '.scroll[data-side="'+side+'"] .l[data-line="'+line+'"]'); }
function sassCells(v, side, line){ return all(v, '.s[data-side="'+side+'"][data-ptx="'+line+'"]'); }
function pyLines(v, line){ return line ? all(v, PY + '.l[data-line="'+line+'"]') : []; }
function linked(v, el){
  var side = sideOf(el), pane = el.closest('.pane').dataset.pane, out = [el], line = el.dataset.line;
  if (pane === 'sass') {
    if (!el.dataset.ptx) return out;
    var ptx = ptxLines(v, side, el.dataset.ptx);
    out = out.concat(sassCells(v, side, el.dataset.ptx), ptx);
    ptx.forEach(function(p){ out = out.concat(pyLines(v, p.dataset.py)); });
  } else if (pane === 'ptx') {
    out = out.concat(sassCells(v, side, line), pyLines(v, el.dataset.py));
  } else {
    all(v, PTX + '.scroll[data-side="edited"] .l[data-py="'+line+'"]').forEach(function(p){
      out = out.concat([p], sassCells(v, 'edited', p.dataset.line)); });
  }
  return out;
}
function showPtx(v, side){
  all(v, PTX + '.scroll').forEach(function(s){ s.hidden = s.dataset.side !== side; });
  all(v, PTX + 'button').forEach(function(b){ b.setAttribute('aria-pressed', String(b.dataset.show === side)); });
}
function unfold(body){
  if (!body.classList.contains('folded')) return;
  body.hidden = false; body.classList.remove('folded');
  var bar = body.previousElementSibling;
  if (bar && bar.classList.contains('fold-bar')) bar.hidden = true;
}
function scrollTo(el){
  var box = el.closest('.scroll');
  if (!box || box.hidden) return;
  box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3;
}
function mark(v, el, cls, reveal){
  all(v, '.' + cls).forEach(function(x){ x.classList.remove(cls); });
  var got = linked(v, el);
  got.forEach(function(x){ x.classList.add(cls); });
  if (!reveal) return;
  if (el.closest('.pane').dataset.pane !== 'py') showPtx(v, sideOf(el));
  got.forEach(function(x){ var b = x.closest('tbody'); if (b) unfold(b); });
  var seen = {};
  got.forEach(function(x){
    var pane = x.closest('.pane').dataset.pane;
    if (x !== el && !seen[pane]) { seen[pane] = true; scrollTo(x); }
  });
}
function target(e){ return e.target.closest('.s[data-side], .scroll .l'); }
all(document, '.views').forEach(function(v){
  v.addEventListener('click', function(e){
    var bar = e.target.closest('tr.fold-bar');
    if (bar) { unfold(bar.parentNode.nextElementSibling); return; }
    var b = e.target.closest('button[data-show]');
    if (b) { showPtx(v, b.dataset.show); return; }
    var t = target(e);
    if (t) mark(v, t, 'hl', true);
  });
  v.addEventListener('mouseover', function(e){ var t = target(e); if (t) mark(v, t, 'hv', false); });
  v.addEventListener('mouseout', function(){ all(v, '.hv').forEach(function(x){ x.classList.remove('hv'); }); });
});
})();
"""


def colour(line: int | None) -> str:
    return f"c{line % PALETTE}" if line else ""


def _cell(side: str, index: int | None, text: str, located: list) -> str:
    if index is None:
        return '<td class="s"></td>'
    address, line = located[index] if index < len(located) else (None, None)
    attrs = f' data-side="{side}"' + (f' data-addr="{address:04x}"' if address is not None else "")
    attrs += f' data-ptx="{line}"' if line else ""
    return f'<td class="s {colour(line)}"{attrs}>{escape(text)}</td>'


def _row(r: dict, located: dict) -> str:
    b = "" if r["base"] is None else r["base"]
    e = "" if r["edited"] is None else r["edited"]
    return (f'<tr class="{r["tag"]}"><td class="n">{b}</td>{_cell("base", r["base"], r["base_text"], located["base"])}'
            f'<td class="n">{e}</td>{_cell("edited", r["edited"], r["edited_text"], located["edited"])}</tr>')


def fold_runs(rows: list[dict]) -> list[tuple[bool, list[dict]]]:
    """The rows as (folded, rows) segments: each run of quiet rows keeps FOLD_CONTEXT rows next
    to the changes around it and folds the rest when that is at least FOLD_MIN rows."""
    out: list[tuple[bool, list[dict]]] = []
    k = 0
    while k < len(rows):
        end = k
        while end < len(rows) and rows[end]["tag"] in _QUIET:
            end += 1
        if end == k:
            out.append((False, [rows[k]]))
            k += 1
            continue
        lo = k + (FOLD_CONTEXT if k > 0 else 0)
        hi = end - (FOLD_CONTEXT if end < len(rows) else 0)
        if hi - lo >= FOLD_MIN:
            out += [(False, rows[k:lo]), (True, rows[lo:hi]), (False, rows[hi:end])]
        else:
            out.append((False, rows[k:end]))
        k = end
    return [(folded, part) for folded, part in out if part]


def _sass_table(name: str, s: dict) -> str:
    located = s.get("located") or {"base": [], "edited": []}
    out = [f'<h4>{escape(name)}</h4><table class="sass"><thead><tr>'
           '<th>#</th><th>base</th><th>#</th><th>edited</th></tr></thead>']
    for folded, part in fold_runs(s["rows"]):
        body = "".join(_row(r, located) for r in part)
        if folded:
            out.append(f'<tbody class="fold-bar"><tr class="fold-bar"><td colspan="4">{len(part)} equal rows '
                       f'(click to show)</td></tr></tbody><tbody class="folded" hidden>{body}</tbody>')
        else:
            out.append(f"<tbody>{body}</tbody>")
    out.append("</table>")
    return "".join(out)


def sass_pane(kernels: dict[str, dict]) -> str:
    """Every kernel's aligned SASS, one table each, in one scrolled pane."""
    tables = "".join(_sass_table(name, s) for name, s in kernels.items())
    return f'<div class="pane" data-pane="sass"><h4>SASS</h4><div class="scroll">{tables}</div></div>'


def _lines(text: str, colours: dict[int, str], py: dict[int, int] | None = None) -> str:
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        to_py = f' data-py="{py[number]}"' if py and number in py else ""
        out.append(f'<div class="l {colours.get(number, "")}" data-line="{number}"{to_py}>'
                   f'<span class="n">{number}</span>{escape(line)}</div>')
    return "".join(out)


def _linked_lines(kernels: dict[str, dict], side: str) -> dict[int, str]:
    """PTX line -> its colour, for the lines of `side` some SASS instruction came from."""
    return {line: colour(line) for s in kernels.values() for _, line in (s.get("located") or {}).get(side, [])
            if line}


def ptx_pane(kernels: dict[str, dict], sources: dict) -> str:
    """The module's PTX, edited and base (one shown at a time: a click on a SASS line shows its side's)."""
    edited = _lines(sources["edited_ptx"], _linked_lines(kernels, "edited"), sources.get("line_map"))
    base = _lines(sources["base_ptx"], _linked_lines(kernels, "base"))
    return ('<div class="pane" data-pane="ptx"><h4>PTX<button data-show="edited" aria-pressed="true">edited</button>'
            '<button data-show="base" aria-pressed="false">base</button></h4>'
            f'<div class="scroll" data-side="edited">{edited}</div>'
            f'<div class="scroll" data-side="base" hidden>{base}</div></div>')


def python_pane(kernels: dict[str, dict], sources: dict) -> str:
    """The Python source; a line takes the colour of the first PTX line with SASS it produced."""
    line_map = sources.get("line_map") or {}
    colours: dict[int, str] = {}
    for ptx_line, c in sorted(_linked_lines(kernels, "edited").items()):
        if ptx_line in line_map:
            colours.setdefault(line_map[ptx_line], c)
    return (f'<div class="pane" data-pane="py" data-side="edited"><h4>Python: {escape(sources["python_name"])}</h4>'
            f'<div class="scroll">{_lines(sources["python"], colours)}</div></div>')


def linked_views(kernels: dict[str, dict], sources: dict | None) -> str:
    """The panes for the kernels' SASS comparisons: SASS alone without the sources, else SASS |
    PTX (| Python); the module's PTX and Python are shown once, however many kernels it has."""
    if not sources:
        return f'<div class="views solo">{sass_pane(kernels)}</div>'
    if not sources.get("python"):
        return f'<div class="views two">{sass_pane(kernels)}{ptx_pane(kernels, sources)}</div>'
    return (f'<div class="views">{sass_pane(kernels)}{ptx_pane(kernels, sources)}'
            f'{python_pane(kernels, sources)}</div>')
