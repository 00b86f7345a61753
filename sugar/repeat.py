"""Runs of statements that differ only by affine integers -> `for i in range(n):` loops;
runs that also take one register column -> `for i, x in enumerate((r[14], r[23], ...)):`.

A run is p statements repeated k times where every integer (outside string
literals) of repetition r is `a + b*r`. The loop body is repetition 0 with each
varying integer replaced by its expression in the loop variable, so running
the loop records exactly the original statements (checked: the body is
re-instantiated for every r and compared with the original text).

A unit is one simple statement or a whole `with asm():` block (Triton's
paired masked loads/stores), so loops run over blocks too. Loops need at least
MIN_REPS repetitions (two-repetition loops read worse than the code: any two
integers are affine, so their loops show strides that mean nothing); a run
that starts one or two units later wins when it (and the run after it) saves
more lines, and a block that is not repeated is searched inside.

A table loop (nvcc's unrolled stencil taps, each reading another clamped
column) is a run of one shape whose integers are affine but for register
operands that all take the same other register each time: the loop walks that
column. It needs a body of TABLE_MIN_PERIOD units, TABLE_MIN_REPS repetitions
and a header on one line, and must save TABLE_MIN_SAVED lines: a body of one statement
(`for i, x in enumerate((r[81], r[83], ...)): ptx.mad.wide.s32(rd[i + 62], x, 4, rd[61])`,
the same instruction over a list of registers) runs at least six times; a run whose
column is too long for one header line stays flat.

A table loop's column may be float literals instead (libdevice's polynomial
coefficients, loaded by `mov` before each `fma` in every inlined copy): such a
column does not fit a loop header, so it is one module-level tuple, named once
(`consts = (fimm("0f3E1039F6"), ...)`) and walked by every loop that reads it
(`for i, x in enumerate(consts):`), made only where its loops save
TABLE_MIN_SAVED lines more than the tuple's own lines.
"""

from __future__ import annotations

import re
import zlib

from ptx2py.transpile.format import LINE

from .ir import Call, Display, Kw, is_asm_bracket, layout_lines, stmt, taken_names
from .names import RESERVED

MAX_PERIOD = 64
NESTING = 2  # loop levels: `for j ...: for i ...:`
MIN_REPS = 3
LOOKAHEAD = (1, 2)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|(?<![\w.])[0-9]+(?![\w.])')
_VARS = ("i", "j", "k", "n", "m", "idx", "ii")
_COLUMNS = ("x", "y", "v", "w", "reg_", "col")
_REGREF = re.compile(r"[A-Za-z_]\w*\[[0-9]+\]\Z")
TABLE_MIN_PERIOD = 1  # a table loop's body has at least this many units
TABLE_MIN_REPS = 4  # and runs at least this often (three registers in a row are a coincidence)
TABLE_MIN_SAVED = 4


_FIMM = "fimm"
_LIT_SHAPE = ("\0lit",)  # the shape of a float literal slot: its value is an integer id


_LIT = re.compile(r'fimm\("[^"\\]*"\)\Z')


def _lit(e):
    """A float literal atom `fimm("0f3E1039F6")` as one slot, else None."""
    return e if e.__class__ is str and e.startswith(_FIMM) and _LIT.match(e) else None


def _lit_id(text: str) -> int:
    """An integer standing for a literal: equal texts are equal; distinct texts are never
    affine in practice (and a loop built from them is checked against the statements)."""
    return (zlib.crc32(text.encode()) << 20) + len(text)


def _atoms(e, out):
    c = e.__class__
    if c is str:
        out.append((e,) if _lit(e) is not None else e)  # a literal: one slot, apart from the text
    elif c is Call:
        out.append(e.head + "(")
        for i in e.items:
            _atoms(i, out)
    elif c is Kw:
        out.append(e.name + "=")
        _atoms(e.value, out)
    else:
        out.append(e.open)
        for i in e.items:
            _atoms(i, out)
    return out


