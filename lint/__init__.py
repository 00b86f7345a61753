"""Instruction rules for a module's `.version`/`.target`: `ptx2py lint` and py2ptx's checked mode."""

from .rules import (  # noqa: F401
    RULES,
    Violation,
    check_instruction,
    instruction_positions,
    lint_module,
    lint_text,
    module_targets,
    module_version,
)
