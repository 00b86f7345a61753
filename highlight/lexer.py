"""A Pygments lexer for PTX built from the grammar's own terminals (ptxgrammar/ptx.lark), so it
tokenizes every module the parser reads: `@%p1` guards, `.shared::cta`, `kind::f16`,
`%r1|%p1`, `$L__BB0_3:` labels, cpp line markers.

The token type of each terminal is the table below; the only extra knowledge is where a
statement starts (its first word is the opcode or directive). Registered as the `pygments.lexers`
entry point `ptx2py` (aliases `ptx2py`, `ptx2py-ptx`); Pygments' own `ptx` alias resolves to its
built-in lexer first, so Sphinx users add `app.add_lexer("ptx", PtxLexer)` in conf.py."""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text

# terminal -> token type inside a statement (operands, modifiers, declarations)
TOKEN_TYPE = {
    "VERSION": Keyword.Namespace, "TARGET": Keyword.Namespace, "ADDRESS_SIZE": Keyword.Namespace,
    "FILE": Keyword.Namespace, "LOC": Keyword.Namespace, "SECTION": Keyword.Namespace,
    "ALIAS": Keyword.Declaration, "PRAGMA": Keyword.Declaration, "LINKAGE": Keyword.Declaration,
    "FUNCTION_KIND": Keyword.Declaration, "ALIGN": Keyword.Declaration, "ATTRIBUTE": Keyword.Declaration,
    "PTR": Keyword.Declaration, "CALLPROTOTYPE": Keyword.Declaration, "LABEL_LIST": Keyword.Declaration,
    "STATE_SPACE": Keyword.Type, "DOTNAME": Name.Attribute,
    "SINK": Name.Builtin, "FLOAT_HEX": Number.Float, "FLOAT_DEC": Number.Float, "INT": Number.Integer,
    "STRING": String,
    "WHITESPACE": Text.Whitespace, "LINE_COMMENT": Comment.Single, "BLOCK_COMMENT": Comment.Multiline,
    "LINE_MARKER": Comment.Preproc,
}
IGNORED = ("WHITESPACE", "LINE_COMMENT", "BLOCK_COMMENT", "LINE_MARKER")  # the grammar's %ignore
BRACKETS = {"LBRACE", "RBRACE", "LPAR", "RPAR", "LSQB", "RSQB", "COMMA", "SEMICOLON", "COLON"}
MULTI_CHAR = ("SHIFTOP", "EQOP", "OROR", "ANDAND", "RELOP")  # before their one-character prefixes
# the first word of a statement: an opcode, or a directive (any dot terminal)
STATEMENT_HEAD = {"IDENT": Keyword, "DOTNAME": Keyword.Declaration, "STATE_SPACE": Keyword.Declaration}


def _ident_kind(text: str):
    """`%r1` a register, `$L__BB0_3` a label, anything else a name."""
    return Name.Variable if text[0] == "%" else Name.Label if text[0] == "$" else Name


def _ordered(terminals):
    named = [t for t in terminals if t[0] not in IGNORED]
    index = {t[0]: i for i, t in enumerate(named)}
    return sorted(named, key=lambda t: (-t[2], t[0] not in MULTI_CHAR, -len(t[1]) if t[3] else 0, index[t[0]]))


def _alternation(rules):
    """[(pattern, type or None for a name)] -> one rule: a single regex whose first matching
    alternative decides the type (as Pygments' first-match order would, one regex per token)."""
    kinds = {}
    parts = []
    for i, (pattern, kind) in enumerate(rules):
        kinds[f"t{i}"] = kind
        parts.append(f"(?P<t{i}>{pattern})")

    def callback(lexer, match):
        kind = kinds[match.lastgroup]
        text = match.group(0)
        yield match.start(), _ident_kind(text) if kind is None else kind, text

    return "|".join(parts), callback


def _type_of(name: str):
    if name == "IDENT":
        return None
    return TOKEN_TYPE.get(name, Punctuation if name in BRACKETS else Operator)


def build_tokens(terminals=None) -> dict:
    """Pygments states from the grammar's terminals: `root` (a statement's head) and `statement`
    (up to its `;`, or the `{` of a function body)."""
    if terminals is None:
        from ptx2py.ptxgrammar.parser import grammar_terminals

        terminals = grammar_terminals()
    rx = {t[0]: t[1] for t in terminals}
    ordered = _ordered(terminals)
    ignored = [_alternation([(rx[n], TOKEN_TYPE[n]) for n in IGNORED])]
    body = [_alternation([(p, _type_of(n)) for n, p, _prio, _lit in ordered])]
    ident = rx["IDENT"]
    head = [
        (rf"(@)({rx['BANG']}?)(\s*)({ident})", bygroups(Operator, Operator, Text.Whitespace, Name.Variable)),
        (rf"({ident})(\s*)({rx['COLON']})(?!:)", bygroups(Name.Label, Text.Whitespace, Punctuation)),
        (rx["LBRACE"], Punctuation), (rx["RBRACE"], Punctuation),
    ]
    dots = [n for n, p, _prio, _lit in ordered if p.startswith("\\.")]  # .version ... .f32: a directive
    head.append(_alternation([(rx[n], STATEMENT_HEAD.get(n, TOKEN_TYPE.get(n))) for n in dots]
                             + [(ident, STATEMENT_HEAD["IDENT"])]) + ("statement",))
    statement = [(rx["SEMICOLON"], Punctuation, "#pop"), (rx["LBRACE"] + r"(?=[ \t]*(\r?\n|//|$))", Punctuation,
                                                          "#pop")]
    return {"root": ignored + head + body, "statement": ignored + statement + body}


class PtxLexer(RegexLexer):
    name = "PTX (ptx2py)"
    aliases = ["ptx2py", "ptx2py-ptx"]
    filenames = ["*.ptx"]
    mimetypes = ["text/x-ptx"]
    url = "https://docs.nvidia.com/cuda/parallel-thread-execution/"
    tokens = build_tokens()


def highlight_html(ptx: str, **options) -> str:
    """PTX as HTML with inline styles (for notebooks and generated pages)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    return highlight(ptx, PtxLexer(), HtmlFormatter(noclasses=True, **options))
