"""Long documents as an agent reads them (pages, the map, ranges, grep, HTML sections) and
PDFs: the `sift pdftext` child, its runner, its engines and the page plausibility check.

Kept import-light: the child imports this package on every start.
"""
