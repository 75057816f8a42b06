"""Cleaning fetched bodies into text an agent reads: HTML → markdown, JSON (+ jq), text.

The cleaners are pure functions (`dispatch.clean`) that run inside clean worker processes
(`worker`); the parent side imports only `protocol` and `worker`, never trafilatura.
"""
