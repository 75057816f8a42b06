"""sift's benchmark harness: sift against its baselines, in the same run, on loopback.

`python -m bench` (or `make bench`) runs every scenario; `--quick` is a smoke run and
`--only NAME` runs one scenario. Importing the package starts nothing.
"""
