"""Register names carried along the data flow from values already named (for sugar/valuenames.py):

    ptx.cvta.to.global_.u64(x_g := rd[1], x)
    ptx.add.s64(x_ptr := rd[5], x_g, rd[4])          # an address into x: x's base plus an offset
    ptx.ld.global_.nc.f32(x_val := f[7], [x_ptr])    # what is loaded from there (or stored)
    ptx.mad.lo.s32(gid_x := r[4], ctaid_x, ntid_x, tid_x)   # blockIdx.x * blockDim.x + threadIdx.x
    ptx.setp.ge.u32(i_ge_n := p[2], i, n)            # a comparison of named values
    ptx.fma.rn.f32(acc := f[3], a_val, b_val, acc)   # a value each definition updates (or a constant)
    ptx.shfl.sync.down.b32(..., delta16, clamp, mask)   # a shuffle's constant operands

An address stays an address into its base through `add`, `sub` (the base first), `mad` (the base
added) and copies; a register written more than once is named only when every definition gives
it the same role (nvcc's pointer bumped in a loop: `add.s64 %rd5, %rd5, 4` stays `x_ptr`).
Operand roles come from the ISA's operand order (`shfl.sync d|p, a, b, c, membermask`).
"""

from __future__ import annotations

import re

from .ir import Display

# the bases an address keeps: a pointer's conversions and a variable's address (valuenames' suffixes)
_BASE_SUFFIXES = ("_g", "_s", "_p", "_gen", "_addr", "_ptr")
# opcode lead -> the positions (after the destination) of the operand an address may come from
_ADDITIVE = (("add.", (1, 2)), ("sub.", (1,)), ("mad.lo.", (3,)), ("mad.wide.", (3,)), ("cvta.", (1,)),
             ("mov.b64", (1,)), ("mov.u64", (1,)), ("mov.b32", (1,)), ("mov.u32", (1,)))
# loads from memory named after what they read (never `ld.param`: valuenames names those)
_LOADS = ("ld.", "ldu.")
# (opcode lead, operand position, role): the constant operands of warp-level calls, by the ISA's order
_OPERAND_ROLES = (("shfl.sync.bfly.", 2, "lanemask"), ("shfl.sync.down.", 2, "delta"), ("shfl.sync.up.", 2, "delta"),
                  ("shfl.sync.idx.", 2, "lane"), ("shfl.sync.", 3, "clamp"), ("shfl.sync.", 4, "mask"),
                  ("redux.sync.", 2, "mask"), ("vote.sync.", 2, "mask"),
                  ("bar.warp.sync", 0, "mask"))
_VALUED = frozenset({"lanemask", "delta", "lane"})  # differ per call: named with their value
_COMPARE = re.compile(r"setp\.(eq|ne|lt|le|gt|ge|lo|ls|hi|hs)\.[a-z0-9]+")
_INT = re.compile(r"-?[0-9]+")


def _base(name: str) -> str:
    """`x_ptr_g` -> `x`: the buffer a pointer's name says it points into."""
    for suffix in _BASE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return _base(name[: -len(suffix)])
    return name


def _word(op, named, pattern):
    """How a comparison's operand reads in a name: a named register's name, an integer, else None."""
    if op.__class__ is not str:
        return None
    if pattern.fullmatch(op):
        return named.get(op)
    if _INT.fullmatch(op):
        return op.replace("-", "m")
    return None


def _address(op, pattern):
    """The register an address operand `[r]` / `[r + 8]` reads, else None."""
    if op.__class__ is not Display or op.open != "[" or len(op.items) != 1 or op.items[0].__class__ is not str:
        return None
    m = pattern.match(op.items[0])
    return m.group(0) if m and op.items[0][m.end():].strip()[:1] in ("", "+", "-") else None


_TOP = object()   # no definition seen yet that says what the register is


def _additive(opcode):
    return next((ks for lead, ks in _ADDITIVE if opcode.startswith(lead)), None)


def _pointer(opcode, pos, value, pattern):
    """The base one definition makes its destination point into, _TOP (its address operands are
    not known yet) or None (no address)."""
    ks = _additive(opcode)
    if ks is None:
        return None
    regs = [k for k in range(1, len(pos)) if pos[k].__class__ is str and pattern.fullmatch(pos[k])]
    based = [k for k in regs if value.get(pos[k], _TOP) not in (_TOP, None)]
    if based:
        return value[pos[based[0]]] if len(based) == 1 and based[0] in ks else None
    return _TOP if any(k in ks and value.get(pos[k], _TOP) is _TOP for k in regs) else None