def _split(atom):
    """(text parts, int values) of one atom, as tuples; ints inside string literals are text."""
    hit = _SPLITS.get(atom)
    if hit is not None:
        return hit
    parts, vals, pos = [], [], 0
    for m in _TOKEN.finditer(atom):
        g = m.group()
        if g[0] in "\"'":
            continue
        parts.append(atom[pos:m.start()])
        vals.append(int(g))
        pos = m.end()
    parts.append(atom[pos:])
    hit = (tuple(parts), tuple(vals))
    if len(_SPLITS) < 200_000:   # atoms repeat across statements and passes
        _SPLITS[atom] = hit
    return hit


_SPLITS: dict = {}


def template(s):
    """A hashable shape and the integer values of a simple statement (None if not simple)."""
    if s.prefix or s.trailer or s.expr.__class__ is not Call:
        return None
    shape, vals = [], []
    for a in _atoms(s.expr, []):
        if a.__class__ is tuple:
            shape.append(_LIT_SHAPE)
            vals.append(_lit_id(a[0]))
            continue
        p, v = _split(a)
        shape.append(tuple(p))
        vals.extend(v)
    return (s.depth, tuple(shape)), vals


def _returns(T, i, p) -> bool:
    """Whether unit i's shape comes back every p units for MIN_REPS repetitions."""
    shape = T[i][0]
    for r in range(1, MIN_REPS):
        t = T[i + r * p]
        if t is None or t[0] != shape:
            return False
    return True


def _affine(var, a, b):
    """`a + b*var` as Python (a >= 0; values stay >= 0 over the loop)."""
    if b == 0:
        return str(a)
    if b > 0:
        t = var if b == 1 else f"{b} * {var}"
        return t if a == 0 else f"{t} + {a}"
    t = var if b == -1 else f"{-b} * {var}"
    return f"{a} - {t}"


def _subst_atom(atom, coeffs, var):
    """Rewrite one atom; coeffs is an iterator of (a, b) for its ints. None if unsafe.

    A slice `r[221:225]` whose bounds vary is written as black writes it:
    `r[6 * i + 221 : 6 * i + 225]` (spaces around the colon of a complex slice)."""
    parts, vals = _split(atom)
    if not vals:
        return atom
    if len(vals) == 1 and _REGREF.match(atom):
        a, b = next(coeffs)
        if a.__class__ is str:  # a table loop's column: the register itself
            return a
        coeffs = iter([(a, b)])
    exprs, complex_ = [], []
    for k, _ in enumerate(vals):
        a, b = next(coeffs)
        if b != 0 and a < 0:
            return None
        exprs.append(str(a) if b == 0 else _affine(var, a, b))
        complex_.append(b != 0 and not (a == 0 and b == 1))
    out = [parts[0]]
    for k, e in enumerate(exprs):
        between_prev = k > 0 and parts[k].strip() == ":"
        between_next = k + 1 < len(exprs) and parts[k + 1].strip() == ":"
        if between_prev and (complex_[k - 1] or complex_[k]):
            out[-1] = " : "  # the colon between two slice bounds
        left, right = "".join(out).rstrip(), parts[k + 1].lstrip()
        if complex_[k] and not (between_prev or between_next) and (left.endswith(":") or right.startswith(":")):
            return None  # an open-ended slice bound
        tight_l = left == "" or left[-1] in "[(,{:"
        tight_r = right == "" or right[0] in "]),:}"
        # `x + (40 * j + 126)` is `x + 40 * j + 126`: ints add left to right
        flat_sum = left.endswith("+") and (tight_r or right[:1] in "+-") and _in_index(left)
        out.append(e if e.isdigit() or (tight_l and tight_r) or flat_sum else f"({e})")
        out.append(parts[k + 1])
    text = "".join(out)
    if " : " in text and ":-" in text:  # a reversed slice's step: `f[304 - 4 * i : 300 - 4 * i : -1]`
        text = text.replace(":-", " : -")
    return text


