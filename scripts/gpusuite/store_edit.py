"""An edit whose output must differ: every global store (and atomic) of a kernel stores its value with one
high bit flipped (`xor` of bit W-2 of the register, before the store, under the store's own
predicate). A float changes its exponent (1.0 -> 2^-127 or so), an integer by 2^(W-2): beyond
every comparison bound, so a comparison that cannot tell it from the unedited kernel is broken.

Kernels that write their results only through TMA or `stmatrix` (no `st.global`) get the edit on
their shared-memory stores instead (`st.shared`, `stmatrix`), which the TMA store copies out.
"""
from __future__ import annotations

import re

# `.reg .b32 %r<12>;` -> prefix %r is 32 bits wide
_REG_DECL = re.compile(r"\.reg\s+\.(\w+)\s+(%[A-Za-z_$][\w$]*)\s*<\s*\d+\s*>")
_WIDTH = {"b8": 16, "u8": 16, "s8": 16, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16,
          "b32": 32, "u32": 32, "s32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32,
          "b64": 64, "u64": 64, "s64": 64, "f64": 64}
_STORE = (r"^(?P<indent>[ \t]*)(?P<pred>@!?%\w+\s+)?(?P<op>{ops})(?:\.[\w:]+)*\s+\[[^\]]*\]\s*,\s*\{{?\s*"
          r"(?P<reg>%[A-Za-z_$][\w$]*\d*)")
GLOBAL_STORES = re.compile(_STORE.format(ops=r"st\.global|st(?=\.)(?!\.shared|\.local|\.param)"), re.M)
SHARED_STORES = re.compile(_STORE.format(ops=r"st\.shared|stmatrix\.sync\.aligned"), re.M)
# the value operand of an atomic or reduction into global memory (`atom` has a destination first)
ATOMICS = re.compile(r"^(?P<indent>[ \t]*)(?P<pred>@!?%\w+\s+)?(?P<op>atom|red)(?:\.[\w:]+)*\.global(?:\.[\w:]+)*"
                     r"\s+(?:%[\w$]+\s*,\s*)?\[[^\]]*\]\s*,\s*(?P<reg>%[A-Za-z_$][\w$]*\d*)", re.M)


class NoStores(ValueError):
    """The kernel has no store this edit can change."""


def _entry_span(text: str, kernel: str) -> tuple[int, int]:
    m = re.search(rf"\.entry\s+{re.escape(kernel)}\s*\(", text)
    if m is None:
        raise NoStores(f"no .entry {kernel}")
    nxt = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s", re.M).search(text, m.end())
    return m.start(), nxt.start() if nxt else len(text)


def _widths(body: str) -> dict[str, int]:
    return {prefix: _WIDTH[ty] for ty, prefix in _REG_DECL.findall(body) if ty in _WIDTH}


def _register_width(reg: str, widths: dict[str, int]) -> int | None:
    prefix = re.match(r"%[A-Za-z_$]+", reg).group(0)
    return widths.get(prefix)


def change_stores(text: str, kernel: str) -> tuple[str, int]:
    """The module with the kernel's stores changed, and how many were changed."""
    start, end = _entry_span(text, kernel)
    body = text[start:end]
    widths = _widths(body)
    for patterns in ((GLOBAL_STORES, ATOMICS), (SHARED_STORES,)):
        out, n, pos = [], 0, 0
        for m in sorted((m for p in patterns for m in p.finditer(body)), key=lambda m: m.start()):
            width = _register_width(m.group("reg"), widths)
            if width is None:
                continue
            flip = 1 << (width - 2)
            out.append(body[pos:m.start()])
            out.append(f"{m.group('indent')}{m.group('pred') or ''}xor.b{width} {m.group('reg')}, {m.group('reg')}, "
                       f"{flip};\n")
            pos = m.start()
            n += 1
        if n:
            out.append(body[pos:])
            return text[:start] + "".join(out) + text[end:], n
    raise NoStores(f"{kernel}: no global or shared store of a register to change")
