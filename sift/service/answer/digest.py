"""The digest entry point: answer a question about a document, on the event loop.

    cache → index (DigestActor) → embeddings ready? (store) → rank (DigestActor)
          → model behind the digest gate (or the extractive answer) → cache

Retrieval is `full` when the whole text fits the model's input budget, else the best chunks:
by BM25 until the EmbedActor has embedded every chunk (the build is started by the first
question that needs it, which does not wait for it), by hybrid fusion after. A configured model
that fails, times out or stays busy past its timeout gives way to the extractive answer with a
`warning`, never to a failed request. Questions, prompts and answers are never logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import weakref
import zlib
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from sift.actors.bridge import ask
from sift.actors.digest import IndexInfo, Prepare, Rank, Ranked
from sift.actors.embed import EmbedBuild
from sift.core import metrics
from sift.core.config import Config, EmbedConfig
from sift.core.envelope import DigestFacts
from sift.digest import chunks, llm, prompt

if TYPE_CHECKING:
    from sift.service.parts.runtime import Runtime

log = logging.getLogger("sift.digest")

EXTRACTIVE = "extractive"
ACTOR_DEADLINE = 60.0  # indexing a 2,000-page document takes a few seconds, not a minute
QUERY_EMBED_TIMEOUT = 10.0
PRUNE_EVERY = 3600.0


@dataclass(frozen=True)
class DigestAnswer:
    """A digest: `answer` is the envelope's `content`; `envelope()` is its `digest` object."""

    answer: str
    model: str
    retrieval: str  # full | bm25 | hybrid
    chunks: int  # chunks the answer was drawn from
    embedded: str  # "k/n": chunks with an embedding / chunks of the document
    cached: bool = False
    warning: str | None = None

    def facts(self) -> DigestFacts:
        """The answer's `digest` object."""
        return DigestFacts(
            self.answer, self.model, self.retrieval, self.chunks, self.embedded, self.cached
        )

    def record(self) -> dict[str, Any]:
        """What the digest cache keeps."""
        out = asdict(self)
        del out["warning"], out["cached"]
        return out


@dataclass
class _State:
    """Per running service and event loop: the digest gate and the pruning clock."""

    loop: asyncio.AbstractEventLoop
    gate: asyncio.Semaphore
    pruned_at: float = field(default_factory=time.monotonic)


_STATES: weakref.WeakKeyDictionary[Any, _State] = weakref.WeakKeyDictionary()


def _state(svc: Runtime) -> _State:
    loop = asyncio.get_running_loop()
    state = _STATES.get(svc)
    if state is None or state.loop is not loop:  # a semaphore belongs to one loop
        state = _STATES[svc] = _State(loop, asyncio.Semaphore(svc.cfg.digest.concurrency))
    return state


def question_key(question: str) -> str:
    """The cache key of a question: case and spacing do not make a new question."""
    folded = " ".join(question.split()).casefold()
    return hashlib.sha256(folded.encode()).hexdigest()


def model_name(cfg: Config) -> str:
    return (cfg.digest.model or "default") if cfg.digest.endpoint else EXTRACTIVE


def embed_key(cfg: EmbedConfig) -> str:
    """Embeddings are stored under the model and the chunking scheme they were made for."""
    return f"{cfg.model or 'default'}#chunks{chunks.SCHEME}"


def unit_of(kind: str, parts: int) -> str | None:
    """PDFs are cited by page; other documents by section, when they have more than one."""
    if kind == "pdf":
        return "page"
    return "section" if parts > 1 else None


def _cut(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: max(0, cap - 1)] + "…"


