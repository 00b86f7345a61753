"""verify --html in headless Chromium: the SASS | PTX | Python panes are linked as ptxas's own line
info says (nvdisasm --print-line-info, read here, not through verify) and as py2ptx's source map
says; equal runs are folded and unfold.

The page is the worked example's (the Triton TMA matmul, its Python edited in two places). A small
script appended to a copy of the page clicks and hovers as a user would and writes what got marked
into the DOM; `chromium --dump-dom` gives that DOM back.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, needs

from ptx2py.transpile.traced import python_to_ptx_traced
from ptx2py.verify import tools

BASE = CORPUS / "triton" / "matmul_tma_fp16_sm90.ptx"
EDITED = ROOT / "examples" / "worked_matmul" / "matmul_edited.py"
_VERSION = re.search(r"^\.version (\d+)\.(\d+)", BASE.read_text(), re.M) if BASE.exists() else None
PTXAS = tools.find_ptxas((int(_VERSION[1]), int(_VERSION[2])))[0] if _VERSION else None
NVDISASM = tools.find_nvdisasm()
CHROMIUM = tools.find_chromium()
DISASM = tools.find_disassembler()[0]

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason=f"no Chromium found ($PTX2PY_CHROMIUM, PATH: {tools.BROWSERS})"),
    pytest.mark.skipif(PTXAS is None or NVDISASM is None or DISASM is None,
                       reason="needs a ptxas for the module's PTX ISA, nvdisasm and a disassembler "
                              "(pip install '.[cuda-tools]')"),
]

# --- the oracle: ptxas -lineinfo on a copy whose `.loc`s name its own lines, read by nvdisasm ------

_INSTRUCTION = re.compile(r"^\s*(@!?%\w+\s+)?[a-z][\w.:]*(\s.*)?;\s*(//.*)?$")
_ADDRESS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
_FILE_LINE = re.compile(r'//## File "([^"]*)", line (\d+)')


def _pointing_at_itself(ptx: str) -> str:
    out = []
    for number, line in enumerate(ptx.split("\n"), 1):
        if line.strip().startswith(".loc"):
            continue
        if line.strip().startswith(".file"):
            line = '\t.file\t1 "oracle.ptx"'
        elif _INSTRUCTION.match(line):
            out.append(f"\t.loc\t1 {number} 1")
        out.append(line)
    return "\n".join(out)


def ptx_line_of_address(ptx: str, tmp: Path) -> dict[int, tuple[int, str]]:
    """SASS address -> (PTX line, opcode), as nvdisasm prints ptxas's line table."""
    src, cubin = tmp / "oracle.ptx", tmp / "oracle.cubin"
    src.write_text(_pointing_at_itself(ptx), newline="")
    subprocess.run([PTXAS.path, "-lineinfo", "--gpu-name", "sm_90a", "-o", str(cubin), str(src)], check=True,
                   capture_output=True, timeout=300)
    listing = subprocess.run([NVDISASM.path, "--print-line-info", "-c", str(cubin)], check=True, capture_output=True,
                             text=True, timeout=300).stdout
    out, line = {}, None
    for text in listing.splitlines():
        m = _FILE_LINE.search(text)
        if m:
            line = int(m.group(2)) if m.group(1).endswith("oracle.ptx") else None
            continue
        m = _ADDRESS.search(text)
        if m and line is not None:
            out[int(m.group(1), 16)] = (line, m.group(2))
    return out


# --- the page, clicked in Chromium ----------------------------------------------------------------

# records, after each step, what the page marked: [pane, side, line or PTX line, SASS address, hidden]
_PROBE = """
<script>
(function(){
var log = [];
function marked(cls){
  return Array.prototype.slice.call(document.querySelectorAll('.' + cls)).map(function(x){
    var pane = x.closest('.pane').dataset.pane, side = x.closest('[data-side]');
    return [pane, side ? side.dataset.side : null, Number(x.dataset.line || x.dataset.ptx || 0),
            x.dataset.addr || null, !!x.closest('[hidden]')];
  });
}
function scrolled(){
  var out = {};
  document.querySelectorAll('.scroll').forEach(function(s){
    var p = s.closest('.pane').dataset.pane + (s.dataset.side ? ':' + s.dataset.side : '');
    out[p] = [s.scrollTop, !!s.hidden];
  });
  return out;
}
function step(name, el, how){
  el.dispatchEvent(new MouseEvent(how, {bubbles: true}));
  log.push({step: name, target: [el.dataset.addr || null, Number(el.dataset.ptx || 0)],
            hl: marked('hl'), hv: marked('hv'), scroll: scrolled(),
            folded: document.querySelectorAll('tbody.folded[hidden]').length});
}
function cell(side, text){
  return Array.prototype.slice.call(document.querySelectorAll('td.s[data-side=' + side + ']'))
    .filter(function(x){ return x.textContent === text; })[0];
}
log.push({step: 'loaded', folded: document.querySelectorAll('tbody.folded[hidden]').length});
step('edited cell', cell('edited', %(changed)s), 'click');
step('base cell', cell('base', %(moved)s), 'click');
step('hover ptx', document.querySelector('[data-pane=ptx] .scroll[data-side=edited] .l[data-line="%(hover)d"]'),
     'mouseover');
step('python line', document.querySelector('[data-pane=py] .l[data-line="%(python)d"]'), 'click');
step('fold bar', document.querySelector('tbody.fold-bar:not([hidden]) tr'), 'click');
var pre = document.createElement('pre');
pre.id = 'probe'; pre.textContent = JSON.stringify(log);
document.body.appendChild(pre);
})();
</script>
"""


