"""The `.file` table -> one `source_files(...)` call, one path a line:

    ptx.file(1, "/tmp/build/stencil.cu")                  source_files(
    ptx.file(                                       ->        "/tmp/build/stencil.cu",
        2, "/usr/local/cuda-13.0/.../sm_32_intrinsics.hpp"    "/usr/local/cuda-13.0/.../sm_32_intrinsics.hpp",
    )                                                     )

Only a run of MIN_RUN or more consecutive plain `ptx.file(index, path)` statements at the top
level with consecutive indices (`first=` when the run starts elsewhere than at 1), and only
where the call takes fewer lines. Runs after the trivia pass, which has taken the statements'
layout into the table by their tokens (the call records the same `.file` statements).
"""

from __future__ import annotations

from .ir import Call, Kw, is_call, layout_lines, stmt, taken_names, unq

NAMES = ("source_files",)
MIN_RUN = 2


def _index(s):
    """The index of a plain top-level `ptx.file(index, "path")`, else None."""
    if s.depth or not is_call(s, "ptx.file", 2) or unq(s.expr.items[1]) is None:
        return None
    i = s.expr.items[0]
    ok = i.__class__ is str and i.isdigit() and (i == "0" or i[0] != "0")
    return int(i) if ok else None


def _run_end(stmts, k) -> int:
    first, j = _index(stmts[k]), k + 1
    while j < len(stmts) and _index(stmts[j]) == first + (j - k):
        j += 1
    return j


def run(stmts, ctx):
    if taken_names(stmts) & set(NAMES):
        return stmts
    out, k = [], 0
    while k < len(stmts):
        first = _index(stmts[k])
        j = _run_end(stmts, k) if first is not None else k + 1
        if j - k >= MIN_RUN:
            kw = [] if first == 1 else [Kw("first", str(first))]
            call = stmt(Call("source_files", [s.expr.items[1] for s in stmts[k:j]] + kw), 0)
            if layout_lines(call.expr, 0) < sum(layout_lines(s.expr, 0) for s in stmts[k:j]):
                out.append(call)
                k = j
                continue
        out.extend(stmts[k:j])
        k = j
    return out
