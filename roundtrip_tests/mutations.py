"""Mutations of PTX text for fuzzing the whole pipeline: character-level ones (insert,
delete, junk bytes, non-ASCII, deep nesting, megabyte lines) and token-level ones that
keep the text close to valid PTX (duplicate or drop a directive, duplicate a modifier or
a linkage, swap operands, huge literals, names that are Python keywords or builtins) and
declaration-level ones (another type, unusual or Python-like register family names, line
breaks -- LF, CR LF, lone CR -- between the tokens of one statement).

    text = mutate(text, random.Random(seed))
"""

from __future__ import annotations

import builtins
import keyword
import random
import re

# Tokens as the scanner sees them (roughly): enough to cut and splice at token edges.
_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"[^"\n]*"|\.[A-Za-z_][\w:]*|%?[A-Za-z_$][\w$]*|0[xXfFdD][0-9A-Fa-f]+|\d+|\S',
                    re.S)
_DIRECTIVE_LINE = re.compile(r"^[ \t]*\.[a-z_]+[^\n]*\n", re.M)
_STATEMENT = re.compile(r"[^;{}\n]*;")
_OPERANDS = re.compile(r"([ \t][^,;\n]+),([ \t]*[^,;\n]+)(?=[,;])")
_MODIFIER = re.compile(r"(?<=[a-z0-9])\.[a-z][a-z0-9_]*")
_LINKAGE = re.compile(r"\.(visible|extern|weak|common)\b")
_NAME = re.compile(r"(?<![\w.%$])[A-Za-z_][\w$]*(?=[ \t]*[,;\[)\]])")

PYTHON_NAMES = sorted(set(keyword.kwlist) | set(keyword.softkwlist) |
                      {n for n in dir(builtins) if not n.startswith("_")} | {"ptx", "reg", "sym", "self", "__init__"})
HUGE = ["18446744073709551615", "18446744073709551616", "0xFFFFFFFFFFFFFFFFFFFF", "9" * 40, "0" * 30 + "1",
        "0f7F800000", "0dFFFFFFFFFFFFFFFF", "1e400", "0b" + "1" * 80, "2147483648U"]


def _at(rng, pattern, text):
    found = list(pattern.finditer(text))
    return rng.choice(found) if found else None


def duplicate_directive(text, rng):
    m = _at(rng, _DIRECTIVE_LINE, text)
    return text if m is None else text[:m.end()] + m.group() + text[m.end():]


def drop_directive(text, rng):
    m = _at(rng, _DIRECTIVE_LINE, text)
    return text if m is None else text[:m.start()] + text[m.end():]


def duplicate_statement(text, rng):
    m = _at(rng, _STATEMENT, text)
    return text if m is None else text[:m.end()] + m.group() + text[m.end():]


def drop_statement(text, rng):
    m = _at(rng, _STATEMENT, text)
    return text if m is None else text[:m.start()] + text[m.end():]


def duplicate_modifier(text, rng):
    m = _at(rng, _MODIFIER, text)
    return text if m is None else text[:m.end()] + m.group() + text[m.end():]


def duplicate_linkage(text, rng):
    m = _at(rng, _LINKAGE, text)
    return text if m is None else text[:m.end()] + " " + m.group() + text[m.end():]


def swap_operands(text, rng):
    m = _at(rng, _OPERANDS, text)
    return text if m is None else text[:m.start()] + m.group(2) + "," + m.group(1) + text[m.end():]


def huge_literal(text, rng):
    m = _at(rng, re.compile(r"(?<![\w.%$])\d+(?![\w.])"), text)
    return text if m is None else text[:m.start()] + rng.choice(HUGE) + text[m.end():]


def python_name(text, rng):
    """Rename every use of one name to a Python keyword or builtin (declarations too)."""
    m = _at(rng, _NAME, text)
    if m is None:
        return text
    return re.sub(rf"(?<![\w.%$]){re.escape(m.group())}(?![\w$])", rng.choice(PYTHON_NAMES), text)


def splice_tokens(text, rng):
    """Copy a run of tokens somewhere else (a token-level insert)."""
    toks = list(_TOKEN.finditer(text))
    if len(toks) < 2:
        return text
    a = rng.randrange(len(toks))
    b = min(len(toks) - 1, a + rng.randrange(1, 6))
    piece = text[toks[a].start():toks[b].end()]
    at = toks[rng.randrange(len(toks))].start()
    return text[:at] + piece + " " + text[at:]


def drop_token(text, rng):
    m = _at(rng, _TOKEN, text)
    return text if m is None else text[:m.start()] + text[m.end():]


