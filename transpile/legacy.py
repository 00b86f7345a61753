"""Modules written by ptx2py 0.1 import the DSL as `from transpile.dsl import *`: a name the
package no longer installs (it is ptx2py.dsl since 0.2). Accepted, with a warning, until 0.3."""

from __future__ import annotations

import warnings

from .generator import HEADER

OLD_IMPORT = "from transpile.dsl import *"
NEW_IMPORT = HEADER.split("  #")[0]
REMOVED_IN = "0.3"


class LegacyHeaderWarning(DeprecationWarning):
    """A module's first line imports the DSL by its 0.1 name."""


def upgrade_header(source: str, filename: str) -> str:
    """`source` with its 0.1 import line (the first line) spelled as 0.2 writes it, warning once."""
    if not source.startswith(OLD_IMPORT):
        return source
    warnings.warn(f"{filename}:1: `{OLD_IMPORT}` is ptx2py 0.1's import line; write `{NEW_IMPORT}` "
                  f"(the old one is accepted until {REMOVED_IN})", LegacyHeaderWarning, stacklevel=3)
    return NEW_IMPORT + source[len(OLD_IMPORT):]
