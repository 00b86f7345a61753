"""SASS text: parse cuobjdump/nvdisasm output, normalise it, and diff two kernels so that the
change that matters comes first.

Normalising (per side): registers, uniform registers, predicates and barriers are alpha-renamed
only for *matching* (each operand becomes its register class: `R`, `UR`, `P`, `UP`, `B`), operand
`.reuse` hints are dropped, and branch targets (`BRA 0x1670`, `.L_x_12`) become labels. Two
instructions with the same *shape* (opcode, modifiers, immediates, register classes) are the
same instruction; the streams are aligned on shapes with difflib's sequence matcher, per kernel,
CTA barriers and control flow first (ANCHOR_OPCODES), then the stretches between them.
The result lists, in this order:
  changed  - aligned instructions whose opcode, modifiers or immediates differ
             (`WARPGROUP.DEPBAR.LE gsb0, 0x1 -> 0x0`), and instructions only one side has;
  moved    - an instruction that left one place and appears, same shape, at another;
  renamed  - a count of aligned instructions that differ only in register names.
Changes and moves are ranked by what they touch (SIGNIFICANCE: synchronisation and tensor-core
instructions, then memory, ..., uniform-datapath moves such as `UMOV` last), so that a moved
mbarrier wait leads and the scheduler's reshuffle of address arithmetic follows.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass

# `/*1050*/  @P0 WARPGROUP.DEPBAR.LE gsb0, 0x1 ;`: address, then the instruction (guard, opcode,
# operands) without its encoding.
_SASS_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+((?:@!?U?P\w+\s+)?[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*[^;]*?)\s*;")
_FUNCTION = (re.compile(r"\s*Function : (\S+)"), re.compile(r"\s*\.text\.([\w$.]+):"))
# register operands, by class (order matters: the longer prefixes first); RZ/URZ/PT/UPT are constants
_REGISTER = re.compile(r"\b(UR|UP|R|P|B)(\d+)\b")
_LABEL = re.compile(r"`?\(?\.L_x_\d+\)?`?")
# opcodes whose hex operand is a code address (cuobjdump prints targets as addresses)
BRANCH_OPCODES = frozenset({"BRA", "BRX", "JMP", "JMX", "CALL", "BSSY", "SSY", "PBK", "PCNT", "WARPSYNC.EXCLUSIVE",
                            "BREAK", "CALL.REL", "CALL.ABS", "BPT"})
# instruction mix: opcode (without modifiers) -> family
OPCODE_FAMILIES = {
    "tensor core": ("HMMA", "IMMA", "DMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA", "UTCIMMA", "UTCQMMA",
                    "UTCOMMA", "UTCMMA", "OMMA", "QMMA", "WARPGROUP"),
    "tensor memory": ("UTMALDG", "UTMASTG", "UTMAPF", "UTMACCTL", "UTMACMDFLUSH", "UBLKCP", "LDTM", "STTM",
                      "UTCBAR", "UTCATOMSWS", "UTCCP", "UTCSHIFT"),
    "global memory": ("LDG", "STG", "LD", "ST", "RED", "ATOM", "ATOMG", "LDGSTS", "LDGDEPBAR", "CCTL", "REDG"),
    "shared memory": ("LDS", "STS", "LDSM", "STSM", "ATOMS", "LDL", "STL"),
    "constant/uniform": ("LDC", "ULDC", "S2R", "S2UR", "CS2R", "R2UR", "UMOV", "UIADD3", "USHF", "ULOP3",
                         "ULEA", "UISETP", "USEL", "UIMAD", "UPRMT", "USGXT", "ULOP", "UFLO", "UPOPC", "UBMSK",
                         "VOTEU", "UPLOP3", "REDUX", "UVIRTCOUNT"),
    "synchronisation": ("BAR", "SYNCS", "DEPBAR", "MEMBAR", "FENCE", "ERRBAR", "WARPSYNC", "ELECT", "NANOSLEEP",
                        "CGAERRBAR", "UCGABAR_ARV", "UCGABAR_WAIT", "ACQBULK", "ARRIVES"),
    "control flow": ("BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "BREAK", "BMOV", "YIELD",
                     "NOP", "KILL", "BPT", "WARPSYNC", "PLOP3", "VOTE"),
    "floating point": ("FADD", "FMUL", "FFMA", "FMNMX", "FSET", "FSETP", "FSEL", "FCHK", "MUFU", "HADD2", "HMUL2",
                       "HFMA2", "HMNMX2", "HSET2", "HSETP2", "DADD", "DMUL", "DFMA", "DSETP", "F2F", "F2I", "I2F",
                       "F2FP", "FRND", "I2FP", "F2IP", "FSWZADD"),
    "integer": ("IADD3", "IMAD", "IMUL", "ISETP", "LOP3", "SHF", "SHL", "SHR", "LEA", "SEL", "MOV", "PRMT",
                "IABS", "IMNMX", "POPC", "FLO", "BREV", "SGXT", "BMSK", "IDP", "IDP4A", "VIMNMX", "VIADD",
                "IADD", "P2R", "R2P", "I2I", "SHFL", "MATCH", "VIADDMNMX"),
}
_FAMILY_OF = {op: fam for fam, ops in OPCODE_FAMILIES.items() for op in ops}
# how much a change to an instruction of each family matters to a tuner (lower first)
SIGNIFICANCE = {"synchronisation": 0, "tensor core": 0, "tensor memory": 1, "global memory": 1, "shared memory": 1,
                "control flow": 2, "floating point": 3, "integer": 3, "other": 3, "constant/uniform": 4}


@dataclass(frozen=True)
class SassInstr:
    address: int
    text: str          # guard, opcode, operands as printed (spaces collapsed)

    @property
    def opcode(self) -> str:
        """Opcode with its modifiers, without the guard: `WARPGROUP.DEPBAR.LE`."""
        words = self.text.split()
        return words[1] if words[0].startswith("@") and len(words) > 1 else words[0]

    @property
    def base_opcode(self) -> str:
        return self.opcode.split(".")[0]


def parse_sass_listing(text: str) -> dict[str, list[SassInstr]]:
    """Kernel name -> its SASS instructions, in order (cuobjdump -sass or nvdisasm -c output)."""
    out: dict[str, list[SassInstr]] = {}
    current = None
    for line in text.splitlines():
        m = _FUNCTION[0].match(line) or _FUNCTION[1].match(line)
        if m:
            current = out.setdefault(m.group(1), [])
            continue
        if current is None:
            continue
        m = _SASS_LINE.search(line)
        if m:
            current.append(SassInstr(int(m.group(1), 16), " ".join(m.group(2).split())))
    return out


def parse_sass(text: str) -> dict[str, list[str]]:
    """Kernel name -> SASS instruction texts (guard, opcode, operands) in order."""
    return {k: [i.text for i in v] for k, v in parse_sass_listing(text).items()}


def family(opcode: str) -> str:
    base = opcode.split(".")[0]
    return _FAMILY_OF.get(base) or next((f for p, f in _FAMILY_OF.items() if base.startswith(p)), "other")


def mix(instructions) -> Counter:
    """Opcode counts (without modifiers or guard)."""
    return Counter((i.base_opcode if isinstance(i, SassInstr) else SassInstr(0, i).base_opcode)
                   for i in instructions)


def family_mix(instructions) -> Counter:
    return Counter(family(op) for op in mix(instructions).elements())


# --- normalising ------------------------------------------------------------------------------

def _labelled(instrs: list[SassInstr]) -> list[str]:
    """The texts with `.reuse` dropped and branch targets as labels numbered in order of first
    reference (address operands of branch opcodes, nvdisasm `.L_x_N` names)."""
    addresses = {i.address for i in instrs}
    names: dict[str, str] = {}

    def label(key: str) -> str:
        return names.setdefault(key, f"L{len(names)}")

    out = []
    for ins in instrs:
        text = ins.text.replace(".reuse", "")
        text = _LABEL.sub(lambda m: label(m.group(0).strip("`()")), text)
        if ins.base_opcode in BRANCH_OPCODES or ins.opcode in BRANCH_OPCODES:
            text = re.sub(r"\b0x([0-9a-f]+)\b",
                          lambda m: label(m.group(0)) if int(m.group(1), 16) in addresses else m.group(0), text)
        out.append(text)
    return out


def shape(text: str) -> str:
    """The instruction with each register replaced by its class: what must match for two
    instructions to be 'the same' up to register allocation."""
    return _REGISTER.sub(lambda m: m.group(1), text)


# --- diff ---------------------------------------------------------------------------------------

@dataclass
class Row:
    """One line of the aligned diff: tag is equal | renamed | changed | deleted | inserted."""
    tag: str
    base: int | None      # index into the base stream
    edited: int | None
    base_text: str = ""
    edited_text: str = ""
    moved_to: int | None = None     # for a deleted row whose instruction reappears (moved)
    moved_from: int | None = None


def _pair_block(rows: list[Row], b: list[str], e: list[str], i1: int, i2: int, j1: int, j2: int) -> None:
    """Inside a replaced block, pair instructions with the same opcode (a changed modifier or
    immediate) and leave the rest deleted / inserted."""
    bo = [SassInstr(0, x).base_opcode for x in b[i1:i2]]
    eo = [SassInstr(0, x).base_opcode for x in e[j1:j2]]
    for tag, a1, a2, c1, c2 in difflib.SequenceMatcher(None, bo, eo, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [Row("changed", i1 + a, j1 + c, b[i1 + a], e[j1 + c]) for a, c in zip(range(a1, a2), range(c1, c2))]
            continue
        rows += [Row("deleted", i1 + a, None, b[i1 + a]) for a in range(a1, a2)]
        rows += [Row("inserted", None, j1 + c, "", e[j1 + c]) for c in range(c1, c2)]


def _opcodes(a: list[str], b: list[str]):
    """difflib's opcodes, run only on what lies between the common prefix and suffix (the
    matcher is quadratic on long runs of repeated instructions; an unchanged kernel costs O(n));
    the middle is aligned on its anchors first (`_anchored`)."""
    n = min(len(a), len(b))
    pre = 0
    while pre < n and a[pre] == b[pre]:
        pre += 1
    post = 0
    while post < n - pre and a[len(a) - 1 - post] == b[len(b) - 1 - post]:
        post += 1
    if pre:
        yield "equal", 0, pre, 0, pre
    if pre < len(a) - post or pre < len(b) - post:
        yield from _anchored(a, b, pre, len(a) - post, pre, len(b) - post)
    if post:
        yield "equal", len(a) - post, len(a), len(b) - post, len(b)


# CTA barriers and control flow: the scheduler keeps instructions on their side of these, so the
# streams are aligned on them first; an instruction that crossed one is the one that moved (else a
# moved arrive and the barrier it crossed explain the diff equally well, and the barrier is named).
ANCHOR_OPCODES = frozenset({"BAR", "BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC"})


def _matcher_opcodes(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int):
    for tag, x1, x2, y1, y2 in difflib.SequenceMatcher(None, a[i1:i2], b[j1:j2], autojunk=False).get_opcodes():
        yield tag, x1 + i1, x2 + i1, y1 + j1, y2 + j1


def _anchored(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int):
    """Opcodes for a[i1:i2] against b[j1:j2]: the anchors (ANCHOR_OPCODES) matched first, then
    each stretch between two matched anchors aligned on its own."""
    def anchors(xs: list[str], lo: int, hi: int) -> list[int]:
        return [k for k in range(lo, hi) if SassInstr(0, xs[k]).base_opcode in ANCHOR_OPCODES]

    ka, kb = anchors(a, i1, i2), anchors(b, j1, j2)
    matcher = difflib.SequenceMatcher(None, [a[k] for k in ka], [b[k] for k in kb], autojunk=False)
    pairs = [(ka[x + t], kb[y + t]) for x, y, n in matcher.get_matching_blocks() for t in range(n)]
    lo_a, lo_b = i1, j1
    for pa, pb in pairs + [(i2, j2)]:
        yield from _matcher_opcodes(a, b, lo_a, pa, lo_b, pb)
        if pa < i2:
            yield "equal", pa, pa + 1, pb, pb + 1
        lo_a, lo_b = pa + 1, pb + 1


def align(base: list[SassInstr], edited: list[SassInstr]) -> list[Row]:
    """The aligned diff of two kernels' instruction streams (see the module doc)."""
    b, e = _labelled(base), _labelled(edited)
    bs, es = [shape(x) for x in b], [shape(x) for x in e]
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in _opcodes(bs, es):
        if tag == "equal":
            rows += [Row("equal" if b[i] == e[j] else "renamed", i, j, b[i], e[j])
                     for i, j in zip(range(i1, i2), range(j1, j2))]
        elif tag == "delete":
            rows += [Row("deleted", i, None, b[i]) for i in range(i1, i2)]
        elif tag == "insert":
            rows += [Row("inserted", None, j, "", e[j]) for j in range(j1, j2)]
        else:
            _pair_block(rows, b, e, i1, i2, j1, j2)
    _mark_moves(rows)
    return rows