def _in_index(left: str) -> bool:
    """Whether the text ends inside a register index `r[...`: only ints are summed there
    (outside, `x + 1 + 2` could add to a register operand twice)."""
    depth = 0
    for k in range(len(left) - 1, -1, -1):
        c = left[k]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                return c == "[" and k > 0 and (left[k - 1].isalnum() or left[k - 1] == "_")
            depth -= 1
    return False


def _rebuild(e, coeffs, var):
    c = e.__class__
    if c is str and _lit(e) is not None:
        a, b = next(coeffs)
        if a.__class__ is str:  # a table loop's column
            return a
        if b != 0:
            raise _Unsafe
        return e
    if c is str:
        r = _subst_atom(e, coeffs, var)
        if r is None:
            raise _Unsafe
        return r
    if c is Call:
        h = _subst_atom(e.head + "(", coeffs, var)
        if h is None:
            raise _Unsafe
        return Call(h[:-1], [_rebuild(i, coeffs, var) for i in e.items])
    if c is Kw:
        return Kw(e.name, _rebuild(e.value, coeffs, var))
    return Display(e.open, e.close, [_rebuild(i, coeffs, var) for i in e.items])


class _Unsafe(Exception):
    pass


def _run_length(T, i, p, n):
    """How many repetitions of T[i:i+p] follow (affine integers), at least 1."""
    first = T[i:i + p]
    if any(t is None for t in first):
        return 1
    k = 1
    diffs = None
    while i + (k + 1) * p <= n:
        nxt = T[i + k * p:i + (k + 1) * p]
        ok = True
        for a, b in zip(first, nxt):
            if b is None or a[0] != b[0]:
                ok = False
                break
        if not ok:
            break
        if diffs is None:
            diffs = [[y - x for x, y in zip(a[1], b[1])] for a, b in zip(first, nxt)]
        else:
            prev = T[i + (k - 1) * p:i + k * p]
            if any(y - x != d for a, b, ds in zip(prev, nxt, diffs) for x, y, d in zip(a[1], b[1], ds)):
                break
        k += 1
    return k


def _units(stmts):
    """(start, end, template) per unit: one statement, or a whole block (`with asm(...):`,
    `for i in range(n):`) whose body is repeated as a unit; a block header is part of the shape."""
    units, i, n = [], 0, len(stmts)
    while i < n:
        s = stmts[i]
        if _is_block_header(s):
            j = i + 1
            while j < n and stmts[j].depth > s.depth:
                j += 1
            if j > i + 1:
                ts = [_header_template(x) if x.prefix else template(x) for x in stmts[i + 1:j]]
                if all(t is not None for t in ts):
                    shape = (_header_template(s)[0],) + tuple(t[0] for t in ts)
                    units.append((i, j, (shape, [v for t in ts for v in t[1]])))
                    i = j
                    continue
        units.append((i, i + 1, template(s)))
        i += 1
    return units


def _is_block_header(s) -> bool:
    if not s.trailer.endswith(":") or s.expr.__class__ is not Call:
        return False
    if s.prefix.startswith("for "):
        return True
    return is_asm_bracket(s)


def _header_template(s):
    """A nested header's shape (kept verbatim: the loop counts and prefixes must match)."""
    return ("hdr", s.depth, s.prefix, s.expr.flat(), s.trailer), []


def _instance(part, a0, a1, r, var, depth_shift=0, cols=(), col=None):
    """The statements of a unit with its integers at repetition r (b=0) or as `a + b*var` (r=None);
    the integer slots in `cols` are a table loop's column: the register atom `col` (r=None)."""
    if r is None:
        coeffs = iter([(col, 0) if k in cols else (x, y - x) for k, (x, y) in enumerate(zip(a0, a1))])
    else:
        coeffs = iter([(x + (y - x) * r, 0) for x, y in zip(a0, a1)])
        if cols:  # the check of a table loop: repetition r's own column register
            coeffs = iter([(c, 0) if k in cols else v for k, (v, c) in enumerate(zip(coeffs, col))])
    out = []
    for s in part:
        e = s.expr if s.prefix else _rebuild(s.expr, coeffs, var)
        out.append(stmt(e, s.depth + depth_shift, s.prefix, s.trailer))
    return out


