"""Data movement: mov, selp, cvta, ld/ldu/st (every space, width and vector), and the
instructions whose only effect is on caches or ordering (prefetch, fence, membar)."""

from __future__ import annotations

import numpy as np

from ptx2py.ptxgrammar.tree import Address, Vector

from .. import memory as M
from ..errors import NotEmulated
from ..types import TYPES, UINT
from . import cluster
from .common import resolve_param_space, space_of, type_of, vector_of


def _mov(instr, scope):
    ptype = type_of(instr)
    d, a = instr.operands[:2]
    dec = scope.decoder
    if ptype.bits == 128:
        raise NotEmulated(instr.name)
    read, write = dec.reader(a, ptype), dec.writer(d, ptype)
    return lambda w, m: write(w, m, read(w, m))


def _cvta(instr, scope):
    mods = instr.modifiers
    to = ".to" in mods
    space = space_of(mods)
    if space == "kparam" or space == "param":
        space = "param"
    if space not in ("global", "shared", "local", "param", "const"):
        raise NotEmulated(instr.name)
    ptype = type_of(instr)
    if ptype.bits == 32 and not to and space != "global":
        raise NotEmulated(f"{instr.name} (32-bit generic addresses)")
    base = np.uint64(M.WINDOW_BASE[space])
    d, a = instr.operands
    read, write = scope.decoder.reader(a, TYPES[".u64"]), scope.decoder.writer(d, TYPES[".u64"])
    if space == "local":      # generic local addresses are absolute: the frame's base in or out
        frame = lambda w: np.uint64(w.stack[-1][3].local_base)  # noqa: E731
        if to:
            return lambda w, m: write(w, m, read(w, m) - base - frame(w))
        return lambda w, m: write(w, m, read(w, m) + base + frame(w))
    if to:
        return lambda w, m: write(w, m, read(w, m) - base)
    return lambda w, m: write(w, m, read(w, m) + base)


def _access(instr, scope):
    """(space, element type, vector count, address function) of an ld/st."""
    mods = instr.modifiers
    ptype = type_of(instr)
    count = vector_of(mods)
    addr_node = next(o for o in instr.operands if isinstance(o, Address))
    address = scope.decoder.address(addr_node)
    return space_of(mods), ptype, count, address


def _element_writers(dec, node, ptype, count):
    items = node.items if isinstance(node, Vector) else (node,)
    if len(items) != count:
        raise NotEmulated(f"vector of {len(items)} operands for .v{count}")
    return [dec.writer(item, ptype) for item in items]


def _ld(instr, scope):
    space, ptype, count, address = _access(instr, scope)
    if ptype.bits == 128 or ptype.bits == 0:
        raise NotEmulated(instr.name)
    writers = _element_writers(scope.decoder, instr.operands[0], ptype, count)
    elem = ptype.nbytes
    nbytes = elem * count
    container = UINT[ptype.bits]
    machine = scope.machine

    def run(w, m):
        addrs, sym_space = address(w, m)
        rows = machine.load(w, m, resolve_param_space(space, sym_space, scope), addrs, nbytes)
        for k, wr in enumerate(writers):
            wr(w, m, M.from_bytes(rows[:, k * elem:(k + 1) * elem], container))
    return run


def _st(instr, scope):
    space, ptype, count, address = _access(instr, scope)
    if ptype.bits == 128 or ptype.bits == 0:
        raise NotEmulated(instr.name)
    src = instr.operands[1]
    items = src.items if isinstance(src, Vector) else (src,)
    if len(items) != count:
        raise NotEmulated(f"vector of {len(items)} operands for .v{count}")
    readers = [scope.decoder.reader(item, ptype) for item in items]
    elem = ptype.nbytes
    machine = scope.machine

    def run(w, m):
        addrs, sym_space = address(w, m)
        rows = np.concatenate([M.bytes_of(r(w, m), elem) for r in readers], axis=1) if count > 1 \
            else M.bytes_of(readers[0](w, m), elem)
        machine.store(w, m, resolve_param_space(space, sym_space, scope), addrs, rows)
    return run


def _isspacep(instr, scope):
    """isspacep.space p, a: whether a generic address falls in the space's window."""
    space = space_of(instr.modifiers)
    if space not in ("global", "shared", "local", "param", "kparam", "const"):
        raise NotEmulated(instr.name)
    want = {"kparam": "param", "const": "global"}.get(space, space)
    p, a = instr.operands
    read, write = scope.decoder.reader(a, TYPES[".u64"]), scope.decoder.writer(p, TYPES[".pred"])
    return lambda w, m: write(w, m, M.window_of(read(w, m)) == want)


def _nothing(instr, scope):
    """Cache hints and orderings: the engine's memory is always coherent and in order."""
    return lambda w, m: None


HANDLERS = {
    "mov": _mov, "cvta": _cvta, "ld": _ld, "ldu": _ld, "st": _st,
    "prefetch": _nothing, "prefetchu": _nothing, "fence": _nothing, "membar": _nothing,
    "isspacep": _isspacep, "mapa": cluster.mapa, "getctarank": cluster.getctarank, "griddepcontrol": _nothing,
            "nanosleep": _nothing, "pmevent": _nothing, "discard": _nothing, "applypriority": _nothing,
    "createpolicy": lambda instr, scope: _zero_policy(instr, scope),
}


def _zero_policy(instr, scope):
    """createpolicy: a cache-policy word the engine never reads back; 0."""
    write = scope.decoder.writer(instr.operands[0], TYPES[".b64"])
    return lambda w, m: write(w, m, np.zeros(int(m.sum()), np.uint64))
