"""Pipe tables that are valid GitHub-flavoured markdown, whatever trafilatura emitted.

Measured: ~45 % of trafilatura's tables are not valid GFM. A table without `<th>` cells gets no
`|---|` row (so it renders as a paragraph of pipes), a `<th>` row in the middle puts the
delimiter there, captions and `<thead>`/`<tbody>` pairs add a second one, nested tables come
out as headless fragments, and rows can be indented or ragged. `normalise` rewrites every run
of pipe lines outside code fences into one well-formed table: header, one delimiter row, every
row with the same number of cells, no indentation, blank lines around it. `problems` is the
independent check used by the tests and the benchmark.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A row as trafilatura writes it: a pipe first and an unescaped pipe last. A text line that
# merely starts with a pipe (a grammar alternative, a quoted shell pipeline) is not a table.
_PIPE_LINE = re.compile(r"^\s*\|.*(?<!\\)\|\s*$")
_SPLIT = re.compile(r"(?<!\\)\|")
_DELIMITER_CELL = re.compile(r"^:?-+:?$")


def _cells(line: str) -> list[str]:
    """The cells of one pipe row, stripped; the outer pipes do not make cells."""
    parts = _SPLIT.split(line.strip())
    if parts and not parts[0].strip():
        parts = parts[1:]
    if parts and not parts[-1].strip() and line.rstrip().endswith("|"):
        parts = parts[:-1]
    return [p.strip() for p in parts]


def _is_delimiter(cells: list[str]) -> bool:
    return bool(cells) and all(_DELIMITER_CELL.match(c) for c in cells)


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) of each run of pipe lines outside fenced code."""
    blocks: list[tuple[int, int]] = []
    fence: str | None = None
    start: int | None = None
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
        if not m and _PIPE_LINE.match(line):
            if start is None:
                start = i
            continue
        if start is not None:
            blocks.append((start, i))
            start = None
    if start is not None:
        blocks.append((start, len(lines)))
    return blocks


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _rebuild(block: list[str]) -> list[str]:
    """One table as valid GFM lines (or plain paragraphs for a single column)."""
    raw = [_cells(line) for line in block]
    caption: list[str] = []
    delimiters = [i for i, r in enumerate(raw) if _is_delimiter(r)]
    if len(delimiters) > 1 and delimiters[0] == 1 and sum(1 for c in raw[0] if c) == 1:
        caption = [next(c for c in raw[0] if c), ""]  # a <caption> drawn as a header row
        raw = raw[1:]
    rows = [r for r in raw if any(r) and not _is_delimiter(r)]
    if not rows:
        return caption[:1]
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    keep = [j for j in range(width) if any(r[j] for r in rows)]
    rows = [[r[j] for j in keep] for r in rows]
    if len(keep) == 1:  # a layout table: its cells are paragraphs
        out: list[str] = []
        for r in rows:
            out += [r[0].replace("\\|", "|"), ""]
        return caption + out[:-1]
    return [*caption, _row(rows[0]), _row(["---"] * len(keep)), *(_row(r) for r in rows[1:])]


def normalise(markdown: str) -> str:
    """Rewrite every pipe table in `markdown` as valid GFM; everything else is left alone."""
    if "|" not in markdown:
        return markdown
    lines = markdown.split("\n")
    blocks = _blocks(lines)
    if not blocks:
        return markdown
    out: list[str] = []
    done = 0
    for start, end in blocks:
        out += lines[done:start]
        table = _rebuild(lines[start:end])
        if table:
            if out and out[-1].strip():
                out.append("")
            out += table
            if end < len(lines) and lines[end].strip():
                out.append("")
        done = end
    out += lines[done:]
    return "\n".join(out)


def problems(markdown: str) -> list[str]:
    """Why each pipe table in `markdown` is not valid GFM; empty when all of them are.

    Checked: a blank line (or the edge of the text) on both sides, no indentation, a header
    row followed by exactly one delimiter row, and every row as wide as the header.
    """
    lines = markdown.split("\n")
    found: list[str] = []
    for start, end in _blocks(lines):
        where = f"table at line {start + 1}"
        block = lines[start:end]
        rows = [_cells(line) for line in block]
        if start > 0 and lines[start - 1].strip():
            found.append(f"{where}: no blank line before it")
        if end < len(lines) and lines[end].strip():
            found.append(f"{where}: no blank line after it")
        if any(line != line.lstrip() for line in block):
            found.append(f"{where}: indented")
        if len(rows) < 2 or not _is_delimiter(rows[1]):
            found.append(f"{where}: no delimiter row under the header")
            continue
        if any(_is_delimiter(r) for r in rows[2:]):
            found.append(f"{where}: a second delimiter row")
        width = len(rows[0])
        if any(len(r) != width for r in rows):
            found.append(f"{where}: rows of different widths")
    return found
