"""Remove cookie-consent banners and dialogs from a parsed page, before extraction.

A consent banner is often the longest block of plain prose on a page that is still loading
its article, so extractors pick it as the content. It goes first: the containers of the
common consent platforms by their well-known ids and classes (OneTrust, Cookiebot, Didomi,
Quantcast, TrustArc, Usercentrics, Sourcepoint, CookieYes, Osano, Klaro, Iubenda, Complianz,
Borlabs, consentmanager, Google Funding Choices, cookieconsent…), then any other element that
is clearly a consent dialog: a dialog or an element named for cookies/consent whose short
text speaks of cookies or consent and offers to accept or reject. An article *about* cookies
or consent is no dialog: elements holding an `<article>`, `<main>` or `<h1>`, or much text,
stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import lxml.etree
from lxml.html import HtmlElement

from sift.clean import visible

_IDS = (
    "onetrust-consent-sdk",
    "onetrust-banner-sdk",
    "onetrust-pc-sdk",
    "optanon",
    "CybotCookiebotDialog",
    "CybotCookiebotDialogBodyUnderlay",
    "CookiebotWidget",
    "didomi-host",
    "didomi-notice",
    "qc-cmp2-container",
    "qcCmpUi",
    "truste-consent-track",
    "consent_blackbar",
    "teconsent",
    "usercentrics-root",
    "usercentrics-cmp-ui",
    "uc-banner",
    "cookie-law-info-bar",
    "klaro",
    "iubenda-cs-banner",
    "cmplz-cookiebanner-container",
    "BorlabsCookieBox",
    "cmpbox",
    "cmpbox2",
    "cookie-notice",
    "cc-main",
    "cc--main",
    "axeptio_overlay",
    "tarteaucitronRoot",
    "lanyard_root",
    "termly-code-snippet-support",
    "osano-cm-window",
    "cookiescript_injected",
    "gdpr-cookie-message",
    "CookieReportsBanner",
)
_CLASSES = (
    "optanon-alert-box-wrapper",
    "didomi-popup-container",
    "qc-cmp2-container",
    "qc-cmp-ui-container",
    "truste_overlay",
    "truste_box_overlay",
    "trustarc-banner",
    "sp_veil",
    "cky-consent-container",
    "cky-modal",
    "cky-overlay",
    "cli-modal",
    "osano-cm-window",
    "osano-cm-dialog",
    "iubenda-cs-container",
    "cmplz-cookiebanner",
    "cmpboxBG",
    "fc-consent-root",
    "cc-window",
    "cc-banner",
    "cookie-consent-banner",
)
_PREFIXES = ("sp_message_container", "sp_message_iframe")
_ID_SET = frozenset(_IDS)
_CLASS_SET = frozenset(_CLASSES)
# Matched in lower case (a case-blind pattern tries every position; this one skips to the
# letters its branches start with): `c(?<!\wc)mp` is `\bcmp`, the boundary checked after the c.
_NAMED = re.compile(r"cookie|consent|gdpr|c(?<!\wc)mp\b|privacy-?banner")
# What re.I would also read as i and s, folded before `str.lower` (which splits İ in two).
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
_DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
_TALKS_CONSENT = re.compile(
    r"\bcookies?\b|\bconsent\b|\bdata protection\b|\bpersonal data\b|\bprivacy\b", re.I
)
_OFFERS_CHOICE = re.compile(
    r"\b(accept|agree|allow|reject|decline|refuse|manage|preferences|settings|got it|ok)\b",
    re.I,
)
# The elements `_known` or `_dialog` can take (an id, a class, a role, aria-modal, or a
# `<dialog>`), found in C: most elements of a page have none, and a walk in Python is slower.
_CANDIDATES = lxml.etree.XPath(
    "descendant-or-self::*[@id or @class or @role or @aria-modal] | descendant-or-self::dialog"
)
# Every id and class value of the page's document, in one call: most pages name nothing
# `_known` or `_NAMED` finds, and then only the elements with a role, aria-modal or `<dialog>`
# need a look.
_IDS_OF = lxml.etree.XPath("//@id", smart_strings=False)
_CLASSES_OF = lxml.etree.XPath("//@class", smart_strings=False)
# (Each attribute found first, then its element: a third faster than a predicate on every
# element, the same elements in the same order.)
_UNNAMED = lxml.etree.XPath(
    "descendant-or-self::*/@role/.. | descendant-or-self::*/@aria-modal/.."
    " | descendant-or-self::dialog"
)
_KNOWN_NAMES = _ID_SET | _CLASS_SET
DIALOG_MAX = 2500  # characters: a consent dialog is short; an article is not
_CONTENT_TAGS = ("article", "main", "h1")


def _chars(el: HtmlElement) -> int:
    return len(" ".join(el.text_content().split()))


def is_consent_text(text: str) -> bool:
    """Short text about cookies or consent that offers a choice."""
    return (
        len(text) <= DIALOG_MAX
        and bool(_TALKS_CONSENT.search(text))
        and bool(_OFFERS_CHOICE.search(text))
    )


def _known(el: HtmlElement) -> bool:
    """A consent platform's container, by its id or class."""
    el_id = el.get("id", "")
    if el_id in _ID_SET or el_id.startswith(_PREFIXES):
        return True
    return not _CLASS_SET.isdisjoint(el.get("class", "").split())