def pointer_bases(insns, seeds, pattern) -> dict:
    """{register: the base it points into}: the seeds, and every register whose definitions all
    add an offset to an address into one base (optimistic over loops: a definition that reads only
    registers not yet known says nothing)."""
    defs: dict = {}
    for opcode, pos, dests in insns:
        for d in dests:
            defs.setdefault(d, []).append((opcode, pos) if len(dests) == 1 else ("", ()))
    value = dict(seeds)
    for _ in range(8):   # a few rounds settle nested address chains; more changes nothing seen
        changed = False
        for reg, ds in defs.items():
            if reg in seeds:
                continue
            known = [b for b in (_pointer(o, p, value, pattern) for o, p in ds) if b is not _TOP]
            new = known[0] if known and all(b == known[0] for b in known) else (None if known else _TOP)
            if value.get(reg, _TOP) is not new and value.get(reg, _TOP) != new:
                value[reg], changed = new, True
        if not changed:
            break
    return {r: b for r, b in value.items() if b not in (_TOP, None)}


def _role(opcode, pos, named, bases, pattern):
    """("ptr" | "val" | "name", what) of one definition, else None."""
    if _additive(opcode) is not None:
        return None   # an address (pointer_bases) or nothing
    if opcode.startswith(_LOADS) and not opcode.startswith("ld.param") and len(pos) == 2:
        reg = _address(pos[1], pattern)
        if reg is not None and reg in bases:
            return ("val", bases[reg])
    m = _COMPARE.match(opcode)
    if m and len(pos) == 3:
        a, b = (_word(x, named, pattern) for x in pos[1:])
        if a is not None and b is not None and a.isidentifier():
            return ("name", f"{a}_{m.group(1)}_{b}")
    return None


def operand_roles(insns, pattern) -> dict:
    """{register: role} of the constants the ISA gives a role (a shuffle's clamp and member mask),
    where every use agrees (None: they do not); a lane offset is named with its value (`delta16`)."""
    values = {pos[0]: pos[1] for opcode, pos, dests in insns if opcode.startswith("mov.") and len(dests) == 1
              and len(pos) == 2 and pos[1].__class__ is str and _INT.fullmatch(pos[1])}
    out: dict = {}
    for opcode, pos, _ in insns:
        for lead, k, role in _OPERAND_ROLES:
            reg = pos[k] if k < len(pos) else None
            if opcode.startswith(lead) and reg in values:
                role = role + values[reg].replace("-", "m") if role in _VALUED else role
                out[reg] = role if out.get(reg, role) == role else None
    return out


def _constant(op, pattern) -> bool:
    return op.__class__ is not Display and not (op.__class__ is str and pattern.search(op))


def _carried(opcode, pos, d, pattern):
    """What one definition of `d` says of a loop-carried value: "init" (a constant or a special
    register moved in), "step" (`add d, d, 64`), "stride" (`add d, d, x`), "update" (another
    instruction that reads `d` back: `fma d, a, b, d`), else None."""
    if opcode.startswith("mov.") and len(pos) == 2 and _constant(pos[1], pattern):
        return "init"
    if opcode.startswith("mov.") or d not in pos[1:]:
        return None
    if opcode.startswith(("add.", "sub.")) and len(pos) == 3 and pos[1] == d:
        return "step" if _INT.fullmatch(str(pos[2])) else "stride"
    return "update"


def carried_roles(insns, pattern) -> dict:
    """{register: "iv" | "acc"} of the registers every definition of which is an initial value or
    an update from the register itself (at least one of each): "iv" where each update adds a
    constant, or adds a step and a `setp` tests it (a loop's counter), "acc" otherwise (a running
    sum, max, product)."""
    kinds: dict = {}
    tested = {op for opcode, pos, _ in insns if opcode.startswith("setp.") for op in pos[1:]}
    for opcode, pos, dests in insns:
        for d in dests:
            kinds.setdefault(d, set()).add(_carried(opcode, pos, d, pattern) if len(dests) == 1 else None)
    out = {}
    for reg, ks in kinds.items():
        if None not in ks and "init" in ks and ks - {"init"}:
            steps = ks - {"init"}
            out[reg] = "iv" if steps == {"step"} or steps <= {"step", "stride"} and reg in tested else "acc"
    return out


# what the other operand of an address computation is: a byte offset (`add p, base, off`), and
# before it the element index it scales (`shl off, idx, 2`, `mul.wide off, idx, 4`: by a constant)
_OFFSET_LEADS = ("add.", "sub.")
_SCALES = ("shl.", "mul.wide.", "mul.lo.")


def _is_reg(op, pattern) -> bool:
    return op.__class__ is str and pattern.fullmatch(op) is not None


def offset_roles(insns, bases, pattern) -> dict:
    """{register: (role, base or None)}: the byte offsets added to an address into a base ("off")
    and the element indices they scale ("idx"); None where the uses disagree on the base."""
    single: dict = {}
    count: dict = {}
    for opcode, pos, dests in insns:
        for d in dests:
            count[d] = count.get(d, 0) + 1
            single[d] = (opcode, pos) if len(dests) == 1 else None
    uses: dict = {}
    for opcode, pos, dests in insns:
        if len(dests) == 1 and dests[0] in bases and opcode.startswith(_OFFSET_LEADS):
            for op in pos[1:]:
                if _is_reg(op, pattern) and op not in bases:
                    uses.setdefault(op, set()).add(("off", bases[dests[0]]))
    out: dict = {}
    for reg, found in list(uses.items()):
        scale = single.get(reg) if count.get(reg) == 1 else None
        if scale and scale[0].startswith(_SCALES) and len(scale[1]) == 3 and _INT.fullmatch(str(scale[1][2])) \
                and _is_reg(scale[1][1], pattern) and scale[1][1] not in bases:
            uses.setdefault(scale[1][1], set()).update(("idx", b) for _, b in found)
    for reg, found in uses.items():
        if count.get(reg) != 1 or len({r for r, _ in found}) != 1:
            continue
        role = next(iter(found))[0]
        out[reg] = (role, next(iter(found))[1] if len(found) == 1 else None)
    return out