@dataclass(frozen=True)
class Asked:
    """A question about a document whose text is `pages` (`pages[i]` is page i+1).

    Attributes:
        caller_class: the asker's class: every cache is partitioned by it.
        content_hash: identifies the text; with the caller's class it keys every cache.
        kind: "pdf" cites pages; other kinds cite sections (none when there is one).
        out_cap: the answer's maximum length in characters.
        private: a document fetched with the caller's own headers: no cache is read or
            written (no digest, no embeddings: retrieval stays BM25), and its index is
            dropped once ranked.
    """

    caller_class: str
    content_hash: str
    pages: tuple[str, ...]
    kind: str
    title: str
    question: str
    out_cap: int
    private: bool = False

    @property
    def key(self) -> tuple[str, str]:
        """The document's key on its DigestActor and in the embeddings' cache."""
        return (self.content_hash, self.caller_class)


async def digest(svc: Runtime, asked: Asked) -> DigestAnswer:
    """Answer the question `asked` about a document.

    Raises:
        SiftError: only when sift itself cannot answer (a component down); a failing model
        gives the extractive answer with a warning instead.
    """
    started = time.monotonic()
    cfg = svc.cfg
    model = model_name(cfg)
    qkey = question_key(asked.question)
    content_hash, caller_class = asked.key
    hit = None
    if not asked.private:
        hit = await svc.held.cache_or(
            None, lambda s: s.digest_get(content_hash, caller_class, qkey, model)
        )
    if hit is not None:
        metrics.digest_outcome("cached")
        metrics.DIGEST_SECONDS.observe(time.monotonic() - started)
        return DigestAnswer(**hit, cached=True)

    result, outcome = await _answer(svc, asked)
    if outcome != "fallback" and not asked.private:  # the model may be back for the next ask
        record = result.record()
        await svc.held.cache_or(
            None, lambda s: s.digest_put(content_hash, caller_class, qkey, model, record)
        )
    metrics.digest_outcome(outcome)
    metrics.DIGEST_SECONDS.observe(time.monotonic() - started)
    await _maybe_prune(svc)
    return result


async def _answer(svc: Runtime, asked: Asked) -> tuple[DigestAnswer, str]:
    """The digest and its outcome: the document indexed on its DigestActor, its chunks ranked
    (by BM25, or hybrid once embedded), the model asked or the extractive answer given."""
    cfg, model = svc.cfg, model_name(svc.cfg)
    key, text, question, out_cap = asked.key, asked.pages, asked.question, asked.out_cap
    content_hash, private = asked.content_hash, asked.private
    refs = svc.roles.digesters()
    ref = refs[zlib.crc32(content_hash.encode()) % len(refs)]
    info: IndexInfo = await ask(ref, lambda r: Prepare(key, text, r), ACTOR_DEADLINE)
    n = len(info.chunks)
    unit = unit_of(asked.kind, len(text))
    room = prompt.budget(cfg.digest.max_input_tokens, question)
    full = model != EXTRACTIVE and info.tokens <= room

    mkey = embed_key(cfg.embed)
    embedded, query_vector, vectors = await _vectors(svc, key, info, question, full, private)
    ranked: Ranked = await ask(
        ref,
        lambda r: Rank(
            key,
            text,
            question,
            room,
            full,
            out_cap,
            unit,
            r,
            mkey,
            query_vector,
            vectors,
            keep=not private,
        ),
        ACTOR_DEADLINE,
    )
    answer, warning, outcome = ranked.extractive, None, EXTRACTIVE
    if model != EXTRACTIVE and n > 0:  # no text, nothing to ask a model about
        user = prompt.user_message(
            asked.title, unit, len(text), question, ranked.excerpts, excerpts=not full
        )
        answer, warning, outcome = await _model_answer(svc, user, out_cap, answer)
    result = DigestAnswer(
        answer=_cut(answer, out_cap),
        model=model if outcome == "model" else EXTRACTIVE,
        retrieval=ranked.retrieval,
        chunks=ranked.used if outcome == "model" else min(n, 8),
        embedded=f"{min(embedded, n)}/{n}",
        warning=warning,
    )
    return result, outcome


