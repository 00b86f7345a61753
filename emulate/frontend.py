"""The launch front end: a module (or its text), a launch sidecar (corpus/launch format, see
docs/launch_sidecar.schema.json) and inputs by parameter name -> Result(outputs, reports, stats).

Inputs missing from ``inputs`` are made from the sidecar's `init` with the same seeded generator,
in the same order, as the GPU runner (verify/gpu_run.py), so CPU and GPU runs see the same data.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from ptx2py.launch.plan import (
    InputsError,
    PlanError,
    entry_info,
    host_array,
    input_array,
    kernel_specs,
    launch_request,
    plan_arguments,
    scalar_bytes,
)

from .errors import EmulationError
from .machine import Machine
from .program import Program
from .sanitizer import Sanitizer
from .sync_coverage import coverage_of


@dataclass
class Result:
    outputs: dict            # parameter name -> numpy array (storage dtype), every buffer after the run
    reports: list            # sanitizer Reports
    stats: dict = field(default_factory=dict)
    executed: set = field(default_factory=set, repr=False)   # id() of every instruction that ran
    sync: object = field(default=None, repr=False)           # the SyncObserver, with observe=True

    @property
    def clean(self) -> bool:
        return not self.reports


def _module(module_or_text, filename):
    from ptx2py import ptxgrammar

    if isinstance(module_or_text, str):
        return ptxgrammar.parse(module_or_text, filename=filename), module_or_text
    return module_or_text, ptxgrammar.emit(module_or_text)


_PREPARED: dict = {}        # (text, filename) -> [module, Program or None] of the last text run


def _prepared(module_or_text, filename) -> list:
    """[module, text, program maker]. Runs of one text (each schedule, each kernel of a file)
    share its parse and preparation: a Program is only read by the machines that run it. A
    module object is prepared afresh (its owner may change it between runs)."""
    if not isinstance(module_or_text, str):
        module, text = _module(module_or_text, filename)
        return [module, text, lambda: Program(module, filename)]
    key = (module_or_text, filename)
    entry = _PREPARED.get(key)
    if entry is None:
        _PREPARED.clear()
        entry = _PREPARED[key] = [_module(module_or_text, filename)[0], None]

    def program() -> Program:
        if entry[1] is None:
            entry[1] = Program(entry[0], filename)
        return entry[1]
    return [entry[0], module_or_text, program]


def select_spec(launch: dict, kernel: str | None) -> dict:
    specs = kernel_specs(launch)
    if kernel is None:
        if len(specs) != 1:
            raise EmulationError("the launch describes several kernels "
                                 f"({', '.join(s.get('kernel', '?') for s in specs)}): name one with --kernel")
        return specs[0]
    for s in specs:
        if s.get("kernel") == kernel:
            return s
    raise EmulationError(f"the launch has no kernel {kernel} ({', '.join(s.get('kernel', '?') for s in specs)})")


def _scalar_raw(plan) -> bytes:
    if plan.role == "scalar":
        return scalar_bytes(plan)
    dt = {"i64": np.int64, "i32": np.int32, "i1": np.uint8}[plan.dtype]
    raw = np.array([int(plan.value or 0)], dt).tobytes()
    return raw[: plan.size].ljust(plan.size, b"\0")


def _tensor_map_param(machine, plan, spec, base, filename) -> bytes:
    """The 128 bytes of a CUtensorMap parameter: built from the request the GPU path encodes
    (the TensorMap checks what the hardware needs; launch.plan's stricter launch checks, such as
    a box that divides the tensor, are the GPU runner's)."""
    from ptx2py.launch.plan import tensor_map_request

    from .tensormaps import TensorMap, tensor_maps_of

    metas = list(spec.get("tensordesc_meta") or [])
    meta = metas[plan.value] if plan.value is not None and plan.value < len(metas) else None
    try:
        req = tensor_map_request(plan, meta, base)
    except PlanError as e:
        raise EmulationError(str(e)) from None
    return tensor_maps_of(machine).add(TensorMap(req, machine.globals.by_name(plan.arg)))


def run(module_or_text, launch: dict, inputs: dict | None = None, *, kernel: str | None = None,
        schedule: str = "inorder", sanitize: bool = True, disabled=(), filename: str = "<ptx>",
        max_steps: int | None = None, observe: bool = False, resident_ctas: int = 1,
        max_call_depth: int | None = None, progress=None) -> Result:
    """Run one kernel of a module on the CPU engine; observe=True records which synchronisation
    instructions order anything (Result.sync, a sync_observer.SyncObserver); resident_ctas > 1
    interleaves that many CTAs (a kernel whose CTAs wait for each other's flags or locks).
    The watchdog (watchdog.py) stops a block after `max_steps` warp-instructions and calls nested
    `max_call_depth` deep, with a located report; `progress(done, blocks)` is told as blocks finish."""
    _, text, prepare = _prepared(module_or_text, filename)
    spec = select_spec(launch, kernel)
    name = spec.get("kernel")
    try:
        entry = entry_info(text, name)
        plans = plan_arguments(entry, spec)
        req = launch_request(spec, entry)
    except PlanError as e:
        raise EmulationError(str(e)) from None
    program = prepare()
    sanitizer = Sanitizer(enabled=sanitize, disabled=disabled)
    machine = Machine(program, name, req["grid"], req["block"], req["shared"], sanitizer, schedule, max_steps,
                      resident_ctas, cluster_shape(spec, entry), max_call_depth)
    machine.progress = progress
    if observe:
        from .sync_observer import SyncObserver

        machine.observer = SyncObserver(machine)
    rng = np.random.default_rng(int(spec.get("seed", 0) or 0))
    inputs = dict(inputs or {})
    buffers = {}
    for p in plans:
        pname = p.param.name
        if p.role in ("buffer", "tensormap"):
            host = inputs.pop(p.arg, None)
            made = host_array(p, rng)              # always drawn: keeps the seeded stream aligned
            data = made if host is None else input_array(p, host, made)
            base = machine.add_buffer(p.arg, data)
            buffers[p.arg] = data.dtype
            if p.role == "tensormap":
                machine.set_param(pname, _tensor_map_param(machine, p, spec, base, filename))
            else:
                machine.set_param(pname, np.array([base], np.uint64).tobytes())
        elif p.role == "scratch":
            base = machine.add_buffer(p.arg, np.zeros(max(p.nbytes, 1), np.uint8)) if p.nbytes else 0
            machine.set_param(pname, np.array([base], np.uint64).tobytes())
        else:
            machine.set_param(pname, _scalar_raw(p))
    if inputs:
        raise InputsError(f"inputs for unknown parameters: {', '.join(sorted(inputs))} (the buffers: "
                          f"{', '.join(p.arg for p in plans if p.role in ('buffer', 'tensormap'))})")
    t0 = time.perf_counter()
    reports = machine.run()
    seconds = time.perf_counter() - t0
    outputs = {arg: machine.buffer(arg).view(dt).copy() for arg, dt in buffers.items()}
    stats = {"kernel": name, "grid": list(machine.grid), "block": list(machine.block),
             "warp_instructions": machine.steps, "thread_instructions": machine.thread_steps,
             "seconds": seconds, "schedule": schedule,
             "thread_instructions_per_second": machine.thread_steps / seconds if seconds > 0 else 0.0,
             "coverage": coverage_of(machine).summary()}
    executed = {id(s.code.instructions[i]) for s in machine.scopes.values()
                for i, op in enumerate(s.ops) if op is not None}
    return Result(outputs, reports, stats, executed, machine.observer)


def checked_launch(launch, ptx_text: str, kernel: str | None = None, name: str = "launch") -> dict:
    """A launch (a sidecar path or dict) validated before a run: the schema (launch.sidecar), then
    what it implies for the kernel's PTX (dynamic shared memory). SidecarError, located in the JSON."""
    from ptx2py.launch.sidecar import check_against_ptx, check_sidecar

    side = check_sidecar(launch, name)
    check_against_ptx(side, select_spec(side.data, kernel), ptx_text)
    return side.data


def seeded_inputs(module_or_text, launch: dict, kernel: str | None = None) -> dict:
    """The buffers `run` makes from the sidecar's `init` when given no inputs (the same seeded
    stream, in the same order), by argument name: the inputs a reference computes from."""
    _, text = _module(module_or_text, "<ptx>") if not isinstance(module_or_text, str) else (None, module_or_text)
    spec = select_spec(launch, kernel)
    try:
        plans = plan_arguments(entry_info(text, spec.get("kernel")), spec)
    except PlanError as e:
        raise EmulationError(str(e)) from None
    rng = np.random.default_rng(int(spec.get("seed", 0) or 0))
    return {p.arg: host_array(p, rng) for p in plans if p.role in ("buffer", "tensormap")}


def cluster_shape(spec: dict, entry) -> tuple:
    """The cluster of a launch: the entry's .reqnctapercluster, else the sidecar's `cluster`."""
    want = tuple(spec.get("cluster") or ()) or None
    if entry.cluster and want and tuple(entry.cluster) != want:
        raise EmulationError(f"the sidecar's cluster {list(want)} is not the entry's .reqnctapercluster "
                             f"{list(entry.cluster)}")
    return tuple(entry.cluster or want or (1, 1, 1))


# ------------------------------------------------------------------------------- reduced launches
_SIZE_NAMES = {"n", "N", "n_elements", "numel", "size", "count", "len", "length"}


def reduced_launch(spec: dict, max_ctas: int = 4, max_elements: int | None = None,
                   scalars: dict | None = None) -> dict:
    """A smaller launch for testing: at most `max_ctas` CTAs, the grid cut x first, then y, z.
    Buffers keep their sizes (every access stays in bounds); the CTAs that run compute exactly
    what they compute in the full launch. With `max_elements`, an integer scalar argument equal
    to a buffer's element count (a problem size `n`) is lowered to it, so grid-stride loops stay
    short. ``scalars`` lowers named integer scalars (a loop extent such as a matmul's `K`) to at
    most the given value. The spec's `reduced_min` keeps named scalars at least at its values
    (a kernel's own size precondition, such as a pipeline needing STAGES-1 K tiles)."""
    spec = copy.deepcopy(spec)
    floor = spec.get("reduced_min") or {}

    def lower(a, limit):
        a["value"] = min(a["value"], max(limit, floor.get(a["name"], limit)))

    for a in spec["args"]:
        limit = (scalars or {}).get(a["name"])
        if limit is not None and a["kind"] == "scalar" and isinstance(a.get("value"), int):
            lower(a, limit)
    if max_elements is not None:
        counts = {int(a["count"]) for a in spec["args"] if a["kind"] == "pointer" and "count" in a}
        for a in spec["args"]:
            v = a.get("value")
            if a["kind"] == "scalar" and isinstance(v, int) and v in counts and v > max_elements:
                lower(a, max_elements)
    grid = [int(g) for g in spec.get("grid", [1, 1, 1])] + [1] * (3 - len(spec.get("grid", [1])))
    x = min(grid[0], max_ctas)
    y = min(grid[1], max(1, max_ctas // x))
    z = min(grid[2], max(1, max_ctas // (x * y)))
    cluster = list(spec.get("cluster") or [1, 1, 1]) + [1] * (3 - len(spec.get("cluster") or [1]))
    spec["grid"] = [max(g, c) // c * c for g, c in zip((x, y, z), cluster)]   # whole clusters
    return spec