class _Probe(HTMLParser):
    """The probe's log and the page's panes, from the dumped DOM."""

    def __init__(self):
        super().__init__()
        self.panes, self.log, self._in = [], None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-pane" in a:
            self.panes.append(a["data-pane"])
        self._in = a.get("id") == "probe"

    def handle_data(self, data):
        if self._in:
            self.log = json.loads(data)
            self._in = False


def _in_chromium(page: Path) -> _Probe:
    r = subprocess.run([CHROMIUM.path, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1600,1000",
                        "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    p = _Probe()
    p.feed(r.stdout)
    assert p.log is not None, "the probe did not run:\n" + r.stdout[-2000:]
    return p


def _marked(entry: dict, pane: str, key: str = "hl") -> set:
    return {(side, line) for p, side, line, _, _ in entry[key] if p == pane}


def _addresses(entry: dict, side: str, key: str = "hl") -> set[int]:
    return {int(addr, 16) for p, s, _, addr, _ in entry[key] if p == "sass" and s == side}


@needs(CORPUS)
def test_the_three_panes_link_as_ptxas_line_info_and_the_source_map_say(tmp_path):
    page = tmp_path / "verify.html"
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "verify", str(BASE), str(EDITED), "--html", str(page)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    edited_ptx, line_map = python_to_ptx_traced(EDITED.read_text(), str(EDITED))
    assert line_map
    edited_lines = ptx_line_of_address(edited_ptx, tmp_path)
    base_lines = ptx_line_of_address(BASE.read_text(), tmp_path)

    # the step targets: the changed wait (edited side), the moved arrive (base side), a Python
    # line whose SASS sits inside a folded run (the third instruction: the page starts folded)
    changed, moved = "WARPGROUP.DEPBAR.LE gsb0, 0x0", "@P2 SYNCS.ARRIVE.TRANS64 RZ, [UR18+0x18000], R7"
    early = sorted(a for a, (line, _) in edited_lines.items() if line in line_map)[2]
    python = line_map[edited_lines[early][0]]
    hover = edited_lines[early][0]
    probe = _PROBE % {"changed": json.dumps(changed), "moved": json.dumps(moved), "hover": hover, "python": python}
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page.read_text().replace("</body>", probe + "</body>"))
    dom = _in_chromium(clicked)
    steps = {s["step"]: s for s in dom.log}

    assert dom.panes == ["sass", "ptx", "py"]
    # a click on the changed SASS line marks the PTX line ptxas compiled it from, every SASS line
    # compiled from that PTX line, and its Python line
    first = steps["edited cell"]
    line, opcode = edited_lines[int(first["target"][0], 16)]
    assert opcode == "WARPGROUP.DEPBAR.LE" and first["target"][1] == line
    assert _marked(first, "ptx") == {("edited", line)}
    assert _addresses(first, "edited") == {a for a, (ln, _) in edited_lines.items() if ln == line}
    assert _marked(first, "py") == {("edited", line_map[line])}
    assert first["scroll"]["ptx:edited"][0] > 0 and first["scroll"]["py"][0] > 0     # both scrolled to it
    # the base side's cell: the base PTX line, the base PTX shown, no Python (the base is PTX)
    second = steps["base cell"]
    line, opcode = base_lines[int(second["target"][0], 16)]
    assert opcode == "SYNCS.ARRIVE.TRANS64" and second["target"][1] == line
    assert _marked(second, "ptx") == {("base", line)} and not _marked(second, "py")
    assert _addresses(second, "base") == {a for a, (ln, _) in base_lines.items() if ln == line}
    assert second["scroll"]["ptx:base"][1] is False and second["scroll"]["ptx:edited"][1] is True
    # hovering a PTX line marks every SASS instruction ptxas compiled from it, folded or not
    want = {a for a, (ln, _) in edited_lines.items() if ln == hover}
    assert _addresses(steps["hover ptx"], "edited", "hv") == want
    assert any(x[4] for x in steps["hover ptx"]["hv"] if x[0] == "sass")     # a hover unfolds nothing
    # a click on a Python line: its PTX lines (the source map) and their SASS, unfolded
    ptx = {ln for ln, py in line_map.items() if py == python}
    assert {ln for _, ln in _marked(steps["python line"], "ptx")} == ptx
    cells = [x for x in steps["python line"]["hl"] if x[0] == "sass"]
    assert _addresses(steps["python line"], "edited") == {a for a, (ln, _) in edited_lines.items() if ln in ptx}
    assert cells and not any(x[4] for x in cells)
    # equal runs are folded in the page as written; the Python line's click opened the run holding
    # its SASS, a click on a fold bar opens one more
    assert steps["loaded"]["folded"] >= 2 and steps["edited cell"]["folded"] == steps["loaded"]["folded"]
    assert steps["python line"]["folded"] < steps["hover ptx"]["folded"]
    assert steps["fold bar"]["folded"] == steps["python line"]["folded"] - 1
