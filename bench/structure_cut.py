"""Cut the real structure fixtures from the WCXB dev pages, so they can be made again.

`tests/pages/structure/fragments.json` names each fragment: the WCXB dev file it comes from
(`html/NNNN.html.gz`, CC-BY-4.0, Murrough Foley), the XPath of the element cut (a list of
XPaths: those elements joined in order), its page kind, and for a long table the rows kept
(`rows`, indexes; each rowspan shortened to the kept rows it covers). Each fragment is written as
`tests/pages/structure/real/<name>.html`, the element's markup as served (scripts and styles
inside it dropped); the page's URL comes from the file's WCXB ground truth.

    python -m bench.structure_cut [--data ../shared/bench-data/wcxb-dev]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

from lxml import etree, html

from bench import wcxb

FIXTURES = Path(__file__).parents[1] / "tests" / "pages" / "structure"


def manifest() -> list[dict[str, Any]]:
    """The fragments, as fragments.json lists them."""
    return list(json.loads((FIXTURES / "fragments.json").read_text(encoding="utf-8")))


def cut(data: Path, entry: dict[str, Any]) -> tuple[str, str]:
    """The fragment's markup and its page's URL."""
    source = entry["source"]
    raw = gzip.decompress((data / "html" / f"{source}.html.gz").read_bytes())
    tree = html.fromstring(raw.decode("utf-8", "replace"))
    paths = entry["xpath"] if isinstance(entry["xpath"], list) else [entry["xpath"]]
    parts = []
    for path in paths:
        found = tree.xpath(path)
        if not found:
            raise SystemExit(f"{entry['name']}: nothing at {path} in {source}")
        element = found[0]
        for drop in element.xpath(".//script|.//style"):
            drop.drop_tree()
        element.tail = None
        if "rows" in entry:
            _keep_rows(element, entry["rows"])
        parts.append(etree.tostring(element, encoding="unicode", method="html"))
    truth = json.loads((data / "ground-truth" / f"{source}.json").read_text(encoding="utf-8"))
    return "\n".join(parts) + "\n", str(truth["url"])


def _keep_rows(table: Any, keep: list[int]) -> None:
    """Keep only these rows of a long table, each rowspan shortened to the kept rows it spans."""
    rows = table.xpath(".//tr")
    for index, row in enumerate(rows):
        if index not in keep:
            continue
        for cell in row.xpath("./th|./td"):
            span = int(cell.get("rowspan") or 1)
            if span > 1:
                kept = sum(1 for i in keep if index <= i < index + span)
                cell.set("rowspan", str(kept))
    for index, row in enumerate(rows):
        if index not in keep:
            row.getparent().remove(row)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=wcxb.DATA)
    args = parser.parse_args(argv)
    (FIXTURES / "real").mkdir(exist_ok=True)
    for entry in manifest():
        markup, url = cut(args.data, entry)
        (FIXTURES / "real" / f"{entry['name']}.html").write_text(markup, encoding="utf-8")
        print(f"{entry['name']:<24} {entry['kind']:<14} {entry['source']}  {len(markup):>6}  {url}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
