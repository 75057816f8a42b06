"""What a page is: `content`, or a page that stands in for it — `challenge` (a bot check, a
CAPTCHA, a block or rate-limit page), `consent` (nothing but a consent wall), `login` (a
sign-in wall) or `soft_404` (a 200 that says the page does not exist).

Conservative by construction: every non-content verdict needs a page with little text of its
own (an article that mentions "captcha", "404" or "sign in" is long) *and* a marker — a bot
vendor's own markup or wording (Cloudflare, hCaptcha, reCAPTCHA, DataDome, PerimeterX/HUMAN,
Akamai, Imperva/Incapsula, AWS WAF, Sucuri, DDoS-Guard, Vercel), a password form with
sign-in wording, a not-found title or heading, or a consent text with nothing else left.
A bot check, a consent wall or a sign-in wall is a page whose content *is* the check or the
wall: little text in the whole page, not only in its main content. A product page shows a
short description and a page of everything else; its reCAPTCHA form or its vendor's sensor
script (PerimeterX, DataDome run on every page of the sites they guard) does not make it one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import lxml.etree
from lxml.html import HtmlElement

from sift.clean.consent import is_consent_text

SHORT = 250  # words: a page shorter than this may stand in for the content
TINY = 60  # words: what is left of a page that is only a consent wall
_SCAN = 200_000  # characters of HTML looked at for markers
# The text a person sees in the whole page (the tree has lost its hidden text already).
_SHOWN = lxml.etree.XPath(
    "//body//text()[not(ancestor::script or ancestor::style or ancestor::noscript "
    "or ancestor::template)]",
    smart_strings=False,
)


@dataclass(frozen=True)
class Page:
    """The verdict: the kind, what the site served (one line), and the hint for the agent."""

    kind: str = "content"
    what: str = ""
    hint: str | None = None


CONTENT = Page()

# (what the site served, markers in the HTML or the visible text; any one suffices). They are
# searched in the lower-cased HTML, not with re.I: a case-blind pattern tries every position of
# the page, a plain one skips to the characters its branches start with.
_VENDORS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, re.compile(rx))
    for what, rx in (
        (
            "a Cloudflare bot check",
            r"_cf_chl_opt|cf-chl-|/cdn-cgi/challenge-platform/h/|"
            r"<title>\s*just a moment|attention required! \| cloudflare|cf-error-details|"
            r"cf-browser-verification|checking your browser before accessing",
        ),
        ("a DataDome bot check", r"captcha-delivery\.com|datadome"),
        (
            "a PerimeterX/HUMAN bot check",
            r"px-captcha|_pxappid|press (?:&amp;|&) hold|"
            r"perimeterx",
        ),
        (
            "an Akamai block page",
            r"pardon our interruption|errors(?:\.|&#46;)edgesuite|"
            r"<title>\s*access denied\s*</title>[\s\S]{0,2000}reference(?:\s|&#32;)*(?:#|&#35;)",
        ),
        ("an Imperva/Incapsula bot check", r"_incapsula_resource|incapsula incident id"),
        ("an AWS WAF bot check", r"awswaf|aws-waf-token"),
        ("a Sucuri firewall block page", r"sucuri website firewall|sucuri\.net/privacy-policy"),
        ("a DDoS-Guard bot check", r"ddos-guard"),
        ("a Vercel security checkpoint", r"vercel security checkpoint"),
        ("an hCaptcha check", r"hcaptcha\.com/1/api\.js|class=[\"']h-captcha"),
        (
            "a reCAPTCHA check",
            r"google\.com/recaptcha/|class=[\"']g-recaptcha|"
            r"our systems have detected unusual traffic",
        ),
    )
)
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
_HUMAN_CHECK = re.compile(
    r"verify (?:that )?you are (?:a )?human|are you a robot|not a robot|"
    r"(?:think|thought) you (?:were|are) a (?:ro)?bot|"
    r"complete the (?:security )?check|"
    r"checking (?:if the site connection is secure|your browser)|"
    r"enable javascript and cookies to continue|unusual traffic|"
    r"automated (?:queries|requests|access)|"
    r"access (?:to this page )?(?:has been |is )?denied|you have been blocked",
    re.I,
)
_RATE_LIMIT = re.compile(
    r"too many requests|rate[- ]limit(?:ed| exceeded)?|you(?:'ve| have) been rate[- ]limited|"
    r"slow down|request limit",
    re.I,
)
_NOT_FOUND = re.compile(
    r"\b404\b|page (?:was )?not found|not be found|could ?n[o']t (?:be )?find|"
    r"does ?n[o']t exist|no longer (?:exists|available)|page (?:is )?missing|"
    r"nothing (?:was )?found|seite nicht gefunden|page introuvable|página no encontrada",
    re.I,
)
_SIGN_IN = re.compile(
    r"\b(?:sign|log)[ -]?in\b|\blogin\b|\bauthenticat|\bpassword\b|"
    r"members? only|you must be logged in|anmelden|connexion|iniciar sesi",
    re.I,
)
_CONSENT_WALL = re.compile(
    r"before you continue|we value your privacy|cookie(?:s)? (?:settings|preferences|policy)|"
    r"consent|your privacy choices",
    re.I,
)


def _words(text: str, most: int) -> int:
    """The words of `text`, counted up to `most` (a long text is not split whole)."""
    return len(text.split(maxsplit=most))


def _lower(html: str) -> str:
    """`html` as `_VENDORS` read it: lower-cased, after folding the letters re.I would also
    read as i and s (`str.lower` turns İ into two characters and leaves ı and ſ)."""
    if "\u0130" in html or "\u0131" in html or "\u017f" in html:
        html = html.translate(_FOLD)
    return html.lower()


def _headings(tree: HtmlElement) -> str:
    return " ".join(" ".join(h.text_content().split()) for h in tree.iter("h1", "h2"))[:500]


def classify(html: str, tree: HtmlElement, title: str, text: str, consent_removed: int = 0) -> Page:
    """What the page is.

    Args:
        html: the page's HTML as decoded (markers live in scripts and attributes).
        tree: the page after hidden text and consent banners were removed.
        title: the page's title.
        text: the extracted main content (markdown).
        consent_removed: characters of consent banners removed from the page.
    """
    words = _words(text, SHORT)
    if words >= SHORT:
        return CONTENT
    seen = f"{title}\n{text}"
    shown = " ".join(_SHOWN(tree))
    if _words(shown, SHORT) >= SHORT:  # a whole page of text: the check is not its content
        return _not_found(title, words, tree)
    if words < TINY or _HUMAN_CHECK.search(seen):
        head = _lower(html[:_SCAN])
        for what, marker in _VENDORS:
            if marker.search(head):
                if _words(shown, TINY) < TINY or _HUMAN_CHECK.search(f"{title}\n{shown}"):
                    return Page("challenge", what, "browser")
                break
    if _RATE_LIMIT.search(title) or (words < TINY and _RATE_LIMIT.search(text)):
        return Page("challenge", "a rate-limit page", "retry")
    if _HUMAN_CHECK.search(title) or (words < TINY and _HUMAN_CHECK.search(text)):
        return Page("challenge", "a bot check", "browser")
    if words < TINY and (
        (consent_removed > 0 and (_CONSENT_WALL.search(seen) or consent_removed > len(text)))
        or (is_consent_text(text) and _CONSENT_WALL.search(seen))
    ):
        return Page("consent", "a consent wall (no content until consent is given)")
    headings = _headings(tree)
    if (not_found := _not_found(title, words, tree, headings)) is not CONTENT:
        return not_found
    password = any((el.get("type") or "").lower() == "password" for el in tree.iter("input"))
    if password and _SIGN_IN.search(f"{title}\n{headings}\n{text}"):
        return Page("login", "a sign-in wall (the page needs a logged-in session)")
    return CONTENT


def _not_found(title: str, words: int, tree: HtmlElement, headings: str | None = None) -> Page:
    """A soft 404: a not-found title, or a short page with a not-found heading."""
    if _NOT_FOUND.search(title) or (
        words < TINY and _NOT_FOUND.search(_headings(tree) if headings is None else headings)
    ):
        return Page("soft_404", 'a page saying it does not exist (a "soft 404")')
    return CONTENT
