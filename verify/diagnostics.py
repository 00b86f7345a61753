"""ptxas's diagnostics beyond errors, and which of them an edit changed.

`ptxas -v` prints its figures as `info` lines (registers, stack frame, compile time); among them
are the advisories a tuner most needs: `info : (C7517) wgmma.wait_group is injected in around
line 423 ...`, `info : (C7514) Potential Performance Loss: wgmma.mma_async instructions are
serialized ...`, setmaxnreg and stack-size notes, and the warnings (spills, an unknown stack
size). Every such line of the edit that the base does not print (`new`), or of the base that
the edit no longer prints (`gone`), is reported first, located at the PTX line it names and, for
Python input, the Python line that wrote it (verify/locate.py). Two diagnostics are the same when
they say the same thing up to the PTX line numbers (an edit shifts lines).
"""

from __future__ import annotations

import re
from collections import Counter

from .locate import Diagnostic, Source, locate

# `ptxas info    : ...`, `ptxas-blackwell warning : ...`, `ptxas /tmp/m.ptx, line 12; warning : ...`
_LINE = re.compile(r"^ptxas\S*(?:\s+(?P<file>.+?), line (?P<line>\d+);)?\s+(?P<kind>info|warning)\s*: (?P<msg>.*)$",
                   re.M)
# the -v figures (parse_ptxas_info reads them; they are compared as figures, not as diagnostics)
_FIGURES = re.compile(r"(\d+ bytes gmem|\d+ bytes stack frame|Compiling (entry )?function|Function properties for"
                      r"|Used \d+ registers|Compile time =)")
# a line named inside the message: `injected in around line 423`, `at line 12`
_NAMED_LINE = re.compile(r"\bline (\d+)\b")
_CODE = re.compile(r"^\((C\d+)\)\s*")


def advisories(stderr: str) -> list[Diagnostic]:
    """The warnings and the non-figure `info` lines of one ptxas run, with the PTX line each names."""
    out = []
    for m in _LINE.finditer(stderr):
        msg = m.group("msg").strip()
        if m.group("kind") == "info" and _FIGURES.match(msg):
            continue
        named = m.group("line") or next(iter(_NAMED_LINE.findall(msg)), None)
        out.append(Diagnostic(m.group("kind"), msg, int(named) if named else 0))
    return out


def _same(d: Diagnostic) -> tuple[str, str]:
    return d.kind, _NAMED_LINE.sub("line #", d.message)


def differing(base: list[Diagnostic], edited: list[Diagnostic], base_source: Source, edited_source: Source,
              base_ptx: str, edited_ptx: str) -> list[dict]:
    """The diagnostics only one side prints: the edit's new ones first, then the base's gone ones."""
    out = []
    for change, mine, theirs, source, ptx in (("new", edited, base, edited_source, edited_ptx),
                                              ("gone", base, edited, base_source, base_ptx)):
        left = Counter(_same(d) for d in theirs)
        for d in mine:
            key = _same(d)
            if left[key]:
                left[key] -= 1
                continue
            code = _CODE.match(d.message)
            py = (source.line_map or {}).get(d.ptx_line) if source.is_python else None
            out.append({"change": change, "kind": d.kind, "code": code.group(1) if code else None,
                        "message": d.message, "ptx_line": d.ptx_line or None, "python_line": py,
                        "file": source.name, "located": locate(d, source, ptx)})
    return out


def diagnostic_lines(diffs: list[dict]) -> list[str]:
    """The text report's first lines: each differing diagnostic, located."""
    if not diffs:
        return []
    new = sum(d["change"] == "new" for d in diffs)
    out = [f"ptxas diagnostics that differ from the base: {new} new, {len(diffs) - new} gone"]
    for d in diffs:
        first, *rest = d["located"].splitlines()
        out.append(f"  {d['change']}: {first}")
        out += [f"    {x}" for x in rest]
    return out