def insert_chars(text, rng):
    pos = rng.randrange(len(text) + 1)
    chars = "".join(rng.choice(";{}[](),.%@!|_:#\"/* \n\t0xabc+-<>=?~^&") for _ in range(rng.randrange(1, 6)))
    return text[:pos] + chars + text[pos:]


def delete_chars(text, rng):
    pos = rng.randrange(len(text) + 1)
    return text[:pos] + text[pos + rng.randrange(1, 20):]


def truncate(text, rng):
    return text[:rng.randrange(len(text) + 1)]


def junk_bytes(text, rng):
    pos = rng.randrange(len(text) + 1)
    return text[:pos] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12))).decode("latin-1") + text[pos:]


def nesting(text, rng):
    pos = rng.randrange(len(text) + 1)
    return text[:pos] + rng.choice("{([") * rng.choice([3, 30, 100, 300]) + text[pos:]


def long_expression(text, rng):
    m = _at(rng, re.compile(r"(?<![\w.%$])\d+(?![\w.])"), text)
    if m is None:
        return text
    op = rng.choice(["+", "*", "-", "<<", "&&", "|"])
    return text[:m.start()] + op.join(["1"] * rng.choice([50, 201, 450, 1500])) + text[m.end():]


# A state space's declaration: `.reg .b32 %r<6>`, `.param .u64 .ptr .align 1 p`, `.shared .align 4 .b8 s[16]`.
_DECL_TYPE = re.compile(r"\.(?:reg|param|local|shared|global|const)[ \t]+(?:\.(?:align|ptr)[ \t]*\d*[ \t]*)*"
                        r"(\.[a-z][a-z0-9_]*)")
DECL_TYPES = [".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".s16", ".u64", ".f16", ".f16x2", ".bf16", ".f32",
              ".f64", ".pred", ".v2 .f32", ".v4 .b32", ".texref", ".samplerref", ".address_size", ".import",
              ".match", ".type", ".class", ".global", ".ptr", ".align 16 .b8", ".tf32", ".e4m3"]
_FAMILY = re.compile(r"(?<=[ \t])%[A-Za-z_][\w$]*(?=<\d+>)")
FAMILY_NAMES = ["%import_r", "%class", "%_r", "%r_", "%rd_f", "%def", "%p_", "%b32_r", "%f_1", "%reg", "%regs",
                "%ptx", "%self", "%None", "%r$", "%__r", "%lambda", "%rd", "%r", "%fd", "%p", "%rs", "%f"]
_BETWEEN_TOKENS = re.compile(r"(?<=[\w\]>)}%])[ \t]+(?=[.%\w\[{(-])|(?<=,)[ \t]*")
BREAKS = ["\n", "\r\n", " \r\n ", "\n\t", "\r", " \r\n\t", "\n\n", " // note\r\n "]


def declaration_type(text, rng):
    """Give one declaration another type (or a dotted word the parser may take for one)."""
    m = _at(rng, _DECL_TYPE, text)
    return text if m is None else text[:m.start(1)] + rng.choice(DECL_TYPES) + text[m.end(1):]


def family_name(text, rng):
    """Rename one register family (`.reg .b32 %r<6>` and every `%rN`) to an unusual name."""
    m = _at(rng, _FAMILY, text)
    if m is None:
        return text
    new = rng.choice([n for n in FAMILY_NAMES if n != m.group()])
    return re.sub(rf"{re.escape(m.group())}(?=\d|<)", lambda _: new, text)


def break_inside_statement(text, rng):
    """A line break (LF, CR LF, lone CR, a comment's end) between two tokens of one statement."""
    m = _at(rng, _BETWEEN_TOKENS, text)
    return text if m is None else text[:m.start()] + rng.choice(BREAKS) + text[m.end():]


DECLARATIONS = [declaration_type, family_name, break_inside_statement]
MUTATIONS = [duplicate_directive, drop_directive, duplicate_statement, drop_statement, duplicate_modifier,
             duplicate_linkage, swap_operands, huge_literal, python_name, splice_tokens, drop_token,
             insert_chars, delete_chars, truncate, junk_bytes, nesting, long_expression, *DECLARATIONS]
TOKEN_LEVEL = MUTATIONS[:11] + DECLARATIONS


def mutate(text: str, rng: random.Random, count: int | None = None) -> str:
    """`count` (default 1-3) mutations, token-level ones twice as likely."""
    for _ in range(count or rng.randint(1, 3)):
        fn = rng.choice(TOKEN_LEVEL) if rng.random() < 0.67 else rng.choice(MUTATIONS)
        text = fn(text, rng)
    return text
