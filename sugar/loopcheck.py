"""Checks `--sugar` Python's raised control flow against the PTX's control-flow graph
(`analysis`): every `with loop(...)` is a natural loop, every `break_if`/`break_to`
leaves the loop it sits in, no `skip_if`/`if_` is a loop exit, every `else_` is the other branch
of the block before it (entered only by its branch, its join reached by a jump). Counts the back
edges raised.

    report = check(ptx_text, sugar_python)
    report.back_edges, report.raised, report.errors
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ptx2py import ptxgrammar
from ptx2py.analysis import dominators, function_cfg, natural_loops
from ptx2py.transpile.dsl import control


@dataclass
class Report:
    back_edges: int = 0
    raised: int = 0
    errors: list = field(default_factory=list)


class _Labels:
    """Label spelling of a label expression of the generated Python (`L.bb0_3`, `"waitLoop"`)."""

    def __init__(self, tree):
        self.table = control.L
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id == "L" and isinstance(node.value, ast.Call):
                self.table = eval(compile(ast.Expression(node.value), "<labels>", "eval"),  # noqa: S307
                                  {"labels": control.labels})

    def spelling(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "L":
            return getattr(self.table, node.attr)
        return None


def _cfg_loops(module):
    """label spelling -> [(function index, block)], and each function's (graph, loops)."""
    where, graphs = {}, []
    for f in module.functions:
        if f.body is None:
            continue
        g = function_cfg(f)
        loops = natural_loops(g, dominators(g))
        fi = len(graphs)
        graphs.append((g, loops))
        for (scope, name), b in g.label_block.items():
            where.setdefault(name, []).append((fi, b))
    return where, graphs


def _kw(call, name):
    return next((k.value for k in call.keywords if k.arg == name), None)