def _mark_moves(rows: list[Row]) -> None:
    """A deleted instruction whose shape is inserted elsewhere has moved (first match wins)."""
    inserted: dict[str, list[Row]] = {}
    for r in rows:
        if r.tag == "inserted":
            inserted.setdefault(shape(r.edited_text), []).append(r)
    for r in rows:
        if r.tag == "deleted":
            pool = inserted.get(shape(r.base_text))
            if pool:
                target = pool.pop(0)
                r.moved_to, target.moved_from = target.edited, r.base
                r.tag = target.tag = "moved"


def _operand_change(old: str, new: str) -> str:
    """`WARPGROUP.DEPBAR.LE gsb0, 0x1 -> 0x0`: the common prefix once, then what changed."""
    a, b = old.split(" "), new.split(" ")
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    if k == 0:
        return f"{old} -> {new}"
    return " ".join(a[:k]) + " " + " ".join(a[k:]) + " -> " + " ".join(b[k:])


def _anchors_crossed(base: int, edited: int, anchors: list[tuple[int, int]]) -> int:
    """How many aligned anchors an instruction at `base` (base stream) -> `edited` passed."""
    return sum(1 for a, b in anchors if (base < a) != (edited < b))


def _family_of(old: str, new: str) -> str:
    """The more significant family of an instruction's two sides (a changed opcode)."""
    return min((family(SassInstr(0, old).opcode), family(SassInstr(0, new).opcode)), key=SIGNIFICANCE.__getitem__)


