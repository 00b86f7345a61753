"""Syntax highlighting of PTX: a Pygments lexer built from the grammar's terminals."""
