"""7b. Clean quality by page type on the WCXB dev split (`bench/wcxb.py`): 1,497 real pages of
seven types (articles, documentation, services, forums, collections, listings, products)
against trafilatura called directly on the same HTML.

Each page is served from the loopback origin and fetched through `/v1/fetch` by a real
`sift serve`, so what is scored is what an agent gets; an answer that is not 200 (a page
sift calls a bot check, a soft 404, a wall) scores as an empty answer, and is counted: every
page of the set is content. One row per page type and one overall, each with the target
sift ≥ trafilatura; `--quick` scores every tenth page.
"""

from __future__ import annotations

from collections import Counter

from bench import wcxb
from bench.context import Ctx
from bench.results import Row, absent

NAME = "wcxb"
TITLE = "7b clean quality by page type (wcxb dev)"


def run(ctx: Ctx) -> list[Row]:
    data = wcxb.DATA
    if not (data / "html").is_dir() or not (data / "ground-truth").is_dir():
        return [absent(TITLE, "word F1", f"no benchmark data in {data}")]
    pages = list(wcxb.load_pages(data, every=10 if ctx.quick else 1))
    for page in pages:
        ctx.origin.set(f"/wcxb/{page.key}", page.html)
    # Long pages must come back whole, not as a map: raise the output cap; and two pages of
    # the set are over 5 MB, the default cap on a fetched body.
    sift = ctx.sift({"out_cap": 5_000_000, "fetch": {"max_body": 20_000_000}})
    client = sift.client()

    def through_sift(page: wcxb.Page) -> tuple[str, str]:
        r = client.post("/v1/fetch", {"url": ctx.origin.url(f"/wcxb/{page.key}"), "context": False})
        if r.status == 422:
            error = str(r.json.get("error", ""))  # "the site served X, not the page's content"
            return "", error.removeprefix("the site served ").split(", not")[0] or "422"
        if r.status != 200:
            return "", f"HTTP {r.status}"
        return str(r.json["content"]), "content"

    try:
        ctx.log(f"{len(pages)} pages through sift")
        s = wcxb.score(through_sift, pages)
        ctx.log("trafilatura directly")
        d = wcxb.score(wcxb.trafilatura, pages)
    finally:
        client.close()
        errors = ctx.done_with(sift)
    ctx.log(f"F1 sift {s.mean():.4f}, trafilatura {d.mean():.4f}")
    rows = []
    for kind in [*wcxb.types_of(pages), None]:
        note = ""
        if kind is None:
            note = (
                f"{len(pages)} pages through /v1/fetch ({s.seconds:.0f} s; trafilatura "
                f"{d.seconds:.0f} s); empty answers: sift {s.empty}, trafilatura {d.empty}"
            )
            if errors:
                note += f"; sift logged {len(errors)} ERROR lines"
        scenario = f"{TITLE}, {kind or 'all types'} ({s.count(kind)} pages)"
        target = ("ratio", ">=", 1.0)
        rows.append(
            Row(
                scenario,
                "word F1",
                [s.mean(kind)],
                [d.mean(kind)],
                "trafilatura direct",
                target,
                note,
            )
        )
    blocked = s.not_content()
    if blocked:
        ctx.log(f"not content: {', '.join(f'{k} ({s.verdict[k]})' for k in blocked)}")
    note = ", ".join(f"{n} {v}" for v, n in Counter(s.verdict[k] for k in blocked).items())
    if blocked:
        note += f" (pages {', '.join(blocked[:20])})"
    rows.append(
        Row(
            f"{TITLE}, all types",
            "pages answered as not content",
            [len(blocked)],
            [0],
            "trafilatura direct",
            ("sift", "<=", 0),
            note,
        )
    )
    return rows
