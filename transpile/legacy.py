"""Modules written by ptx2py 0.1 import the DSL as `from transpile.dsl import *`: a name the
package no longer installs (it is ptx2py.dsl since 0.2). Accepted, with a warning, until 0.3."""

from __future__ import annotations

import warnings

OLD_IMPORT = "from transpile.dsl import *"
REMOVED_IN = "0.3"


class LegacyHeaderWarning(DeprecationWarning):
    """A module's first line imports the DSL by its 0.1 name."""


def upgrade_header(source: str, filename: str) -> str:
    """`source` with its 0.1 import line (the first line) spelled as 0.2 writes it, warning once."""
    if not source.startswith(OLD_IMPORT):
        return source
    from .generator import HEADER  # the generator loads only for an old module (py2ptx start-up)

    new_import = HEADER.split("  #")[0]
    warnings.warn(f"{filename}:1: `{OLD_IMPORT}` is ptx2py 0.1's import line; write `{new_import}` "
                  f"(the old one is accepted until {REMOVED_IN})", LegacyHeaderWarning, stacklevel=3)
    return new_import + source[len(OLD_IMPORT):]