def _dialog(el: HtmlElement) -> bool:
    if el.tag in ("html", "body", "head"):
        return False
    names = f"{el.get('id', '')} {el.get('class', '')}"
    if "\u0130" in names or "\u0131" in names or "\u017f" in names:
        names = names.translate(_FOLD)
    named = bool(_NAMED.search(names.lower()))
    role = el.get("role", "").lower() in _DIALOG_ROLES or el.tag == "dialog"
    modal = el.get("aria-modal", "").lower() == "true"
    if not (named or role or modal) or any(True for _ in el.iter(*_CONTENT_TAGS)):
        return False
    return is_consent_text(" ".join(el.text_content().split()))


def _named(value: str) -> bool:
    """Whether `_NAMED` finds a match in an id or a class attribute (`_dialog` searches them
    joined by a space, which no match spans)."""
    if "\u0130" in value or "\u0131" in value or "\u017f" in value:
        value = value.translate(_FOLD)
    return bool(_NAMED.search(value.lower()))


def attributes(tree: HtmlElement) -> visible.Attributes:
    """The page's id and class attribute values: read once by `honest.prepare` for this pass
    and the hidden-text pass (`visible.hidden_elements`), neither of which changes them."""
    return _IDS_OF(tree), _CLASSES_OF(tree)


def _names(tree: HtmlElement, attrs: visible.Attributes | None) -> tuple[set[str], set[str]] | None:
    """The id and class attribute values of the page (`attrs`, if read) that `_known` or a
    named `_dialog` may take; None where there are none (most pages: their values are
    searched at once first)."""
    ids, classes = attrs if attrs is not None else attributes(tree)
    names = "\n".join(ids + classes)
    if not any(prefix in names for prefix in _PREFIXES) and _KNOWN_NAMES.isdisjoint(
        names.split()  # (a known id is one word, as classes are)
    ):
        if "\u0130" in names or "\u0131" in names or "\u017f" in names:
            names = names.translate(_FOLD)
        if not _NAMED.search(names.lower()):
            return None
    return (
        {v for v in set(ids) if v in _ID_SET or v.startswith(_PREFIXES) or _named(v)},
        {v for v in set(classes) if not _CLASS_SET.isdisjoint(v.split()) or _named(v)},
    )


def strip_consent(
    tree: HtmlElement,
    chars: Callable[[HtmlElement], int] = _chars,
    attrs: visible.Attributes | None = None,
) -> int:
    """Remove consent banners and dialogs from `tree`, in place (`attrs`: its `attributes`,
    if read).

    Returns:
        How many characters of text were removed, as `chars` counts an element's (0 when
        the page had no banner).
    """
    names = _names(tree, attrs)
    if names is None:
        candidates = _UNNAMED(tree)
    elif len(names[0]) + len(names[1]) <= visible.VALUES_MAX:
        # (only an element with one of `names`, a role, aria-modal or a `<dialog>` may be one)
        candidates = visible.with_values(_UNNAMED, *names)(tree)
    else:
        ids, classes = names
        candidates = [
            el
            for el in _CANDIDATES(tree)
            if el.get("id") in ids
            or el.get("class") in classes
            or el.get("role") is not None
            or el.get("aria-modal") is not None
            or el.tag == "dialog"
        ]
    doomed = [el for el in candidates if _known(el) or _dialog(el)]
    seen = set(doomed)
    removed = 0
    for el in doomed:
        if el.getparent() is None or any(a in seen for a in el.iterancestors()):
            continue
        if el.tag in ("html", "body"):
            continue
        removed += chars(el)
        el.drop_tree()
    return removed