def summarise(rows: list[Row]) -> dict:
    """changed (first), moved, and the rename count, each change with its stream positions."""
    changed, moved, renamed = [], [], 0
    anchors = [(r.base, r.edited) for r in rows if r.tag in ("equal", "renamed")
               and SassInstr(0, r.base_text).base_opcode in ANCHOR_OPCODES]
    for r in rows:
        if r.tag == "changed":
            changed.append({"base": r.base, "edited": r.edited, "old": r.base_text, "new": r.edited_text,
                            "line": _operand_change(r.base_text, r.edited_text)})
        elif r.tag == "deleted":
            changed.append({"base": r.base, "edited": None, "old": r.base_text, "new": None,
                            "line": f"- {r.base_text}"})
        elif r.tag == "inserted":
            changed.append({"base": None, "edited": r.edited, "old": None, "new": r.edited_text,
                            "line": f"+ {r.edited_text}"})
        elif r.tag == "moved" and r.base is not None:
            across = _anchors_crossed(r.base, r.moved_to, anchors)
            note = f", across {across} barrier/branch{'es' if across > 1 else ''}" if across else ""
            moved.append({"base": r.base, "edited": r.moved_to, "text": r.base_text, "across": across,
                          "line": f"{r.base_text}  (moved {r.base} -> {r.moved_to}{note})"})
        elif r.tag == "renamed":
            renamed += 1
    for c in changed:
        c["family"] = _family_of(c["old"] or c["new"], c["new"] or c["old"])
    for m in moved:
        m["family"] = _family_of(m["text"], m["text"])
    changed.sort(key=lambda c: SIGNIFICANCE[c["family"]])
    # what it touches first, then a move across a barrier before a local swap
    moved.sort(key=lambda m: (SIGNIFICANCE[m["family"]], -m["across"]))
    return {"changed": changed, "moved": moved, "renamed": renamed,
            "equivalent": not changed and not moved}   # equal up to register names