_SREG = re.compile(r"(ctaid|ntid|tid)_([xyz])(?:_[0-9]+)?")


def _axis(op, named, kind):
    """The axis of an operand named after the special register `kind` (`ctaid_x` -> "x")."""
    m = _SREG.fullmatch(named.get(op, "")) if op.__class__ is str else None
    return m.group(2) if m and m.group(1) == kind else None


def global_indices(insns, named) -> dict:
    """{register: "gid_x"} of `blockIdx.x * blockDim.x + threadIdx.x`: `mad.lo d, ctaid, ntid, tid`
    (either order of the product), or `add d, t, tid` of `mul.lo t, ctaid, ntid`, one axis."""
    products = {}
    out = {}
    for opcode, pos, dests in insns:
        if len(dests) != 1 or len(pos) < 3:
            continue
        pair = {_axis(pos[1], named, "ctaid"), _axis(pos[2], named, "ctaid")} - {None}
        if opcode.startswith(("mad.lo.", "mul.lo.")) and len(pair) == 1:
            axis = pair.pop()
            other = pos[2] if _axis(pos[1], named, "ctaid") else pos[1]
            if _axis(other, named, "ntid") == axis:
                if opcode.startswith("mul.lo.") and len(pos) == 3:
                    products[dests[0]] = axis
                elif len(pos) == 4 and _axis(pos[3], named, "tid") == axis:
                    out[dests[0]] = f"gid_{axis}"
        if opcode.startswith("add.") and len(pos) == 3:
            for a, b in ((pos[1], pos[2]), (pos[2], pos[1])):
                if products.get(a) is not None and _axis(b, named, "tid") == products[a]:
                    out[dests[0]] = f"gid_{products[a]}"
    return out


def stored_roles(insns, bases, pattern) -> dict:
    """{register: base} of the values stored to an address into a named base (`st [x_ptr], v`:
    `x_val`), None where the stores disagree on the base."""
    out: dict = {}
    for opcode, pos, _ in insns:
        if opcode.startswith("st.") and not opcode.startswith("st.param") and len(pos) == 2 \
                and _is_reg(pos[1], pattern):
            reg = _address(pos[0], pattern)
            base = bases.get(reg) if reg is not None else None
            out[pos[1]] = base if out.get(pos[1], base) == base else None
    return out


def flow_names(insns, named, pattern, name_of) -> None:
    """Name in `named` (through `name_of(base)`) the registers not named yet whose every definition
    has one role: addresses into a named base, values loaded from them, comparisons of names."""
    seeds = {r: _base(n) for r, n in named.items() if n.endswith(_BASE_SUFFIXES)}
    bases = pointer_bases(insns, seeds, pattern)
    for reg in sorted(set(bases) - set(named), key=lambda r: _first_def(insns, r)):
        named[reg] = name_of(f"{bases[reg]}_ptr")
    for reg, role in carried_roles(insns, pattern).items():
        if reg not in named:
            named[reg] = name_of(role)
    counts: dict = {}
    for _, _, dests in insns:
        for d in dests:
            counts[d] = counts.get(d, 0) + 1
    for reg, name in global_indices(insns, named).items():
        if reg not in named and counts[reg] == 1:
            named[reg] = name_of(name)
    offsets = offset_roles(insns, bases, pattern)
    for reg, (role, base) in sorted(offsets.items(), key=lambda kv: _first_def(insns, kv[0])):
        if reg not in named:
            named[reg] = name_of(role if base is None else f"{base}_{role}")
    for _ in range(2):   # a comparison of a loaded value: named in the second round
        roles: dict = {}
        for opcode, pos, dests in insns:
            for d in dests:
                role = _role(opcode, pos, named, bases, pattern) if len(dests) == 1 else None
                roles[d] = role if roles.get(d, role) == role else None
        for reg, role in roles.items():
            if role is not None and reg not in named:
                named[reg] = name_of(role[1] if role[0] == "name" else f"{role[1]}_{role[0]}")
    for reg, base in stored_roles(insns, bases, pattern).items():
        if base is not None and reg not in named and counts.get(reg) == 1:
            named[reg] = name_of(f"{base}_val")


def _first_def(insns, reg) -> int:
    return next((k for k, (_, _, dests) in enumerate(insns) if reg in dests), len(insns))