async def _vectors(
    svc: Runtime,
    key: tuple[str, str],
    info: IndexInfo,
    question: str,
    full: bool,
    private: bool,
) -> tuple[int, tuple[float, ...] | None, tuple[bytes, ...] | None]:
    """The chunks embedded so far; once all are, the question's vector for a hybrid ranking,
    and the chunks' vectors when the index does not hold them yet. Fewer: their build starts
    (nobody waits for it) and this ranking stays BM25."""
    cfg, n = svc.cfg, len(info.chunks)
    content_hash, caller_class = key
    mkey = embed_key(cfg.embed)
    if not cfg.embed.endpoint or n <= 1 or private:
        return 0, None, None
    embedded = await svc.held.cache_or(0, lambda s: s.embed_count(content_hash, caller_class, mkey))
    query_vector: tuple[float, ...] | None = None
    vectors: tuple[bytes, ...] | None = None
    if embedded >= n and not full:
        query_vector = await _query_vector(cfg.embed, question)
        if query_vector is not None and mkey not in info.models:
            got = await svc.held.store(lambda s: s.embed_vectors(content_hash, caller_class, mkey))
            vectors = tuple(got)
    elif embedded < n and not full:
        build = EmbedBuild(
            (content_hash, caller_class, mkey),
            tuple(c.text for c in info.chunks),
            asyncio.get_running_loop(),
        )
        svc.roles.embed().tell(build)
    return embedded, query_vector, vectors


async def _model_answer(
    svc: Runtime, user: str, out_cap: int, extractive: str
) -> tuple[str, str | None, str]:
    """The model's answer, or the `extractive` one with a warning when the model fails: the
    answer, its warning, its outcome."""
    try:
        return await _ask_model(svc, user, out_cap), None, "model"
    except llm.ModelError as exc:
        log.warning("digest model failed: %s", exc)
        warning = f"the model failed ({exc}); this is an extractive answer instead"
        return extractive, warning, "fallback"


async def _query_vector(cfg: EmbedConfig, question: str) -> tuple[float, ...] | None:
    """The question's embedding, or None (then ranking stays BM25) if the endpoint fails."""
    try:
        [vector] = await llm.embed(
            cfg.endpoint,
            cfg.model,
            [question],
            api_key_env=cfg.api_key_env,
            timeout=min(cfg.timeout, QUERY_EMBED_TIMEOUT),
        )
    except llm.ModelError as exc:
        log.warning("embedding a question failed: %s", exc)
        return None
    return tuple(vector)


async def _ask_model(svc: Runtime, user: str, out_cap: int) -> str:
    """One chat completion behind the digest gate; waiting counts against the model timeout."""
    d = svc.cfg.digest
    gate = _state(svc).gate
    deadline = time.monotonic() + d.timeout
    try:
        async with asyncio.timeout(d.timeout):
            await gate.acquire()
    except TimeoutError:
        raise llm.ModelError("busy") from None
    try:
        completion = await llm.chat(
            d.endpoint,
            d.model,
            prompt.SYSTEM,
            user,
            api_key_env=d.api_key_env,
            timeout=max(1.0, deadline - time.monotonic()),
            max_tokens=min(4096, max(256, out_cap // 4)),
        )
    finally:
        gate.release()
    metrics.DIGEST_TOKENS.labels("sent").inc(
        completion.tokens_in or chunks.estimate_tokens(prompt.SYSTEM + user)
    )
    metrics.DIGEST_TOKENS.labels("received").inc(
        completion.tokens_out or chunks.estimate_tokens(completion.text)
    )
    return completion.text


async def _maybe_prune(svc: Runtime) -> None:
    state = _state(svc)
    if time.monotonic() - state.pruned_at < PRUNE_EVERY:
        return
    state.pruned_at = time.monotonic()
    older_than = time.time() - 2 * svc.cfg.cache.ttl
    await svc.held.cache_or(None, lambda s: s.digest_prune(older_than))