def run(stmts, ctx):
    """Roll runs into loops, then runs of those loops (and statements) into outer loops."""
    taken = taken_names(stmts)
    free = [v for v in _VARS if v not in taken]
    cols = [c for c in _COLUMNS if c not in taken]
    allowed = None   # the literal columns that may be named: all, then those that pay
    for _ in range(3):
        consts = _Consts(allowed, taken)
        out = stmts
        for var, col in zip(free[:NESTING], cols):
            out = _fold(out, var, col, consts)
        worth = consts.worth()
        if worth >= set(consts.saved):   # every column a loop walks pays (others were only tried)
            return consts.finish(out)
        allowed = worth
    consts = _Consts(set(), taken)
    for var, col in zip(free[:NESTING], cols):
        stmts = _fold(stmts, var, col, consts)
    return stmts


class _Consts:
    """The module-level tuples of float literals that table loops walk: name per column,
    and the lines the loops reading each one saved."""

    def __init__(self, allowed, taken):
        self.allowed, self.taken = allowed, taken
        self.names: dict = {}
        self.saved: dict = {}

    def name(self, column):
        if self.allowed is not None and column not in self.allowed:
            return None
        if column not in self.names:
            k, base = len(self.names) + 1, "consts"
            name = base if k == 1 else f"{base}_{k}"
            while name in self.taken or name in RESERVED:
                k += 1
                name = f"{base}_{k}"
            self.names[column] = name
        return self.names[column]

    def used(self, column, saved):
        self.saved[column] = self.saved.get(column, 0) + saved

    def _definition(self, column):
        return stmt(Display("(", ")", list(column)), 0, self.names[column] + " = ")

    def worth(self) -> set:
        return {c for c in self.names
                if self.saved.get(c, 0) - layout_lines(self._definition(c).expr, 0, self.names[c] + " = ")
                >= TABLE_MIN_SAVED}

    def finish(self, out) -> list:
        """The tuples the loops walk, numbered in order, before the module; the loops renamed."""
        used = [c for c in self.names if c in self.saved]
        rename = {self.names[c]: ("consts" if k == 0 else f"consts_{k + 1}") for k, c in enumerate(used)}
        if any(n in self.taken or n in RESERVED for n in rename.values()):
            rename = {n: n for n in rename}   # a clash: keep the names that dodged it
        self.names = {c: rename[self.names[c]] for c in used}
        return [self._definition(c) for c in used] + [_renamed(s, rename) for s in out]


def _renamed(s, rename):
    """A loop header over a renamed literal column, else s."""
    e = s.expr
    if not s.prefix.startswith("for "):
        return s
    if e.__class__ is str and e in rename:
        return stmt(rename[e], s.depth, s.prefix, s.trailer)
    if e.__class__ is Call and e.head == "enumerate" and e.items[0].__class__ is str and e.items[0] in rename:
        return stmt(Call("enumerate", [rename[e.items[0]]]), s.depth, s.prefix, s.trailer)
    return s


def _slot_atoms(part):
    """Per integer slot of a unit (template order): its atom when that is a register `r[14]`, else None."""
    out = []
    for s in part:
        if s.prefix:
            continue
        for a in _atoms(s.expr, []):
            if a.__class__ is tuple:
                out.append(a[0])
                continue
            vals = _split(a)[1]
            reg = a if len(vals) == 1 and _REGREF.match(a) else None
            out.extend([reg] * len(vals))
    return out


