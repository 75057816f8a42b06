"""PDF documents: the `sift pdftext` child, its runner, and the page plausibility check.

Kept import-light: the child imports this package on every start.
"""
