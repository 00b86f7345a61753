"""Inlined frames named once per module: the `.loc`s of one inlined call (LLVM writes
`function_name $L__info_stringN, inlined_at F L C` on each) share a frame, and a frame the
module's `.loc`s spell out often enough gets one plain assignment at module level,

    kernels_215 = inlined(fn=0, at=(1, 215, 9))      # file= when not `.file 1`
    ...
    at(207, 12, kernels_215).max.f32(r[187], r[186], r[185])

named after its call site (the source file's stem and line; the column, function and file
added only where two frames would share a name). The srcloc pass spells the frames' uses.
"""

from __future__ import annotations

import os
import re

from ptx2py.ptxgrammar.tree import Loc, Statement
from ptx2py.transpile.dsl.locs import DEFAULT_FILE

from .ir import Call, Kw, stmt

MIN_USES = 3  # a frame spelled out fewer times reads as well in place as behind a name
_INFO = re.compile(r"\$L__info_string(0|[1-9][0-9]*)\Z")


def frame_key(frame):
    """(file, fn, inlined_at) of a `srcloc._frame` tuple, None when it is not inlined."""
    return None if frame[3] is None else (frame[0], frame[3], frame[4])


def named_frames(module, files, taken) -> dict:
    """{(file, fn, inlined_at): name} of the inlined frames that `.loc`s spell out (their
    `inlined_at` not the `.loc` line just before, which a chain `at(...).at(...)` implies) at least
    MIN_USES times. `files`: `.file` index (str) -> source name; `taken`: names not to use."""
    counts, prev = {}, None
    for node in module.walk():
        if node.__class__ is not Loc:
            if isinstance(node, Statement):
                prev = None  # a chain is `.loc` lines one after another
            continue
        key = _key(node)
        if key is not None and (prev is None or (prev.file, prev.line, prev.column) != node.inlined_at):
            counts[key] = counts.get(key, 0) + 1
        prev = node
    keys = sorted((k for k, n in counts.items() if n >= MIN_USES), key=lambda k: (k[2], k[1], k[0]))
    return _names(keys, files, taken)


def _key(node):
    m = _INFO.match(node.function_name or "")
    if m is None or node.function_offset is not None or node.inlined_at is None:
        return None
    fields = (node.file, *node.inlined_at)
    if not all(_int(x) for x in fields) or not all(_int(x) for x in (node.line, node.column)):
        return None
    return int(node.file), int(m.group(1)), tuple(int(x) for x in node.inlined_at)


def _int(x) -> bool:
    return x.isdigit() and (x == "0" or x[0] != "0")


def _names(keys, files, taken) -> dict:
    """Each key's shortest name that no other key shares (then free of `taken`)."""
    spellings = {k: _spellings(k, files) for k in keys}
    out, used = {}, set(taken)
    for k in keys:
        others = [s for o, s in spellings.items() if o != k]
        name = next((n for level, n in enumerate(spellings[k]) if all(s[level] != n for s in others)),
                    spellings[k][-1])
        while name in used:
            name += "_"
        used.add(name)
        out[k] = name
    return out


def _spellings(key, files):
    """The names of a frame, shortest first: `kernels_215`, `kernels_215_9`, `kernels_215_9_fn0`,
    then with its `.loc`s' file and the call site's file."""
    file, fn, (at_file, line, col) = key
    stem = re.sub(r"\W", "_", os.path.splitext(files.get(str(at_file), "frame"))[0]) or "frame"
    if not stem[0].isalpha():
        stem = "f" + stem
    base = f"{stem}_{line}"
    return [base, f"{base}_{col}", f"{base}_{col}_fn{fn}", f"{base}_{col}_fn{fn}_file{file}",
            f"{base}_{col}_fn{fn}_file{file}_at{at_file}"]


def definitions(named) -> list:
    """The module-level assignments of the named frames, in name order."""
    out = []
    for (file, fn, at), name in sorted(named.items(), key=lambda kv: kv[1]):
        items = [Kw("fn", str(fn)), Kw("at", "(" + ", ".join(map(str, at)) + ")")]
        if file != DEFAULT_FILE:
            items.append(Kw("file", str(file)))
        out.append(stmt(Call("inlined", items), 0, name + " = "))
    return out
