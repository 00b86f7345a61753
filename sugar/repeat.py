"""Runs of statements that differ only by affine integers -> `for i in range(n):` loops.

A run is p statements repeated k times where every integer (outside string
literals) of repetition r is `a + b*r`. The loop body is repetition 0 with each
varying integer replaced by its expression in the loop variable, so running
the loop records exactly the original statements (checked: the body is
re-instantiated for every r and compared with the original text).
"""

from __future__ import annotations

import re

from .ir import Call, Display, Kw, stmt, taken_names

MAX_PERIOD = 16
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|(?<![\w.])[0-9]+(?![\w.])')
_VARS = ("i", "j", "k", "n", "m", "idx", "ii")


def _atoms(e, out):
    c = e.__class__
    if c is str:
        out.append(e)
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
    """(text parts, int values) of one atom; ints inside string literals are text."""
    parts, vals, pos = [], [], 0
    for m in _TOKEN.finditer(atom):
        g = m.group()
        if g[0] in "\"'":
            continue
        parts.append(atom[pos:m.start()])
        vals.append(int(g))
        pos = m.end()
    parts.append(atom[pos:])
    return parts, vals


def template(s):
    """A hashable shape and the integer values of a simple statement (None if not simple)."""
    if s.prefix or s.trailer or s.expr.__class__ is not Call:
        return None
    shape, vals = [], []
    for a in _atoms(s.expr, []):
        p, v = _split(a)
        shape.append(tuple(p))
        vals.extend(v)
    return (s.depth, tuple(shape)), vals


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
    """Rewrite one atom; coeffs is an iterator of (a, b) for its ints. None if unsafe."""
    parts, vals = _split(atom)
    if not vals:
        return atom
    out = [parts[0]]
    for k, _ in enumerate(vals):
        a, b = next(coeffs)
        before, after = "".join(out), parts[k + 1]
        if b == 0:
            out.append(str(a))
        else:
            e = _affine(var, a, b)
            left = before.rstrip()
            right = after.lstrip()
            if (left.endswith(":") or right.startswith(":")) and not (left == "" and right.startswith(":")):
                return None  # a slice bound: black spaces those differently
            if a < 0:
                return None
            tight_l = left == "" or left[-1] in "[(,{"
            tight_r = right == "" or right[0] in "]),:}"
            out.append(e if (tight_l and tight_r) else f"({e})")
        out.append(after)
    return "".join(out)


def _rebuild(e, coeffs, var):
    c = e.__class__
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


def run(stmts, ctx):
    taken = taken_names(stmts)
    var = next((v for v in _VARS if v not in taken), None)
    if var is None:
        return stmts
    T = [template(s) for s in stmts]
    out = []
    i, n = 0, len(stmts)
    while i < n:
        best = None
        if T[i] is not None:
            for p in range(1, MAX_PERIOD + 1):
                if i + 2 * p > n:
                    break
                k = _run_length(T, i, p, n)
                saved = (k - 1) * p - 1
                if k >= 2 and saved > 0 and (best is None or saved > best[2]):
                    best = (p, k, saved)
        if best is not None:
            p, k, _ = best
            try:
                body = []
                for j in range(p):
                    a0, a1 = T[i + j][1], T[i + p + j][1]
                    coeffs = iter([(x, y - x) for x, y in zip(a0, a1)])
                    body.append(stmt(_rebuild(stmts[i + j].expr, coeffs, var), stmts[i + j].depth + 1))
                if _check(body, stmts[i:i + p * k], p, k, var):
                    out.append(stmt(Call("range", [str(k)]), stmts[i].depth, f"for {var} in ", ":"))
                    out.extend(body)
                    i += p * k
                    continue
            except _Unsafe:
                pass
        out.append(stmts[i])
        i += 1
    return out


def _check(body, original, p, k, var):
    """Verify by construction: repetition r of the template is the original statement."""
    for r in range(k):
        for j in range(p):
            a0, a1 = _T(original[j]), _T(original[p + j])
            coeffs = iter([(x + (y - x) * r, 0) for x, y in zip(a0, a1)])
            if _rebuild(original[j].expr, coeffs, var).flat() != original[r * p + j].expr.flat():
                return False
    return True


def _T(s):
    return template(s)[1]
