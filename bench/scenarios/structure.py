"""7d. Structure kept: fenced code blocks (and those naming a language), valid GFM tables and
formulas in sift's markdown against trafilatura's, over the real structure fixtures
(`tests/pages/structure/real/`: documentation, Q&A, scientific and tutorial fragments, each
inside the small page the tests use; `bench/structure.py`). Both run in this process. Target:
at least trafilatura's count of each element, and no invalid table (by kind in each row's note).
"""

from __future__ import annotations

from bench import structure
from bench.context import Ctx
from bench.results import Row

NAME = "structure"
TITLE = "7d structure kept (real fixtures)"
WHAT = {
    "code": "fenced code blocks",
    "code_lang": "code blocks naming a language",
    "valid_tables": "valid GFM tables",
    "bad_tables": "invalid tables",
    "formulas": "formulas ($…$, $$…$$)",
}


def run(ctx: Ctx) -> list[Row]:
    by_kind, source = structure.fixture_counts()
    ctx.log(f"in the fragments: {dict(source)}")
    ours, theirs = by_kind.pop("all")
    rows = []
    for key, what in WHAT.items():
        target = ("sift", "<=", 0) if key == "bad_tables" else ("diff", ">=", 0)
        kinds = ", ".join(f"{kind} {o[key]}/{t[key]}" for kind, (o, t) in by_kind.items())
        rows.append(
            Row(
                TITLE,
                what,
                [float(ours[key])],
                [float(theirs[key])],
                "trafilatura, sift's options",
                target,
                f"by kind, sift/trafilatura: {kinds}",
            )
        )
    return rows