def context_lines(rows: list[Row], context: int) -> list[str]:
    """The aligned diff as `  same` / `- old` / `+ new` / `~ renamed` lines, keeping `context`
    rows around each change (all rows with context < 0)."""
    marks = {"equal": " ", "renamed": "~"}
    interesting = [k for k, r in enumerate(rows) if r.tag not in ("equal", "renamed")]
    keep = set(range(len(rows))) if context < 0 else {
        j for k in interesting for j in range(max(0, k - context), min(len(rows), k + context + 1))}
    out, last = [], -1
    for k in sorted(keep):
        if last >= 0 and k != last + 1:
            out.append("  ...")
        r = rows[k]
        where = f"{'' if r.base is None else r.base:>5} {'' if r.edited is None else r.edited:>5}"
        if r.tag in marks:
            text = r.edited_text if r.tag == "equal" else r.base_text + "  ~  " + r.edited_text
            out.append(f"{where} {marks[r.tag]} {text}")
        elif r.tag == "moved":
            out.append(f"{where} {'<' if r.base is not None else '>'} {r.base_text or r.edited_text}")
        else:
            if r.base_text:
                out.append(f"{where} - {r.base_text}")
            if r.edited_text:
                out.append(f"{where} + {r.edited_text}")
        last = k
    return out


def compare_kernel(base: list[SassInstr], edited: list[SassInstr]) -> dict:
    """Everything about one kernel's two streams, for the report and its JSON."""
    rows = align(base, edited)
    summary = summarise(rows)
    bm, em = family_mix(base), family_mix(edited)
    om_b, om_e = mix(base), mix(edited)
    return {
        "base_count": len(base), "edited_count": len(edited),
        "identical": [i.text for i in base] == [i.text for i in edited],
        **summary,
        "family_mix": {f: [bm[f], em[f]] for f in sorted(set(bm) | set(em))},
        "mix_diff": {op: om_e[op] - om_b[op] for op in sorted(set(om_b) | set(om_e)) if om_e[op] != om_b[op]},
        "rows": [r.__dict__ for r in rows],
    }