def check(text: str, src: str) -> Report:
    module = ptxgrammar.parse(text)
    where, graphs = _cfg_loops(module)
    rep = Report(back_edges=sum(len(lp.latches) for _, loops in graphs for lp in loops))
    tree = ast.parse(src)
    names = _Labels(tree)
    raised = set()

    seen: dict = {}  # label spelling -> how many of its definitions the walk has passed

    def locate(node, defines=False):
        """(spelling, (function, block)) of a label expression; a spelling defined more than
        once (scoped labels: `waitLoop`) is known only where the walk defines it, in order."""
        spelled = names.spelling(node) if node is not None else None
        return _at(spelled, defines)

    def _at(spelled, defines):
        got = where.get(spelled, [])
        if defines:
            n = seen.get(spelled, 0)
            seen[spelled] = n + 1
            return spelled, (got[n] if n < len(got) else None)
        return spelled, (got[0] if len(got) == 1 else None)

    def spin_wait(call):
        form = _kw(call, "form")
        form = form.value if isinstance(form, ast.Constant) else "triton"
        _, at = _at(control.SPIN_WAITS[form][1], True)
        lp = loop_of(*at) if at is not None else None
        if lp is not None:
            raised.add((at[0], lp.header))

    def loop_of(fi, b):
        return next((lp for lp in graphs[fi][1] if lp.header == b), None)

    def visit(body, stack):
        prev = None
        for node in body:
            inner = stack
            if isinstance(node, ast.With):
                call = node.items[0].context_expr
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                    if call.func.id == "else_":
                        check_else(call, prev)
                    inner = _with(call, stack)
            elif isinstance(node, ast.Expr) and isinstance(node.value,
                                                           ast.Call) and _callee(node.value) == "mbarrier_wait":
                spin_wait(node.value)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _callee(node.value) == "label" \
                    and node.value.args:
                locate(node.value.args[0], True)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and isinstance(node.value.func, ast.Name) and node.value.func.id in ("break_if", "break_to"):
                call = node.value
                target = _kw(call, "to") if call.func.id == "break_if" else call.args[0]
                spelled, at = locate(target)
                if stack and stack[-1] is not None and at is not None:
                    fi, lp = stack[-1]
                    if at[0] == fi and at[1] in lp.blocks:
                        rep.errors.append(f"{call.func.id} to {spelled} stays inside its loop")
                elif not stack:
                    rep.errors.append(f"{call.func.id} to {spelled} outside any loop")
            for child in ("body", "orelse"):
                if hasattr(node, child) and isinstance(getattr(node, child), list):
                    visit(getattr(node, child), inner)
            prev = node

    def check_else(call, prev):
        """`with else_(to=J)` follows an `if_`/`skip_if` to A whose body ends in `bra J`, and in
        the graph A is entered only by that branch (nothing falls into it) and J by the jump."""
        head = prev.items[0].context_expr if isinstance(prev, ast.With) else None
        spelled, join = locate(_kw(call, "to"))
        if not (isinstance(head, ast.Call) and isinstance(head.func, ast.Name) and head.func.id in ("if_", "skip_if")):
            rep.errors.append(f"else_ to {spelled} follows no if_ block")
            return
        last = prev.body[-1]
        jump = last.value if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) else None
        to = jump.args[0] if jump is not None and len(jump.args) == 1 else None
        if to is None or ast.unparse(jump.func) not in ("ptx.bra", "ptx.bra.uni") or jump.keywords \
                or names.spelling(to.args[0] if isinstance(to, ast.Call) and to.args else None) != spelled:
            rep.errors.append(f"else_ to {spelled}: the if_ block does not end in bra {spelled}")
            return
        _, other = locate(_kw(head, "to"))
        if other is None or join is None or other[0] != join[0]:
            return
        g = graphs[other[0]][0]
        b = other[1]
        if b - 1 in g.blocks[b].pred and not _branches_to(g, b - 1, b):
            rep.errors.append(f"else_ to {spelled}: the block before it falls into the other branch")
        if not any(_branches_to(g, p, join[1]) for p in g.blocks[join[1]].pred):
            rep.errors.append(f"else_ to {spelled}: no branch reaches the join")

    def _with(call, stack):
        name = call.func.id
        if name == "loop":
            enter = _kw(call, "enter")
            spelled, top = locate(call.args[0], True)
            spelled, at = locate(enter, True) if enter is not None and names.spelling(enter) != spelled \
                else (spelled, top)
            if at is None:
                return stack + [None]
            lp = loop_of(*at)
            if lp is None:
                rep.errors.append(f"loop at {spelled} is no natural loop's header")
                return stack + [None]
            raised.add((at[0], lp.header))
            return stack + [(at[0], lp)]
        if name in ("skip_if", "if_"):
            spelled, at = locate(_kw(call, "to"))
            if at is not None:
                fi, b = at
                g, loops = graphs[fi]
                srcs = [p for p in g.blocks[b].pred if p != b - 1 or _branches_to(g, p, b)]
                if srcs and all(any(p in lp.blocks and b not in lp.blocks for lp in loops) for p in srcs):
                    rep.errors.append(f"{name} to {spelled} is a loop exit")
        return stack

    visit(tree.body, [])
    rep.raised = sum(len(lp.latches) for fi, (_, loops) in enumerate(graphs) for lp in loops
                     if (fi, lp.header) in raised)
    return rep


def _callee(call) -> str | None:
    """The last name of a call's callee: `mbarrier_wait` of `asm.at(1, 2, 3).mbarrier_wait(...)`."""
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _branches_to(g, p, b):
    """Block p's last statement branches to block b (rather than only falling into it)."""
    from ptx2py.analysis.cfg import BRANCHES

    blk = g.blocks[p]
    last = g.items[blk.end - 1] if blk.end > blk.start else None
    return getattr(last, "opcode", None) in BRANCHES and any(
        getattr(o, "name", None) in {n for _, n in g.blocks[b].labels} for o in last.operands)
