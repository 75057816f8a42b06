"""`sift fetch` and `sift extract` without a server: the same pipeline run in this process,
and how an envelope is printed (text to stdout, errors to stderr, `--json` the envelope)."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from sift.cli import EXIT_ERROR
from sift.core.config import Config
from sift.core.envelope import Envelope
from sift.core.request import next_fields

if TYPE_CHECKING:  # imported late at run time: `sift pdftext` children start faster
    from sift.cli.progress import Pages
    from sift.documents.pdf.runner import Progress
    from sift.service.entries.cached import Printed
    from sift.service.services import Services

# What a command prints: an answer (or the part of one it prints), or an error body (a
# server's JSON as it came).
Said: TypeAlias = "Envelope | Printed | dict[str, Any]"


def document_flags(p: argparse.ArgumentParser) -> None:
    """The flags `fetch` and `extract` share: which part of a document, and how to print it."""
    p.add_argument("--pages", metavar="R", help='page range of a long document, e.g. "41-60"')
    p.add_argument("--grep", metavar="RE", help="lines matching an RE2 pattern, with page numbers")
    p.add_argument("--question", "-q", metavar="Q", help="answer a question about the document")
    p.add_argument("--max-chars", type=int, metavar="N", help="lower the output cap")
    p.add_argument("--max-tokens", type=int, metavar="N", help="cap the answer in tokens")
    p.add_argument("--offset", type=int, metavar="N", help="go on where a cut answer stopped")
    p.add_argument("--no-context", action="store_true", help="omit the title/source header")
    p.add_argument("--json", action="store_true", help="print the whole JSON envelope")


def document_fields(a: argparse.Namespace, body: dict[str, Any]) -> dict[str, Any]:
    """`body` with the fields of the shared document flags that were given."""
    for key in ("pages", "grep", "question", "max_chars", "max_tokens", "offset"):
        if getattr(a, key) is not None:
            body[key] = getattr(a, key)
    if a.no_context:
        body["context"] = False
    return body


def fetch_body(a: argparse.Namespace) -> dict[str, Any]:
    body = document_fields(a, {"url": a.url})
    if a.raw:
        body["mode"] = "raw"
    if a.jq is not None:
        body["jq"] = a.jq
    if a.recover:
        body["recover"] = True
    if a.render:
        body["render"] = True
    if a.if_none_match is not None:
        body["if_none_match"] = a.if_none_match
    return body


def pages_done(progress: Progress) -> tuple[int, int] | None:
    """(pages extracted, pages in all) of a PDF extraction in flight, for the progress bar."""
    snap = progress.snapshot()
    return (snap.extracted, snap.meta.pages) if snap is not None else None


def in_process(
    cfg: Config,
    work: Callable[[Services], Awaitable[Envelope]],
    label: str = "working",
    pages: Callable[[Services], Pages] | None = None,
) -> tuple[int, Said]:
    """Start the actors in this process, run one piece of pipeline work, stop them; on a
    terminal, progress after a second (`pages` of a PDF when it can be seen)."""
    import asyncio
    import logging

    from sift.cli.progress import Waiting
    from sift.core.errors import SiftError
    from sift.service.services import Services

    logging.basicConfig(level=logging.WARNING)
    # One piece of work: no spare children for a next document that never comes.
    cfg = msgspec.structs.replace(cfg, pdf=msgspec.structs.replace(cfg.pdf, spares=False))
    svc = Services(cfg)
    svc.start()

    async def once() -> tuple[int, Said]:
        try:
            return 200, await work(svc)
        except SiftError as exc:
            return exc.status, exc.to_body()
        finally:  # the store writes held past the answer finish on this loop, before it closes
            await svc.settle()

    try:
        with Waiting(label, pages(svc) if pages else None):
            return asyncio.run(once())
    finally:
        svc.stop()


def fetch_here(cfg: Config, body: dict[str, Any]) -> tuple[int, Said]:
    """`sift fetch` without a server: the /v1/fetch pipeline call, in this process."""
    from sift.core.callers import Caller
    from sift.service.document import Trace
    from sift.service.params import parse_params
    from sift.service.steps import pipeline

    async def work(svc: Services) -> Envelope:
        trace = Trace()
        caller = Caller("cli", "fleet")
        return (await pipeline.fetch_envelope(svc, caller, parse_params(body), trace)).envelope

    def pages(svc: Services) -> Pages:
        def now() -> tuple[int, int] | None:
            running = svc.readings.any()  # a PDF of this fetch in extraction
            return pages_done(running) if running is not None else None

        return now

    return in_process(cfg, work, "fetching", pages)


def extract(cfg: Config, a: argparse.Namespace) -> tuple[int, Said]:
    """`sift extract`: the document path on a local file, in this process; a PDF already in
    the page cache is answered from it without starting the actors (`service.cached`)."""

    from sift.service.entries import cached

    name, path = Path(a.file).name, Path(os.path.realpath(a.file))
    body = document_fields(a, {"url": path.as_uri()})
    try:
        # a pipe's bytes are read once (a file's only when its hash is not remembered)
        data = None if stat.S_ISREG(path.stat().st_mode) else path.read_bytes()
        answer = cached.extract(cfg, path, name, body, whole=a.json, data=data)
        if answer is not None:  # from the page cache, no actor started
            return answer
        data = path.read_bytes() if data is None else data
    except OSError as exc:
        return 2, {"success": False, "error": f"cannot read {a.file}: {exc.strerror}"}
    from sift.documents.pdf.runner import Progress
    from sift.service.entries import local_run
    from sift.service.params import parse_params

    progress = Progress()

    async def work(svc: Services) -> Envelope:
        p = parse_params(body)
        return (await local_run.run_local(svc, data, name, p, progress=progress)).envelope

    return in_process(cfg, work, f"extracting {name}", lambda _: lambda: pages_done(progress))


def print_result(status: int, said: Said, as_json: bool) -> int:
    """Print an answer (its text on stdout, what it says beside on stderr), or an error."""
    if as_json:
        import json  # late: the text alone needs none

        whole = said if isinstance(said, dict) else msgspec.to_builtins(said)
        print(json.dumps(whole, ensure_ascii=False, indent=2))
    answer = _answer(status, said)
    if answer is None:
        error = said if isinstance(said, dict) else {}
        hint = f" (hint: {error['hint']})" if error.get("hint") else ""
        print(f"sift: {error.get('error', 'failed')}{hint}", file=sys.stderr)
        return EXIT_ERROR
    if not as_json:
        _print_answer(answer)
    return 0


def _answer(status: int, said: Said) -> Envelope | Printed | None:
    """The answer in `said`, or None for an error (or a server that did not answer like
    sift)."""
    if not isinstance(said, dict):
        return said
    if status >= 400 or not said.get("success"):
        return None
    try:
        return msgspec.convert(said, Envelope)
    except msgspec.ValidationError:
        return None


def _print_answer(answer: Envelope | Printed) -> None:
    if answer.unchanged:
        print(f"sift: unchanged (content_hash {answer.content_hash})", file=sys.stderr)
        return
    text = answer.content
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if answer.changes:
        print(f"sift: changed since that version:\n{answer.changes}", file=sys.stderr)
    if answer.warning:
        print(f"sift: warning: {answer.warning}", file=sys.stderr)
    if answer.next:
        how = " ".join(f"--{k} {v}" for k, v in next_fields(answer.next).items())
        print(f"sift: cut; the rest with {how}", file=sys.stderr)
