"""Readable `--sugar` Python: passes over the Python-generation IR (`PyStmt` lists).

Each pass is a module here with `run(stmts, ctx) -> stmts`; `pipeline.apply`
runs them in order. Passes never touch PTX bytes or generated text: running
the sugared Python rebuilds the same module, byte for byte.
"""
