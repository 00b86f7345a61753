"""The DSL that generated modules import: `from ptx2py.dsl import *` (ptx2py.transpile.dsl)."""

from ptx2py.transpile.dsl import *  # noqa: F401,F403
from ptx2py.transpile.dsl import __all__  # noqa: F401
