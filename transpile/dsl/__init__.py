"""The PTX DSL: one PTX statement is one Python call. Its modules import one way, each only
from those before it: errors; operands (operand values); scopelabels (where LLVM's debug-scope
labels go); recorder (records statements with
their trivia); quiet (statements of a known shape built with their trivia, no walk); notes (a
statement's line text, `//` notes after it); locs (`.loc` lines and their source comments); ops (instructions and
declarations); directives (`ptx`); families and typed
(the `--sugar` typed families, their table first) and control (names, control flow); structured (the `--sugar`
prefixes, inline asm, banners and data rows).

Generated modules start with `from ptx2py.dsl import *`.
"""

from .directives import ptx
from .errors import DSLError
from .operands import (
    addr,
    apply,
    args,
    cast,
    cond,
    expr,
    field,
    fimm,
    imm,
    index,
    neg,
    pair,
    paren,
    regn,
    secref,
    sink,
    sreg,
    sym,
    unary,
)
from .ops import d, param, reg, regparam, regs, var

__all__ = [
    "ptx", "reg", "regs", "var", "param", "regparam", "d", "sreg", "sym", "regn", "imm", "fimm", "sink",
    "expr", "unary", "paren", "cast", "cond", "index", "apply", "addr", "args", "pair", "neg",
    "field", "secref", "DSLError",
]

from .structured import *  # noqa: E402,F401,F403  (--sugar constructs)
from .structured import __all__ as _structured_all  # noqa: E402

__all__ += _structured_all
from .typed import *  # noqa: E402,F401,F403
from .typed import __all__ as _typed_all  # noqa: E402

__all__ += _typed_all
from .control import *  # noqa: E402,F401,F403  (--sugar names and control flow)
from .control import __all__ as _control_all  # noqa: E402

__all__ += _control_all
from .descriptors import *  # noqa: E402,F401,F403  (--sugar's decoded bit patterns)
from .descriptors import __all__ as _descriptors_all  # noqa: E402

__all__ += _descriptors_all
from .floats import *  # noqa: E402,F401,F403  (--sugar's float literals by value)
from .floats import __all__ as _floats_all  # noqa: E402

__all__ += _floats_all
