"""Coverage-driven launch scaling: grow a launch's problem size, within a budget, until the run
exercises the kernel's pipeline (every ring of stages refilled, every mbarrier's phase parity
wrapped, every group wait waiting), so a clean run or a match is evidence for the pipeline.

The knowledge comes from the launch description and the measured coverage, never from kernel
names:

* problem-size scalars: integer scalar arguments whose value (> 1) equals a dimension of a
  tensor argument or a factor of a buffer's element count. Scalars of equal value are one
  *size class* (a matmul's `K` and a stride equal to it): growing one grows them all, with the
  tensor dimensions and buffer counts tied to that value (contiguous strides recomputed);
* which class to grow: each is tried once at twice its value; the class whose run makes
  progress on what the launch left unexercised, at the least cost, is kept (a loop-trip scalar
  such as `K`, not a dimension that only adds CTAs: coverage is per CTA);
* how far: each step predicts, from the coverage measured so far, the value that closes the
  remaining gaps (a multiple of the original value, at most twice the current one);
* every step runs the base kernel with the sanitizer on; a step with a report (a scaling the
  kernel does not accept, such as a buffer this module could not tie) ends the search at the
  last clean launch.

It stops when the goal is met, when growing no longer changes the coverage (what is left is not
the launch's: an mbarrier used once by design), or when the next step would pass the budget in
thread-instructions (default 20 times the given launch's).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

BUDGET_FACTOR = 20          # default budget: this many times the given launch's thread-instructions
GOAL_REFILLS = 2            # a shared stage refilled twice: the ring of stages wrapped twice
GOAL_PHASES = 2             # an mbarrier's phase parity wrapped
INTEGER_DTYPES = {"i32", "i64", "u32", "u64", "int32", "int64", "uint32", "uint64"}
TENSOR_KINDS = {"tma-descriptor", "tensordesc", "tensormap", "array"}


# ------------------------------------------------------------------------- size classes
@dataclass
class SizeClass:
    value: int                    # the scalars' common value in the given launch
    scalars: list[str]            # argument names
    dims: list[tuple[str, int]]   # (tensor argument, dimension) equal to `tie`
    counts: dict[str, int] = field(default_factory=dict)   # buffer argument -> exponent of `tie` in its count
    tie: int = 0                  # the value the buffers were sized for (a reduced launch lowers the scalar only)

    @property
    def label(self) -> str:
        return "=".join(self.scalars)


def _integer_scalars(spec: dict) -> dict[str, int]:
    return {a["name"]: int(a["value"]) for a in spec["args"]
            if a["kind"] == "scalar" and str(a.get("dtype")) in INTEGER_DTYPES
            and isinstance(a.get("value"), int) and not isinstance(a.get("value"), bool) and a["value"] > 1}


def _exponent(count: int, value: int) -> int:
    """How many times `value` divides a buffer's element count."""
    e = 0
    while count > 1 and count % value == 0:
        count, e = count // value, e + 1
    return e


def size_classes(spec: dict, origin: dict | None = None) -> list[SizeClass]:
    """The problem-size scalars of a launch, grouped by value (see the module's docstring).
    `origin`: the launch `spec` was reduced from (reduced_launch lowers a scalar such as K and
    keeps the buffers): a lowered scalar is tied by its value there."""
    before = _integer_scalars(origin) if origin else {}
    groups: dict[tuple[int, int], list[str]] = {}
    for name, value in _integer_scalars(spec).items():
        groups.setdefault((value, before.get(name, value)), []).append(name)
    classes = []
    for (value, tie), names in sorted(groups.items()):
        dims = [(a["name"], i) for a in spec["args"] if a["kind"] in TENSOR_KINDS and "shape" in a
                for i, d in enumerate(a["shape"]) if int(d) == tie]
        counts = {a["name"]: e for a in spec["args"] if a["kind"] == "pointer" and "shape" not in a
                  and (e := _exponent(int(a.get("count", 0)), tie))}
        if dims or counts:
            classes.append(SizeClass(value, names, dims, counts, tie))
    return classes


def _contiguous(shape: list[int]) -> list[int]:
    return [math.prod(shape[i + 1:]) for i in range(len(shape))]


