"""Continuation always moves forward: following `next` from any starting range (`"7"`,
`"11-"`, `"3-5"`, none) under any cap reads the rest of the document exactly once, in order,
with no part again and none skipped, on every door (`/v1/fetch`, `/r/`, `sift fetch`,
`sift extract`, MCP); a part longer than the cap goes on inside it, by `offset`. Each
document's parts hold words found nowhere else (`p07w012`: part 7's twelfth word), so the
words read, laid end to end, are the document's in order.

And a map only where it helps: a document of one part answers its text, cut with `next`; a
map names the parts before its directions."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp import Client

from tests.support.mcp_client import run, stdio_client, text
from tests.support.office import MEDIA
from tests.support.sift_server import FLEET_TOKEN, SiftServer

WORD = re.compile(r"\bp(\d\d)w(\d\d\d)\b")
# words in each part: varied, with parts 7 and 11 longer than most caps
PDF_WORDS = [30, 120, 45, 300, 15, 80, 700, 25, 200, 60, 650, 40]
HTML_WORDS = [200, 320, 220, 600, 200, 280, 900, 210, 450, 240, 850, 230]  # ≥ a section each
SHEET_ROWS = [3, 20, 5, 40, 2, 10, 120, 4, 30, 8, 100, 6]  # five words a row
NAMES = [
    "Alpha",
    "Bravo",
    "Charlie",
    "Delta",
    "Echo",
    "Foxtrot",
    "Golf",
    "Hotel",
    "India",
    "Juliet",
    "Kilo",
    "Lima",
]
CAPS: list[dict[str, int]] = [
    {"max_chars": 700},
    {"max_chars": 2_500},
    {"max_tokens": 200},
    {"max_tokens": 900},
]
STARTS = ["7", "11-", "3-5", None]


def _words(part: int, count: int) -> list[str]:
    return [f"p{part:02d}w{k:03d}" for k in range(1, count + 1)]


def _pdf() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.setTitle("Pages of many lengths")
    for n, count in enumerate(PDF_WORDS, 1):
        c.setFont("Helvetica", 7)
        words = _words(n, count)
        for line in range(0, count, 10):
            c.drawString(40, 800 - 9 * (line // 10), " ".join(words[line : line + 10]))
        c.showPage()
    c.save()
    return buf.getvalue()


def _html() -> str:
    sections = []
    for n, count in enumerate(HTML_WORDS, 1):
        words = _words(n, count)
        paras = "".join(f"<p>{' '.join(words[i : i + 50])}</p>" for i in range(0, count, 50))
        sections.append(f"<h2>Chapter {NAMES[n - 1]}</h2>{paras}")
    return (
        "<html><head><title>Chapters of many lengths</title></head><body><article>"
        f"{''.join(sections)}</article></body></html>"
    )


def _markdown() -> str:
    words = _words(1, 900)
    return "# Notes\n\n" + "\n\n".join(" ".join(words[i : i + 40]) for i in range(0, 900, 40))


def _xlsx() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    for n, rows in enumerate(SHEET_ROWS, 1):
        ws = wb.active if n == 1 else wb.create_sheet()
        ws.title = NAMES[n - 1]
        words = _words(n, rows * 5)
        for r in range(rows):
            ws.append(words[5 * r : 5 * r + 5])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


# name: (path, body, content type, words of each part)
DOCS: dict[str, tuple[str, bytes | str, str, list[int]]] = {
    "pdf": ("/cont/doc.pdf", b"", "application/pdf", PDF_WORDS),
    "html": ("/cont/article", "", "text/html; charset=utf-8", HTML_WORDS),
    "markdown": ("/cont/notes.md", "", "text/markdown; charset=utf-8", [900]),
    "xlsx": ("/cont/book.xlsx", b"", MEDIA["xlsx"], [5 * r for r in SHEET_ROWS]),
}
MAKERS = {"pdf": _pdf, "html": _html, "markdown": _markdown, "xlsx": _xlsx}


def _served(origin: Any, name: str) -> str:
    path, _, ctype, _ = DOCS[name]
    origin.set(path, MAKERS[name](), ctype)
    return str(origin.url(path))


def _expected(name: str, start: str | None) -> list[tuple[str | Any, ...]]:
    """The words of the parts `start` names, in order (all without a range)."""
    counts = DOCS[name][3]
    first, dash, last = (start or "1-").partition("-")
    a = int(first)
    b = int(last) if last else len(counts) if dash else a
    found = (WORD.fullmatch(w) for n in range(a, b + 1) for w in _words(n, counts[n - 1]))
    return [m.groups() for m in found if m is not None]


def _walk_http(sift: SiftServer, url: str, cap: dict[str, int], start: str | None) -> list[Any]:
    """The words read by following `next` from the first answer to the last."""
    base: dict[str, Any] = dict(cap)
    asked = {**base, **({"pages": start} if start else {})}
    words: list[Any] = []
    for _ in range(400):
        env = sift.fetch(url, **asked).json
        assert env["success"], (asked, env)
        if "max_tokens" in cap:
            assert env["tokens"] <= cap["max_tokens"], (asked, env["tokens"])
        words += WORD.findall(env["content"])
        nxt = env.get("next")
        if nxt is None:
            return words
        assert env["truncated"] is True
        # a range: those pages from their start; a number: the same request from there
        asked = {**base, "pages": nxt} if isinstance(nxt, str) else {**asked, "offset": nxt}
    raise AssertionError("no end after 400 answers")


@pytest.mark.parametrize("name", list(DOCS))
def test_following_next_reads_every_part_once_in_order(
    sift: SiftServer, origin: Any, name: str
) -> None:
    """Every cap and starting range: the words read are the range's, once each, in order;
    one download serves them all."""
    url = _served(origin, name)
    whole = sift.fetch(url, offset=0).json  # the whole text, uncut: each word is there
    assert whole["success"] and "next" not in whole, whole
    assert WORD.findall(whole["content"]) == _expected(name, None)
    starts = STARTS if name != "markdown" else [None]  # text has no parts to range over
    for cap in CAPS:
        for start in starts:
            read = _walk_http(sift, url, cap, start)
            assert read == _expected(name, start), (name, cap, start, _diff(read, name, start))
    assert origin.count(DOCS[name][0]) == 1


def _diff(read: list[Any], name: str, start: str | None) -> str:
    want = _expected(name, start)
    at = next((i for i, (x, y) in enumerate(zip(read, want, strict=False)) if x != y), None)
    at = min(len(read), len(want)) if at is None else at
    return f"{len(read)} read, {len(want)} expected, first difference at {at}: {read[at : at + 3]}"


def test_a_cut_page_continues_inside_it_not_with_its_range_again(
    sift: SiftServer, origin: Any
) -> None:
    """`pages: "7"` and `"11-"` cut by the cap name an `offset`, never the range again."""
    url = _served(origin, "pdf")
    for start in ("7", "11-", " 7 - 7 "):
        env = sift.fetch(url, pages=start, max_chars=700).json
        assert env["truncated"] is True and isinstance(env["next"], int), (start, env["next"])
        rest = sift.fetch(url, pages=start, max_chars=700, offset=env["next"]).json
        first, then = WORD.findall(env["content"]), WORD.findall(rest["content"])
        assert then and then[0] > first[-1], (start, first[-1], then[:1])


CONTINUE_R = re.compile(r"\n\n\[continue: (\S+)\]\n$")


def test_the_reader_url_continues_forward(sift: SiftServer, origin: Any) -> None:
    url = _served(origin, "pdf")
    for start in ("7", "11-"):
        path, words = f"/r/{url}?pages={start}&max_chars=700", []
        for _ in range(100):
            r = sift.request("GET", path)
            assert r.status == 200, r.body
            body = r.body.decode()
            words += WORD.findall(body)
            found = CONTINUE_R.search(body)
            if not found:
                break
            nxt = urlsplit(found.group(1))
            path = f"{nxt.path}?{nxt.query}"
        assert words == _expected("pdf", start), start


def _cli_walk(base: list[str], target: str, start: str, env: dict[str, str]) -> list[Any]:
    """Words printed by `sift …`, followed by its `the rest with --offset N` / `--pages R`."""
    words: list[Any] = []
    extra = {"--pages": start}
    for _ in range(50):
        flags = [x for kv in extra.items() for x in kv]
        out = subprocess.run(
            [sys.executable, "-m", "sift", *base, *flags, target],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        words += WORD.findall(out.stdout)
        found = re.search(r"^sift: cut; the rest with (--offset|--pages) (\S+)$", out.stderr, re.M)
        if not found:
            return words
        # a range: those pages from their start; a number: the same request from there
        named = {found.group(1): found.group(2)}
        extra = named if found.group(1) == "--pages" else {**extra, **named}
    raise AssertionError("no end after 50 answers")


def test_sift_fetch_continues_forward(sift: SiftServer, origin: Any) -> None:
    """The rest `sift fetch` names on stderr reads on from where the answer stopped."""
    url = _served(origin, "pdf")
    env = {"SIFT_TOKEN": FLEET_TOKEN, "SIFT_CONFIG": "", "PATH": "/usr/bin:/bin"}
    for start in ("7", "11-"):
        base = ["fetch", "--server", sift.url, "--max-chars", "1500"]
        assert _cli_walk(base, url, start, env) == _expected("pdf", start), start


def test_sift_extract_continues_forward(tmp_path: Path) -> None:
    """So does `sift extract`'s, in process."""
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(_pdf())
    cfg = tmp_path / "sift.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n')
    base = ["--config", str(cfg), "extract", "--max-chars", "2500"]
    read = _cli_walk(base, str(pdf), "11-", {"PATH": "/usr/bin:/bin"})
    assert read == _expected("pdf", "11-")


