"""What a page states about itself: its title (as trafilatura's metadata reads it), description,
language, canonical URL, site name, authors and dates, from its head (`<meta>`, `<link
rel=canonical>`, `<html lang>`) and its JSON-LD.

Only what the page states: nothing is guessed from the text (htmldate's search of a page's
markup for a date cost ~70 ms on a page that states none, measured). Stated dates are checked
and written as ISO 8601 dates by htmldate (Apache-2.0, already trafilatura's).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from datetime import date
from typing import Any
from urllib.parse import urljoin

import lxml.etree
from lxml.html import HtmlElement
from trafilatura.metadata import examine_meta, extract_meta_json, extract_title

log = logging.getLogger("sift.clean")

_FIELD_MAX = 500
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TITLE_MAX = 300
# (Of the whole document, as `//` says, where the parser made `tree` a fragment of it.)
# (The attribute tested, then its element taken: faster than a predicate on each script.)
_JSON_LD = lxml.etree.XPath("//script/@type[. = 'application/ld+json']/..")
_DESCRIPTION = ("description", "og:description", "twitter:description", "dc.description")
_SITE = ("og:site_name", "application-name", "twitter:site")
_AUTHOR = ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author")
_PUBLISHED = ("article:published_time", "datepublished", "dc.date.issued", "dc.date", "date")
_MODIFIED = ("article:modified_time", "og:updated_time", "datemodified", "last-modified")
_LANGUAGE = ("content-language", "og:locale", "dc.language", "language")


def _head(tree: HtmlElement) -> tuple[dict[str, str], str | None]:
    """In one walk of the page: its `<meta>` values by lower-cased name or property (the first
    of each), and the first canonical `<link>`'s target."""
    metas: dict[str, str] = {}
    canonical: str | None = None
    for el in tree.iter("meta", "link"):
        if el.tag == "meta":
            key = el.get("name") or el.get("property") or el.get("http-equiv") or ""
            key, value = key.strip().lower(), " ".join((el.get("content") or "").split())
            if key and value and key not in metas:
                metas[key] = value[:_FIELD_MAX]
        elif canonical is None and "canonical" in (el.get("rel") or "").lower().split():
            canonical = el.get("href") or None
    return metas, canonical


def _first(metas: dict[str, str], keys: tuple[str, ...]) -> str:
    return next((metas[k] for k in keys if metas.get(k)), "")


def _json_ld(tree: HtmlElement) -> list[dict[str, Any]]:
    """The page's JSON-LD objects (those in `@graph` too)."""
    found: list[dict[str, Any]] = []
    for script in _JSON_LD(tree)[:10]:
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        stack = data if isinstance(data, list) else [data]
        for item in stack:
            if isinstance(item, dict):
                found.append(item)
                graph = item.get("@graph")
                found.extend(g for g in graph if isinstance(g, dict)) if isinstance(
                    graph, list
                ) else None
    return found


def _names(value: Any) -> list[str]:
    """Author names in a JSON-LD `author` (a string, a Person, or a list of them)."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(name, str) and name.strip():
            out.append(" ".join(name.split())[:_FIELD_MAX])
    return out


def _ld(objects: list[dict[str, Any]], key: str) -> Any:
    return next((o[key] for o in objects if o.get(key)), None)


def _date(value: str) -> str:
    """An ISO date (YYYY-MM-DD) from a stated date, else "". One written so already is
    checked by `datetime.date` (htmldate's `strptime` answers the same, at ~40 µs a call)."""
    try:
        from htmldate.validators import convert_date

        text = value.strip()[:10]
        if _ISO_DAY.fullmatch(text):
            return date(int(text[:4]), int(text[5:7]), int(text[8:])).strftime("%Y-%m-%d")
        return str(convert_date(text, "%Y-%m-%d", "%Y-%m-%d")) if len(text) == 10 else ""
    except (ValueError, TypeError):
        return ""


def page_meta(tree: HtmlElement, url: str) -> dict[str, str]:
    """The page's stated metadata, by field: `description`, `language`, `canonical`,
    `site_name`, `authors` (comma-separated), `published`, `modified`; absent when unstated."""
    (metas, canonical), objects = _head(tree), _json_ld(tree)
    out = {
        "description": _first(metas, _DESCRIPTION) or str(_ld(objects, "description") or ""),
        "language": (tree.get("lang") or _first(metas, _LANGUAGE)).strip()[:35],
        "site_name": _first(metas, _SITE),
    }
    if canonical:
        with contextlib.suppress(ValueError):  # a link no URL parser reads states none
            out["canonical"] = urljoin(url, canonical.strip())
    authors = _names(_ld(objects, "author")) or [
        a for a in [_first(metas, _AUTHOR)] if a and not a.startswith("http")
    ]
    out["authors"] = ", ".join(dict.fromkeys(authors))
    published = _date(_first(metas, _PUBLISHED) or str(_ld(objects, "datePublished") or ""))
    modified = _date(_first(metas, _MODIFIED) or str(_ld(objects, "dateModified") or ""))
    out["published"] = published
    out["modified"] = modified
    return {k: v[:_FIELD_MAX] for k, v in out.items() if v}


_DESCRIPTIONS = ("description", "og:description", "twitter:description")


def meta_text(tree: HtmlElement, title: str) -> str:
    """The title and the meta/OpenGraph description, for a page with no visible text."""
    description = ""
    for el in tree.iter("meta"):
        key = (el.get("name") or el.get("property") or "").strip().lower()
        if key in _DESCRIPTIONS and (el.get("content") or "").strip():
            description = " ".join(str(el.get("content")).split())
            if key == "description":
                break
    return "\n\n".join(part for part in (f"# {title}" if title else "", description) if part)


def page_title(tree: HtmlElement) -> str:
    """The title as trafilatura's metadata sees it (og/meta, JSON-LD, h1), else `<title>`."""
    title: str | None = None
    try:
        said = examine_meta(tree)
        title = said.title or extract_meta_json(tree, said).title or extract_title(tree)
    except Exception:  # metadata is a nicety: never fail a page over it
        title = None
    if not title:
        el = tree.find(".//title")
        title = el.text_content() if el is not None else ""
    return " ".join(title.split())[:_TITLE_MAX]