def _table(stmts, units, T, i, p, n, atoms):
    """(repetitions, column slots per unit, column registers) of the longest table loop at unit i:
    repetitions of one shape whose integers are affine but for one register operand that takes
    another register each time (`for i, x in enumerate((r[14], r[23], r[26]))`), else None."""
    k = 1
    while i + (k + 1) * p <= n and all(T[i + k * p + j] is not None and T[i + k * p + j][0] == T[i + j][0]
                                       for j in range(p)):
        k += 1

    def regs_at(u):
        if u not in atoms:
            a, b, _ = units[u]
            atoms[u] = _slot_atoms(stmts[a:b])
        return atoms[u]

    for reps in range(k, TABLE_MIN_REPS - 1, -1):
        cols, column = [], None
        for j in range(p):
            vals = [T[i + r * p + j][1] for r in range(reps)]
            here = set()
            for slot in range(len(vals[0])):
                d = vals[1][slot] - vals[0][slot]
                if all(vals[r][slot] - vals[r - 1][slot] == d for r in range(2, reps)):
                    continue
                seq = tuple(regs_at(i + r * p + j)[slot] for r in range(reps))
                if None in seq or column is not None and seq != column:
                    break
                column = seq
                here.add(slot)
            else:
                cols.append(here)
                continue
            break
        else:
            if column is None:
                return None  # affine: a plain loop
            return reps, cols, column
    return None


def _continues(stmts, units, T, i, n, atoms, t) -> bool:
    """Whether the one-statement table run at unit i goes on from the unit before it."""
    if i == 0 or T[i - 1] is None or T[i - 1][0] != T[i][0]:
        return False
    before = _table(stmts, units, T, i - 1, 1, n, atoms)
    return before is not None and before[0] > t[0]