def grown(spec: dict, cls: SizeClass, value: int) -> dict:
    """The launch with a size class at `value`: its scalars and, past the size the buffers were
    made for, the tied tensor dimensions (contiguous strides recomputed; padded strides scaled
    with the dimension they step over) and buffer counts. The grid is kept: the CTAs that run
    are the ones coverage is measured in."""
    out = copy.deepcopy(spec)
    args = {a["name"]: a for a in out["args"]}
    for name in cls.scalars:
        args[name]["value"] = value
    tie = cls.tie or cls.value
    if value <= tie:                # the buffers already hold the problem at this size
        return out
    for name in {n for n, _ in cls.dims}:
        a = args[name]
        old = [int(x) for x in a["shape"]]
        a["shape"] = [value if (name, i) in cls.dims else d for i, d in enumerate(old)]
        if "strides" in a:
            was_contiguous = [int(s) for s in a["strides"]] == _contiguous(old)
            inner = [sum(1 for j in range(i + 1, len(old)) if (name, j) in cls.dims) for i in range(len(old))]
            a["strides"] = _contiguous(a["shape"]) if was_contiguous else \
                [int(st) * value ** n // tie ** n for st, n in zip(a["strides"], inner)]
        if "count" in a:
            n = sum(1 for m, _ in cls.dims if m == name)
            a["count"] = int(a["count"]) // tie ** n * value ** n
    for name, e in cls.counts.items():
        args[name]["count"] = int(args[name]["count"]) // tie ** e * value ** e
    return out


# ------------------------------------------------------------------------- coverage goals
def shortfalls(cov: dict) -> dict[str, tuple[int, int]]:
    """What a run's coverage lacks for the goal: metric -> (measured, wanted)."""
    out = {}
    refills = cov.get("stage_refills")
    if refills is not None and refills < GOAL_REFILLS:
        out["shared stages refilled"] = (refills, GOAL_REFILLS)
    for name, n in (cov.get("mbarrier_phases") or {}).items():
        if n < GOAL_PHASES:
            out[f"phases of mbarrier {name}"] = (n, GOAL_PHASES)
    for where, w in (cov.get("waits") or {}).items():
        if 0 < w["keep"] and w["max_outstanding"] <= w["keep"]:
            out[f"groups outstanding at {where}"] = (w["max_outstanding"], w["keep"] + 1)
    for where, b in (cov.get("barriers") or {}).items():
        if b["warps_reached"] < b["warps"]:
            out[f"warps at {where}"] = (b["warps_reached"], b["warps"])
    return out


def _measured(cov: dict, metric: str) -> int:
    """A shortfall metric's value in another run (0 when that run lacks it)."""
    if metric == "shared stages refilled":
        return cov.get("stage_refills") or 0
    if metric.startswith("phases of mbarrier "):
        return (cov.get("mbarrier_phases") or {}).get(metric[len("phases of mbarrier "):], 0)
    if metric.startswith("groups outstanding at "):
        return ((cov.get("waits") or {}).get(metric[len("groups outstanding at "):]) or {}).get("max_outstanding", 0)
    return ((cov.get("barriers") or {}).get(metric[len("warps at "):]) or {}).get("warps_reached", 0)


def progress(before: dict, after: dict) -> bool:
    """Whether a larger launch moved any of the earlier run's shortfalls towards the goal."""
    return any(_measured(after, m) > got for m, (got, _) in shortfalls(before).items())


def needed_value(points: list[tuple[int, dict]], unit: int) -> int:
    """The next value to try: each shortfall extrapolated linearly from the first measured point
    to the last; a multiple of `unit`, at least one unit more and at most twice the last value."""
    (v0, c0), (v1, c1) = points[0], points[-1]
    guesses = []
    for metric, (got, want) in shortfalls(c1).items():
        slope = (got - _measured(c0, metric)) / (v1 - v0) if v1 > v0 else 0
        if slope > 0:
            guesses.append(v1 + (want - got) / slope)
    guess = max(guesses, default=v1 + unit)
    return int(min(max(math.ceil(guess / unit) * unit, v1 + unit), 2 * v1))


# ------------------------------------------------------------------------- the search
@dataclass
class Scaling:
    launch: dict                 # the launch chosen (the given one when not scaled)
    result: object               # the base kernel's Result at that launch
    status: str                  # covered | budget | unchanged | report | found | no-scalar | base-report | not-needed
    budget: int
    spent: int = 0               # thread-instructions of the scaling runs (the given launch's not counted)
    cls: SizeClass | None = None
    value: int | None = None     # the class's value in the chosen launch
    steps: int = 0
    why: str = ""                # for report/unchanged: what stopped it

    @property
    def scaled(self) -> bool:
        return self.value is not None and self.cls is not None and self.value != self.cls.value

    def line(self) -> str:
        """What was run, in one line for `run` and `verify --run cpu`."""
        cost = f"{self.steps} step{'s' if self.steps != 1 else ''}, {_short(self.spent)} thread-instructions, " \
               f"budget {_short(self.budget)}"
        if self.status == "no-scalar":
            return ("coverage: launch not scaled: no integer scalar argument equals a dimension of a tensor "
                    "or a factor of a buffer's count (nothing to grow)")
        if self.status == "base-report":
            return "coverage: launch not scaled: the base kernel gets a report at the given launch"
        cls = self.cls
        head = f"coverage: launch scaled {cls.label} {cls.value} -> {self.value} ({cost})" \
            if cls is not None and self.scaled else f"coverage: launch not scaled ({cost})"
        tail = {"covered": "every ring of stages wrapped twice and no gap remains",
                "budget": "the budget was reached before the pipeline was exercised",
                "unchanged": f"growing {self.why} does not change what is left unexercised",
                "report": f"a larger launch gets a report, so it stops at the last clean one: {self.why}",
                "found": "the run at this launch gets a report (below)",
                "not-needed": "the given launch already exercises the pipeline"}
        return f"{head}: {tail[self.status]}"


def _short(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.0f}k" if n >= 1e3 else str(n)


def scale_for_coverage(spec: dict, given, run_at, budget: int | None = None, keep_reports: bool = False,
                       origin: dict | None = None) -> Scaling:
    """Grow `spec` (the launch `given`, a Result, ran at) until the kernel's coverage meets the
    goal. `run_at(spec)` runs the kernel (sanitizer on) and returns a Result, or raises
    EmulationError; budget: thread-instructions for all the scaling runs together. A run with a
    report ends the search: at the last clean launch (the base kernel of a comparison: a report
    means the scaling is not one the kernel accepts), or, with keep_reports (`run --cover` of
    the user's kernel: the report is the finding), at that launch. `origin`: the launch `spec`
    was reduced from (size_classes)."""
    from .errors import EmulationError

    cov0 = given.stats["coverage"]
    budget = budget or BUDGET_FACTOR * max(int(given.stats["thread_instructions"]), 1)
    best = Scaling(spec, given, "not-needed", budget)
    if not shortfalls(cov0) and not cov0.get("gaps"):
        return best
    if given.reports:               # the kernel is not clean at the given launch: nothing to grow from
        best.status = "base-report"
        return best
    classes = size_classes(spec, origin)
    if not classes:
        best.status = "no-scalar"
        return best
    cost0 = int(given.stats["thread_instructions"])

    def attempt(cls, value):
        """(Result, its spec) of one step, or (None, why) when the step is refused."""
        nonlocal best
        predicted = cost0 * value // cls.value if cls.value else cost0
        if best.spent + predicted > budget:
            return None, "budget"
        trial = grown(spec, cls, value)
        try:
            r = run_at(trial)
        except EmulationError as e:
            best.steps += 1
            return None, str(e).split("\n")[0]
        best.spent += int(r.stats["thread_instructions"])
        best.steps += 1
        if r.reports:
            if keep_reports:
                best.status, best.launch, best.result, best.cls, best.value = "found", trial, r, cls, value
            return None, r.reports[0].render().split("\n")[0]
        return r, trial

    # Which class: each tried once at twice its value; the cheapest that makes progress.
    tried, refused = [], []
    for cls in classes:
        r, trial = attempt(cls, 2 * cls.value)
        if r is not None and progress(cov0, r.stats["coverage"]):
            tried.append((int(r.stats["thread_instructions"]), cls, r, trial))
        elif r is None:
            refused.append(trial)
        if best.status == "found":
            return best
    if not tried:
        best.status = "budget" if "budget" in refused else "report" if refused else "unchanged"
        best.why = next((w for w in refused if w != "budget"), "") if refused else \
            " / ".join(c.label for c in classes)
        return best
    _, cls, r, trial = min(tried, key=lambda t: t[0])
    best.cls, best.value, best.launch, best.result = cls, 2 * cls.value, trial, r
    points = [(cls.value, cov0), (2 * cls.value, r.stats["coverage"])]
    while growing(points):
        value = needed_value(points, cls.value)
        r, trial = attempt(cls, value)
        if r is None and best.status == "found":
            return best
        if r is None:
            best.status, best.why = ("budget", "") if trial == "budget" else ("report", trial)
            return best
        if not progress(points[-1][1], r.stats["coverage"]):
            break
        points.append((value, r.stats["coverage"]))
        best.value, best.launch, best.result = value, trial, r
    left = shortfalls(points[-1][1])
    best.status = "unchanged" if left else "covered"
    best.why = f"{cls.label} ({', '.join(left)})" if left else ""
    return best


def growing(points: list[tuple[int, dict]]) -> list[str]:
    """The shortfalls of the last run that the growth so far has moved (one that stayed the same
    from the given launch to the last is not the launch's to close: an mbarrier used once)."""
    (_, first), (_, last) = points[0], points[-1]
    return [m for m in shortfalls(last) if _measured(last, m) != _measured(first, m)]
