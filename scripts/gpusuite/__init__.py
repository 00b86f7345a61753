"""The GPU suite's cases, comparison policies and child processes (scripts/gpu_suite.py): test
material, beside the corpus checks it builds on (corpus/scripts), not part of the product."""
