"""Batch fetch, free of threads: job identity, caps, the round-robin scheduler."""
