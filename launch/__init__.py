"""Launch sidecars (corpus/launch/*.json): parameter packing, tensor maps and seeded inputs, shared
by the GPU runner and the CPU engine."""
