"""A long HTML article with what a cut must never split: tables, code blocks with blank
lines inside, and links; and checks that a cut text kept each of them whole."""

from __future__ import annotations

import re

TABLE_ROW = re.compile(r"^\|.*\|[ \t]*$", re.M)
LINK = re.compile(r"\[[^\]\n]*\]\([^)\s]*\)")
FENCE = re.compile(r"^ {0,3}```", re.M)


def long_article(sections: int = 40) -> str:
    """An article of `sections` sections (some 700 characters of markdown each)."""
    parts = []
    for i in range(sections):
        rows = "".join(
            f"<tr><td>row {i}.{j}</td><td>value {j * i}</td>"
            f'<td><a href="/ref/{i}/{j}">ref {i}.{j}</a></td></tr>'
            for j in range(4)
        )
        parts.append(
            f"<h2>Part {i}: the measured facts</h2>"
            f"<p>Paragraph {i} explains the result, citing "
            f'<a href="https://example.org/paper/{i}">the paper number {i} on budgets</a> '
            f"and going on for a while so that the section has prose worth reading.</p>"
            f"<table><thead><tr><th>name</th><th>value</th><th>link</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            f"<pre><code>def part_{i}(x):\n\n    return x * {i}\n</code></pre>"
            f"<p>After the code of part {i}, one more sentence closes the section.</p>"
        )
    body = "".join(parts)
    return (
        "<html><head><title>Budgets and continuation</title></head><body><article>"
        f"<h1>Budgets and continuation</h1>{body}</article></body></html>"
    )


def cuts_are_clean(full: str, ends: list[int]) -> None:
    """Every cut position in `full` falls outside table rows, code blocks and links."""
    fences = [m.start() for m in FENCE.finditer(full)]
    blocks = list(zip(fences[::2], fences[1::2], strict=False))
    rows = [m.span() for m in TABLE_ROW.finditer(full)]
    links = [m.span() for m in LINK.finditer(full)]
    for at in ends:
        for what, spans in (("code block", blocks), ("table row", rows), ("link", links)):
            inside = [s for s in spans if s[0] < at < s[1]]
            assert not inside, f"cut at {at} inside a {what}: {full[inside[0][0] : inside[0][1]]!r}"
