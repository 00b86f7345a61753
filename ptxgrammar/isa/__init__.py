"""Instruction and register knowledge, kept as data tables."""
