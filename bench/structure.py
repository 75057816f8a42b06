"""Structure kept: code blocks, tables and formulas in sift's markdown against trafilatura's.

On the WCXB dev pages of one type (documentation by default: CC-BY-4.0, Murrough Foley), each
page is cleaned by sift (`dispatch.clean`, in-process) and by trafilatura called the way sift
calls it (`EXTRACT_OPTIONS`: markdown, tables and formatting on); the row counts, over all the
pages, fenced code blocks (and those naming a language), tables (a run of pipe rows; those
valid GFM and those not, by `tables.problems`), and formulas (`$…$`/`$$…$$`), with the
source's `<pre>`, `<table>` and math elements for scale.

    python -m bench.structure [--type documentation] [--limit N]

With `--fixtures`, the same counts over the real structure fixtures instead
(`tests/pages/structure/real/`, cut by `bench/structure_cut.py`), each fragment inside the
same small page the tests use, by page kind, with the target (at least trafilatura's count,
no invalid table) and a verdict per element.

    python -m bench.structure --fixtures
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from bench import structure_cut, wcxb

_FENCE = re.compile(r"^(`{3,}|~{3,})(\S*)", re.M)
_TABLE = re.compile(r"(?:^\|.*(?:\n|$))+", re.M)  # a run of pipe rows: one table
_DELIMITER = re.compile(r"^\|(?: *:?-+:? *\|)+[ \t]*$", re.M)
_FORMULA = re.compile(r"\$\$[^$]+\$\$|(?<![\\$\w])\$[^$\s][^$\n]*?\$(?![\w$])")
_SOURCE = {
    "pre": re.compile(rb"<pre[\s>]", re.I),
    "table": re.compile(rb"<table[\s>]", re.I),
    "math": re.compile(rb"<math[\s>]|math/tex|class=\"katex\"", re.I),
}


def counts(markdown: str) -> Counter[str]:
    """Code blocks (with a language), tables (valid GFM, invalid), formulas in a markdown text."""
    from sift.clean.tables import problems

    fences = _FENCE.findall(markdown)[::2]  # opening fences only
    tables = sum(1 for block in _TABLE.findall(markdown) if _DELIMITER.search(block))
    bad = len({why.split(":")[0] for why in problems(markdown)})  # "table at line N: ..."
    return Counter(
        code=len(fences),
        code_lang=sum(1 for _, lang in fences if lang),
        tables=tables,
        bad_tables=bad,
        valid_tables=tables - bad,
        formulas=len(_FORMULA.findall(markdown)),
    )


def trafilatura_markdown(html: bytes) -> str:
    import trafilatura

    from sift.clean.html import EXTRACT_OPTIONS

    return trafilatura.extract(html.decode("utf-8", "replace"), **EXTRACT_OPTIONS) or ""


ELEMENTS = ("code", "code_lang", "tables", "valid_tables", "bad_tables", "formulas")
_PROSE = (
    "<p>The committee met on Tuesday to discuss the new budget for the public library system, "
    "and several members argued that the reading rooms needed longer opening hours.</p>"
)


def fixture_page(name: str) -> bytes:
    """A fixture fragment inside the page tests/clean/test_clean_structure_real.py serves."""
    fragment = (structure_cut.FIXTURES / "real" / f"{name}.html").read_text(encoding="utf-8")
    return (
        "<html><head><meta charset='utf-8'><title>Structure test</title></head><body><article>"
        f"<h1>Structure test</h1>{_PROSE}{fragment}{_PROSE}</article></body></html>"
    ).encode()


def _verdict(key: str, ours: int, theirs: int) -> tuple[str, str]:
    if key == "bad_tables":
        return "= 0", "ok" if ours == 0 else "FAIL"
    if key == "tables":  # more pipe tables than the page has is not more kept
        return "", ""
    return f">= {theirs}", "ok" if ours >= theirs else "FAIL"


def fixture_counts() -> tuple[dict[str, tuple[Counter[str], Counter[str]]], Counter[str]]:
    """Over the real fixtures: {page kind: (sift's counts, trafilatura's)}, with "all" last,
    and the elements in the fragments' sources for scale."""
    by_kind: dict[str, tuple[Counter[str], Counter[str]]] = {}
    source: Counter[str] = Counter()
    for entry in structure_cut.manifest():
        html = fixture_page(entry["name"])
        source.update(
            code=len(_SOURCE["pre"].findall(html)),
            tables=len(_SOURCE["table"].findall(html)),
            formulas=len(_FORMULA.findall(html.decode())),
        )
        page = wcxb.Page(entry["name"], html, "http://127.0.0.1/structure", entry["kind"], "")
        ours, theirs = by_kind.setdefault(entry["kind"], (Counter(), Counter()))
        ours.update(counts(wcxb.sift_clean(page)[0]))
        theirs.update(counts(trafilatura_markdown(html)))
    total: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
    for ours, theirs in by_kind.values():
        total[0].update(ours)
        total[1].update(theirs)
    return {**dict(sorted(by_kind.items())), "all": total}, source


def fixtures() -> int:
    """The structure row over the real fixtures, by page kind."""
    by_kind, source = fixture_counts()
    print(f"In the fragments: {dict(source)}")
    print(f"{'kind':<14} {'element':<13} {'sift':>5} {'traf.':>5}  {'target':<7} verdict")
    for kind, (ours, theirs) in by_kind.items():
        for key in ELEMENTS:
            target, verdict = _verdict(key, ours[key], theirs[key])
            print(f"{kind:<14} {key:<13} {ours[key]:>5} {theirs[key]:>5}  {target:<7} {verdict}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--type", dest="kind", choices=wcxb.TYPES, default="documentation")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--fixtures", action="store_true", help="the real structure fixtures")
    args = parser.parse_args(argv)
    if args.fixtures:
        return fixtures()
    sift, traf, source = Counter[str](), Counter[str](), Counter[str]()
    n = 0
    for page in wcxb.load_pages(wcxb.DATA, args.limit, args.kind):
        n += 1
        sift.update(counts(wcxb.sift_clean(page)[0]))
        traf.update(counts(trafilatura_markdown(page.html)))
        source.update({k: len(p.findall(page.html)) for k, p in _SOURCE.items()})
    print(f"WCXB dev {args.kind}, {n} pages; in the source: {dict(source)}")
    print(f"{'element':<13} {'sift':>6} {'traf.':>6}")
    for key in ELEMENTS:
        print(f"{key:<13} {sift[key]:>6} {traf[key]:>6}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
