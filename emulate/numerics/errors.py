"""The one error of the numerics: an instruction form that cannot be computed exactly."""


class NotEmulated(Exception):
    """Raised with "<opcode+modifiers>: why" when a form has no exact implementation here."""


def form_name(opcode, mods, types=()):
    """`add.rz.ftz.f32` from the opcode, its non-type modifiers (sorted) and its types in order."""
    rest = sorted(m for m in mods if m not in types)
    return opcode + "".join(rest) + "".join(types)


def refuse(opcode, mods, types, why):
    raise NotEmulated(f"{form_name(opcode, mods, types)}: {why}")


def accept(opcode, mods, types, allowed):
    """Refuse a form that carries a modifier its handler does not implement (never ignore one)."""
    extra = set(mods) - set(types) - set(allowed)
    if extra:
        refuse(opcode, mods, types, "modifier " + ", ".join(sorted(extra)) + " not emulated")