CONTINUE_MCP = re.compile(r"\[continue: call fetch again with (start_index=(\d+)|pages=\"(.+)\")\]")


def test_mcp_fetch_continues_forward(sift: SiftServer, origin: Any) -> None:
    url = _served(origin, "pdf")

    async def scenario(client: Client) -> None:
        for start in ("7", "11-"):
            args: dict[str, Any] = {"url": url, "pages": start, "max_chars": 700}
            words: list[Any] = []
            for _ in range(50):
                r = await client.call_tool("fetch", args)
                assert not r.is_error, text(r)
                said = text(r)
                words += WORD.findall(said)
                found = CONTINUE_MCP.search(said)
                if not found:
                    break
                if found.group(2):
                    args = {**args, "start_index": int(found.group(2))}
                else:
                    args = {"url": url, "max_chars": 700, "pages": found.group(3)}
            assert words == _expected("pdf", start), start

    run(stdio_client(sift.url), scenario)


def test_a_document_of_one_part_answers_its_text_not_a_map(sift: SiftServer, origin: Any) -> None:
    """A 1,287-character article of one section at `max_chars` 400 (and the README's
    `--max-chars 300`) is its text, cut with `next`; read on, it is the whole text once."""
    para = "The harbour opened at dawn and the boats went out in a long line. " * 18
    body = (
        "<html><head><title>Harbour</title></head><body><article><h1>Harbour</h1>"
        f"<p>{para}</p></article></body></html>"
    )
    origin.set("/cont/one", body)
    url = origin.url("/cont/one")
    whole = sift.fetch(url, context=False).json["content"]
    assert 1_000 < len(whole) < 1_500, len(whole)
    for cap in (400, 300):
        env = sift.fetch(url, max_chars=cap).json
        assert env["hint"] is None and isinstance(env["next"], int), env
        assert (
            "longer than one answer" not in env["content"] and "Ask for part" not in env["content"]
        )
        assert "harbour opened at dawn" in env["content"]
        pieces, asked = [], {"context": False, "max_chars": cap}
        while True:
            got = sift.fetch(url, **asked).json
            pieces.append(got["content"])
            if "next" not in got:
                break
            asked = {**asked, "offset": got["next"]}
        assert "".join(pieces) == whole
    one_page = _served(origin, "pdf")  # a one-page range is a page, not a map, as ever
    env = sift.fetch(one_page, pages="5", max_chars=300).json
    assert env["pdf"]["map"] is False


def test_a_map_names_the_parts_before_its_directions(sift: SiftServer, origin: Any) -> None:
    """At `max_chars` 600 an xlsx of three sheets names all three: the directions take what
    room is left."""
    import openpyxl

    wb = openpyxl.Workbook()
    for n in range(1, 4):
        ws = wb.active if n == 1 else wb.create_sheet()
        ws.title = f"Figures {NAMES[n - 1]}"
        for i in range(30):
            ws.append([f"row {i}", i * n, f"note {i} of sheet {n}"])
    out = io.BytesIO()
    wb.save(out)
    origin.set("/cont/three.xlsx", out.getvalue(), MEDIA["xlsx"])
    env = sift.fetch(origin.url("/cont/three.xlsx"), max_chars=600).json
    assert env["hint"] == "pages" and env["parts"]["map"] is True, env
    for n in (1, 2, 3):
        listed = rf"^- Figures {NAMES[n - 1]} · 30 rows × 3 columns \(sh\. {n}\)$"
        assert re.search(listed, env["content"], re.M), env["content"]
    assert 'pages="a-b"' in env["content"]  # the directions, in what room is left