def _fold(stmts, var, col, consts):
    units = _units(stmts)
    T = [u[2] for u in units]
    out = []
    i, n = 0, len(units)
    memo, atoms = {}, {}
    occurrences: dict = {}   # shape -> the indexes of its units, ascending
    where = [0] * n          # unit -> its place in occurrences[its shape]
    next_none = [n] * (n + 1)
    for k in range(n - 1, -1, -1):
        next_none[k] = k if T[k] is None else next_none[k + 1]
    for k, t in enumerate(T):
        if t is not None:
            same = occurrences.setdefault(t[0], [])
            where[k] = len(same)
            same.append(k)

    def build(i, p, k, table):
        cols = table[1] if table else [()] * p
        try:
            body = []
            for j in range(p):
                a, b, _ = units[i + j]
                body += _instance(stmts[a:b], T[i + j][1], T[i + p + j][1], None, var, 1, cols[j], col)
            if not all(_lays_out(s) for s in body):
                return None
            if not _check(stmts, units[i:i + p * k], T, i, p, k, var, cols, atoms if table else None):
                return None
        except _Unsafe:
            return None
        depth = stmts[units[i][0]].depth
        if table is None:
            return stmt(Call("range", [str(k)]), depth, f"for {var} in ", ":"), body
        column = Display("(", ")", list(table[2]))
        if table[2][0].startswith(_FIMM + "("):  # literals: the column's module-level name
            column = consts.name(table[2])
            if column is None:
                return None
        used = re.compile(rf"(?<![\w.]){var}(?!\w)")
        counted = any(used.search(s.expr.flat()) for s in body)
        head = stmt(Call("enumerate", [column]), depth, f"for {var}, {col} in ", ":") if counted \
            else stmt(column, depth, f"for {col} in ", ":")
        if not _header_fits(head):
            return None
        return head, body

    def best_at(i):
        """(period, repetitions, lines saved, loop header, loop body) of the best checked run at unit i."""
        if i not in memo:
            cands = []
            if i < n and T[i] is not None:
                # every longer period than pmax holds a None unit or runs past the end
                pmax = min(MAX_PERIOD, next_none[i] - i, (n - i) // MIN_REPS)
                same = occurrences[T[i][0]]
                for q in range(where[i] + 1, len(same)):   # the periods at which unit i's shape comes back
                    p = same[q] - i
                    if p > pmax:
                        break
                    if not _returns(T, i, p):
                        continue  # the first unit does not come back every p units
                    k = _run_length(T, i, p, n)
                    size = units[i + p - 1][1] - units[i][0]
                    saved = (k - 1) * size - 1
                    if k >= MIN_REPS and saved > 0:
                        cands.append((-saved, p, k, len(cands), None))
                    if p >= TABLE_MIN_PERIOD:
                        t = _table(stmts, units, T, i, p, n, atoms)
                        if t is not None and p == 1 and _continues(stmts, units, T, i, n, atoms, t):
                            t = None   # the tail of a longer run (whose header did not fit): flat
                        if t is not None and t[0] > k and (t[0] - 1) * size - 1 >= TABLE_MIN_SAVED:
                            cands.append((1 - (t[0] - 1) * size, p, t[0], len(cands), t))
            best = None
            for saved, p, k, _, table in sorted(cands, key=lambda c: c[:4]):
                built = build(i, p, k, table)
                if built is not None:
                    best = (p, k, -saved, *built)
                    break
            memo[i] = best
        return memo[i]

    forced = -1
    while i < n:
        best = best_at(i)
        if best is not None and i != forced:
            # a run that starts one or two units later and saves more wins over this one
            here = best[2] + _saved(best_at(i + best[0] * best[1]))
            for d in LOOKAHEAD:
                later = best_at(i + d)
                if later is not None and best[0] * best[1] > d and (
                        later[2] + _saved(best_at(i + d + later[0] * later[1])) > here):
                    best, forced = None, i + d
                    break
        if best is not None:
            p, k, saved, head, body = best
            if head.expr.__class__ is not Call or head.expr.head != "range":
                column = head.expr.items[0] if head.expr.__class__ is Call else head.expr
                if column.__class__ is str:
                    consts.used(next(c for c, nm in consts.names.items() if nm == column), saved)
            out.append(head)
            out.extend(body)
            i += p * k
            continue
        a, b, _ = units[i]
        if b - a > 1:  # a block not repeated as a whole: its body may hold runs
            out.append(stmts[a])
            out.extend(_fold(stmts[a + 1:b], var, col, consts))
        else:
            out.append(stmts[a])
        i += 1
    return out


def _lays_out(s) -> bool:
    """Whether `format.layout` writes the statement as black would at its loop depth: a head
    with brackets of its own (`asm.at(1, 5, 0).wgmma...(`) that overflows is split by black
    inside that bracket, which `layout` does not predict."""
    e = s.expr
    if s.prefix.startswith("for "):   # a nested table loop's header, one level deeper now
        return _header_fits(s)
    if s.prefix or e.__class__ is not Call or "(" not in e.head:
        return True
    return 4 * s.depth + len(e.head) + 1 <= LINE


def _header_fits(s) -> bool:
    """Whether a loop header `for ... in <expr>:` is one line at its depth (its colon too)."""
    text = s.expr if s.expr.__class__ is str else s.expr.flat()
    return 4 * s.depth + len(s.prefix) + len(text) + len(s.trailer) <= LINE


def _saved(best):
    return 0 if best is None else best[2]


def _check(stmts, run_units, T, i, p, k, var, cols, atoms):
    """Verify by construction: repetition r of the template is the original statement
    (a table loop's column slots take repetition r's own register)."""
    for r in range(k):
        for j in range(p):
            a, b, _ = run_units[j]
            own = atoms[i + r * p + j] if atoms is not None and cols[j] else ()
            got = _instance(stmts[a:b], T[i + j][1], T[i + p + j][1], r, var, 0, cols[j], own)
            c, d, _ = run_units[r * p + j]
            want = stmts[c:d]
            if len(got) != len(want) or any(
                    (g.expr.flat(), g.prefix, g.trailer) != (w.expr.flat(), w.prefix, w.trailer)
                    for g, w in zip(got, want)):
                return False
    return True
