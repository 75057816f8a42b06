"""Structure kept: code blocks, tables and formulas in sift's markdown against trafilatura's.

On the WCXB dev pages of one type (documentation by default: CC-BY-4.0, Murrough Foley), each
page is cleaned by sift (`dispatch.clean`, in-process) and by trafilatura called the way sift
calls it (`EXTRACT_OPTIONS`: markdown, tables and formatting on); the row counts, over all the
pages, fenced code blocks (and those naming a language), tables (and those that are not valid
GFM, `tables.problems`), and formulas (`$…$`/`$$…$$`), with the source's `<pre>`, `<table>` and
math elements for scale.

    python -m bench.structure [--type documentation] [--limit N]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from bench import wcxb

_FENCE = re.compile(r"^(`{3,}|~{3,})(\S*)", re.M)
_TABLE = re.compile(r"^\|.*\|[ \t]*\n\|(?: *:?-+:? *\|)+[ \t]*$", re.M)
_FORMULA = re.compile(r"\$\$[^$]+\$\$|(?<![\\$\w])\$[^$\s][^$\n]*?\$(?![\w$])")
_SOURCE = {
    "pre": re.compile(rb"<pre[\s>]", re.I),
    "table": re.compile(rb"<table[\s>]", re.I),
    "math": re.compile(rb"<math[\s>]|math/tex|class=\"katex\"", re.I),
}


def counts(markdown: str) -> Counter[str]:
    """Code blocks (with a language), tables (invalid ones), formulas in a markdown text."""
    from sift.clean.tables import problems

    fences = _FENCE.findall(markdown)[::2]  # opening fences only
    return Counter(
        code=len(fences),
        code_lang=sum(1 for _, lang in fences if lang),
        tables=len(_TABLE.findall(markdown)),
        bad_tables=len(problems(markdown)),
        formulas=len(_FORMULA.findall(markdown)),
    )


def trafilatura_markdown(html: bytes) -> str:
    import trafilatura

    from sift.clean.html import EXTRACT_OPTIONS

    return trafilatura.extract(html.decode("utf-8", "replace"), **EXTRACT_OPTIONS) or ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--type", dest="kind", choices=wcxb.TYPES, default="documentation")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    sift, traf, source = Counter[str](), Counter[str](), Counter[str]()
    n = 0
    for page in wcxb.load_pages(wcxb.DATA, args.limit, args.kind):
        n += 1
        sift.update(counts(wcxb.sift_clean(page)[0]))
        traf.update(counts(trafilatura_markdown(page.html)))
        source.update({k: len(p.findall(page.html)) for k, p in _SOURCE.items()})
    print(f"WCXB dev {args.kind}, {n} pages; in the source: {dict(source)}")
    print(f"{'element':<12} {'sift':>6} {'traf.':>6}")
    for key in ("code", "code_lang", "tables", "bad_tables", "formulas"):
        print(f"{key:<12} {sift[key]:>6} {traf[key]:>6}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
