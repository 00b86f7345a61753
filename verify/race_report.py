"""Reading SentryWard's result for `ptx2py verify --races`: the verdict, and every witness named by
its PTX line and column (and the Python line when the kernel came from a .py).

SentryWard names an access by its `.loc` source location when the PTX has one, so the PTX it is
given has its `.loc` lines blanked (`without_loc`, line numbers kept): each race endpoint then
comes back as the PTX line and column of the access itself. Lifecycle witnesses (a barrier
invalidated or tensor memory freed before an operation on it is proved complete) name only
SentryWard's lowered instruction numbers, which it maps to no line; for those the report names
the PTX lines that can be the witness's ends (LIFECYCLE_ENDS) and, when the finding is new against
the base, the edited lines that the two kernels differ at (`edit_sites`).
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

FINDINGS = {"not_wellsynced", "potential_race", "invalid_lifecycle"}
PROVED = {"race_free", "verified"}
# the file name SentryWard is given the kernel under: a location in it is a PTX line and column
KERNEL_FILE = "kernel.ptx"
_LOC_LINE = re.compile(r"^[ \t]*\.loc\b[^\n]*", re.M)
_OPCODE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)")
# lifecycle constraint -> (what its `from` end is, the opcodes it can be; what its `to` end is, ...)
LIFECYCLE_ENDS = {
    "mbarrier_final_invalidation": (
        "an operation on the mbarrier",
        r"^(mbarrier\.|cp\.async\.bulk\.[\w.:]*mbarrier|cp\.async\.mbarrier|tcgen05\.commit)",
        "its final invalidation", r"^mbarrier\.inval"),
    "access_completion_before_dealloc": (
        "a tensor-memory access", r"^tcgen05\.(ld|st|mma|cp|shift)", "the deallocation", r"^tcgen05\.dealloc"),
    "tmem_group2_access_before_dealloc": (
        "a paired tensor-memory access", r"^tcgen05\.(ld|st|mma|cp|shift)", "the deallocation", r"^tcgen05\.dealloc"),
    "allocation_before_dealloc": ("the allocation", r"^tcgen05\.alloc", "the deallocation", r"^tcgen05\.dealloc"),
    "shared_constant_read_from": ("a shared-memory write", r"^(st\.shared|st\.volatile\.shared|stmatrix|cp\.async)",
                                  "a read of the value", r"^(ld\.shared|ld\.volatile\.shared|ldmatrix)"),
}
MAX_SITES = 6


def without_loc(ptx_text: str) -> str:
    """The PTX with every `.loc` line blanked, line numbers kept."""
    return _LOC_LINE.sub("", ptx_text)


def edit_sites(base_ptx: str, edited_ptx: str) -> list[dict]:
    """Where the edited PTX differs from the base: {line, column, text, was} per edited line
    (a removed line is named at the line that now stands in its place)."""
    a, b = base_ptx.splitlines(), edited_ptx.splitlines()
    sites = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        was = " / ".join(x.strip() for x in a[i1:i2] if x.strip())
        for j in range(j1, j2) if j2 > j1 else [j1]:
            text = b[j] if j < len(b) else ""
            sites.append({"line": j + 1, "column": len(text) - len(text.lstrip()) + 1, "text": text.strip(),
                          "was": was if tag != "insert" else None, "removed": tag == "delete"})
    return sites


def carried_lines(base_ptx: str, edited_ptx: str) -> dict[int, int]:
    """Base line -> edited line for every line the edit left as it was."""
    a, b = base_ptx.splitlines(), edited_ptx.splitlines()
    out = {}
    for i, j, n in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        out.update({i + k + 1: j + k + 1 for k in range(n)})
    return out


def finding_signature(result: dict, ptx_text: str) -> set:
    """What a finding consists of (verdict, diagnostic codes, the instructions at race ends), so
    that one the base lacks can be told from one it shares."""
    lines = ptx_text.splitlines()
    sig = {("verdict", result.get("result"))} | {("code", d.get("code")) for d in result.get("diagnostics") or []}
    for race in result.get("races") or []:
        for side in ("first", "second"):
            e = race.get(side) or {}
            ln = (e.get("location") or {}).get("line")
            text = lines[ln - 1].strip() if isinstance(ln, int) and 0 < ln <= len(lines) else None
            sig.add(("race", e.get("mode"), text))
    return sig


class Locator:
    """PTX line (and column) -> where it is, in the terms of the input file."""

    def __init__(self, ptx_text: str, name: str, line_map: dict[int, int] | None):
        self.lines, self.name, self.line_map = ptx_text.splitlines(), name, line_map

    def text(self, ln: int) -> str:
        text = self.lines[ln - 1].strip() if 0 < ln <= len(self.lines) else ""
        return text if len(text) <= 100 else text[:97] + "..."

    def describe(self, ln: int, col: int | None = None) -> dict:
        if col is None:
            text = self.lines[ln - 1] if 0 < ln <= len(self.lines) else ""
            col = len(text) - len(text.lstrip()) + 1
        py = (self.line_map or {}).get(ln)
        if self.line_map is not None:
            where = f"{self.name}:{py} (PTX line {ln}:{col})" if py else f"{self.name} (PTX line {ln}:{col})"
        else:
            where = f"{self.name}:{ln}:{col}"
        return {"ptx_line": ln, "column": col, "python_line": py, "ptx": self.text(ln), "where": where}

    def lines_matching(self, pattern: str) -> list[int]:
        rx = re.compile(pattern)
        return [k for k, line in enumerate(self.lines, 1)
                if (m := _OPCODE.match(line)) and not line.lstrip().startswith(("//", ".")) and rx.match(m.group(1))]


def _ptx_lines(obj, out: set[int]) -> None:
    """Every PTX line number a diagnostic names (`line`, `ptx_line`, `*_line` keys, anywhere)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, int) and not isinstance(v, bool) and (k == "line" or k.endswith("_line")):
                out.add(v)
            else:
                _ptx_lines(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _ptx_lines(v, out)


def _endpoint(e: dict, loc: Locator) -> tuple[str, dict | None]:
    """(source text, witness) for one end of a race: its PTX line when SentryWard named one."""
    where = e.get("location") or {}
    if Path(str(where.get("file"))).name == KERNEL_FILE and where.get("line"):
        w = loc.describe(int(where["line"]), int(where.get("column") or 0) or None)
        return w["where"], w
    src = f"{Path(str(where.get('file'))).name}:{where.get('line')}:{where.get('column')}" if where else "?"
    return f"{src} (no PTX line for it)", None


def _same_warp(a, b, threads_per_cta: int | None) -> bool:
    """Two SentryWard actors (threads numbered across the CTAs) in the same warp of the same CTA."""
    if not isinstance(a, int) or not isinstance(b, int):
        return False
    n = threads_per_cta or 1 << 30
    return a // n == b // n and (a % n) // 32 == (b % n) // 32


def duplicate_store_line(race: dict, threads_per_cta: int | None) -> int | None:
    """The PTX line of a race that is a same-warp duplicate store (two lanes of one warp writing
    from one instruction), else None."""
    ends = [(e.get("mode"), Path(str(loc.get("file"))).name, loc.get("line"), loc.get("column"), e.get("actor"))
            for e in (race.get("first") or {}, race.get("second") or {}) for loc in [e.get("location") or {}]]
    (m1, f1, l1, c1, a1), (m2, f2, l2, c2, a2) = ends
    same = m1 == m2 == "write" and f1 == f2 == KERNEL_FILE and isinstance(l1, int) and (l1, c1) == (l2, c2)
    return l1 if same and _same_warp(a1, a2, threads_per_cta) else None


def _race(race: dict, loc: Locator, threads_per_cta: int | None) -> tuple[list[str], list[dict], str | None]:
    """(report lines, witnesses, classification) for one race."""
    region = race.get("region") or {}
    out = [f"    race on {region.get('address_space', '')} memory, {region.get('bytes')} B at offset "
           f"{region.get('offset')} ({race.get('overlap', '')}):"]
    witnesses, actors = [], []
    for side in ("first", "second"):
        e = race.get(side) or {}
        where, w = _endpoint(e, loc)
        out.append(f"      {e.get('mode')} of {e.get('bytes')} B by thread {e.get('actor')} at {where}"
                   + (f": {w['ptx']}" if w else ""))
        if w:
            witnesses.append(dict(w, endpoint=side))
        actors.append(e.get("actor"))
    if duplicate_store_line(race, threads_per_cta):
        a1, a2 = actors
        out.append(f"      a same-warp duplicate store: threads {a1} and {a2} of one warp store to the same "
                   "address from one instruction. It is a race in the PTX memory model (and SentryWard's), "
                   "harmless on the hardware only if every lane stores the same value, which neither SentryWard "
                   "(its duplicate_tma_store_benign covers TMA stores only) nor ptx2py proves")
        return out, witnesses, "same_warp_duplicate_store"
    return out, witnesses, None


def _edit_lines(edits: list[dict], loc: Locator, kind: str = "", indent: str = "      ") -> tuple[list[str],
                                                                                                  list[dict]]:
    """The edited lines as report lines and witnesses (role "edit")."""
    out, witnesses = [], []
    for site in edits[:MAX_SITES]:
        d = dict(loc.describe(site["line"], site["column"]), role="edit", kind=kind)
        witnesses.append(d)
        was = f"  (base: {site['was']})" if site.get("was") else ""
        what = "line removed here" if site.get("removed") else "edited"
        out.append(f"{indent}{what} at {d['where']}: {d['ptx']}{was}")
    return out, witnesses


def _lifecycle(w: dict, loc: Locator, edits: list[dict] | None) -> tuple[list[str], list[dict]]:
    """Report lines and witnesses for one lifecycle witness (lowered instruction numbers only)."""
    kind = w.get("kind", "")
    out = [f"    witness: lowered instruction #{w.get('from_instruction')} -> #{w.get('to_instruction')} ({kind}); "
           "SentryWard names no PTX line for lifecycle witnesses"]
    ends = LIFECYCLE_ENDS.get(kind)
    if ends:
        for what, pattern, role in ((ends[0], ends[1], "from"), (ends[2], ends[3], "to")):
            lines = loc.lines_matching(pattern)
            shown = ", ".join(str(x) for x in lines[:MAX_SITES * 2]) + (" ..." if len(lines) > MAX_SITES * 2 else "")
            out.append(f"      {role}: {what}: one of PTX lines {shown or '(none found)'}")
    more, witnesses = _edit_lines(edits or [], loc, kind)
    return out + more, witnesses


def _event_sites(result: dict) -> dict[int, tuple[int, int]]:
    """SentryWard event -> (PTX line, column), from the events its counterexample names."""
    return {e["event"]: (e["line"], e.get("column") or 1) for e in result.get("source_events") or []
            if isinstance(e, dict) and Path(str(e.get("file"))).name == KERNEL_FILE
            and isinstance(e.get("event"), int) and isinstance(e.get("line"), int)}


def _same_as_base(counts: tuple, differs: str) -> list[str]:
    """What a finding the base shares says about the edit: SentryWard reports its first finding
    only, so only the exhaustive race counts (when known) can tell."""
    out = ["  the base has this same finding; SentryWard reports the first one it finds only"]
    base, edited = counts
    if base is None or edited is None:
        out.append("  no exhaustive count of them here: this run says nothing about what the edit changed")
    elif edited != base:
        out.append(f"  SentryWard's exhaustive search: {base} racing access pairs in the base, {edited} in the "
                   f"edited kernel ({edited - base:+d}), which differs at: {differs}")
    else:
        out.append(f"  SentryWard's exhaustive search: {base} racing access pairs in both kernels")
    return out


def _unsupported(result: dict, loc: Locator) -> str:
    """Each distinct thing SentryWard says it does not model, at the PTX line its first diagnostic names."""
    seen: dict[str, int | None] = {}
    for d in result.get("diagnostics") or []:
        where: set[int] = set()
        _ptx_lines(d, where)
        seen.setdefault(d.get("message") or d.get("code") or "?", min(where) if where else None)
    said = [f"{m.rstrip('.')} ({loc.text(ln)} at PTX line {ln})" if ln else m.rstrip(".") for m, ln in seen.items()]
    return "; ".join(said) or "it gives no reason"


def read_result(result: dict, ptx_text: str, name: str, line_map: dict[int, int] | None, *,
                edits: list[dict] | None = None, race_counts: tuple | None = None,
                threads_per_cta: int | None = None) -> dict:
    """The verdict, its diagnostics as lines, and the witnesses in PTX (and Python) terms.
    `edits` (edit_sites against the base) are named on each lifecycle witness of a finding the
    base lacks; `race_counts` (base, edited; None: unknown) is given when the base has this very
    finding, with the exhaustive race counts when they could be had."""
    verdict = result.get("result", "tool_failure")
    loc = Locator(ptx_text, name, line_map)
    lines = [f"{verdict}; checks: " + ", ".join(f"{k} {v}" for k, v in (result.get("checks") or {}).items())]
    witnesses, classes = [], []
    events = _event_sites(result)
    for d in result.get("diagnostics") or []:
        where: set[int] = set()
        _ptx_lines(d, where)
        lines.append(f"  {d.get('code')}: {d.get('message', '')}".rstrip(": "))
        for ln in sorted(where):
            w = loc.describe(ln)
            witnesses.append(w)
            lines.append(f"    at {w['where']}: {w['ptx']}")
        event = (d.get("details") or {}).get("event")
        if event in events:     # where a synchronisation counterexample stopped
            w = loc.describe(*events[event])
            witnesses.append(dict(w, role="event"))
            lines.append(f"    at {w['where']}: {w['ptx']}  (SentryWard event {event})")
        sample = [w for w in (d.get("details") or {}).get("witnesses", []) if "from_instruction" in w]
        for k, w in enumerate(sample[:4]):
            more, wit = _lifecycle(w, loc, edits if k == 0 else None)
            lines += more if k == 0 else more[:1]
            witnesses += wit
    for race in (result.get("races") or [])[:4]:
        more, wit, cls = _race(race, loc, threads_per_cta)
        lines += more
        witnesses += wit
        classes += [cls] if cls else []
    differs = "; ".join(loc.describe(s["line"], s["column"])["where"] for s in (edits or [])[:MAX_SITES])
    if race_counts is None and edits and verdict in FINDINGS and not any(w.get("role") == "edit" for w in witnesses):
        more, wit = _edit_lines(edits, loc, indent="    ")
        lines += ["  new against the base, which differs at:"] + more
        witnesses += wit
    if race_counts is not None and verdict in FINDINGS:
        lines += _same_as_base(race_counts, differs)
    if verdict == "timeout":
        lines.append("  SentryWard ran out of time at this launch: a smaller one (--races-size 16: fewer rows, "
                     "so fewer loop trips per CTA) or a longer --races-timeout may prove it")
    if verdict == "unsupported":
        why = ("its wgmma instructions (sm_90a) are unsupported"
               if "wgmma" in json.dumps(result.get("diagnostics")) else _unsupported(result, loc))
        lines.append(f"  SentryWard does not model this kernel: {why}; "
                     "run it on the CPU engine instead: ptx2py verify --run cpu BASE EDITED")
    return {"verdict": verdict, "finding": verdict in FINDINGS, "proved": verdict in PROVED, "lines": lines,
            "race_counts": list(race_counts) if race_counts is not None else None,
            "witnesses": witnesses, "classification": classes[0] if classes and len(set(classes)) == 1 and
            len(classes) == len((result.get("races") or [])[:4]) else None, "raw": result}
