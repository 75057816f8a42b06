"""A fake OpenAI-compatible model server (Tornado on 127.0.0.1:0, in a thread) for digest tests.

`/v1/chat/completions` records every request and answers deterministically like a careful
model: it finds the document line that shares most words with the question and quotes it with
the page marker above it, as `(p. N)`. `/v1/embeddings` answers with a hashed bag of words and
character trigrams (a lexical stand-in for a real embedding model). `down` makes every call
answer 500; `replies` are canned chat answers given first, in order; `hold_chat` /
`hold_embeddings` park those calls until released.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web

DIM = 1024
_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "the of and to in what does did how is was a at for by which when where why much many long "
    "into do"
)
_STOP = set(_STOP_WORDS.split())


def _bucket(feature: str) -> tuple[int, float]:
    h = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    return int.from_bytes(h[:4], "little") % DIM, (1.0 if h[4] & 1 else -1.0)


def fake_embedding(text: str) -> list[float]:
    """Hashed word and character-trigram features, unit length: deterministic and offline."""
    vec = [0.0] * DIM
    for word in _WORD.findall(text.lower()):
        if word in _STOP:
            continue
        i, sign = _bucket("w:" + word)
        vec[i] += 2 * sign
        padded = f"#{word}#"
        for j in range(len(padded) - 2):
            i, sign = _bucket("c:" + padded[j : j + 3])
            vec[i] += sign
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


def fake_answer(user: str) -> str:
    """The sentence of the document that best matches the question, cited by its page."""
    doc, _, question = user.rpartition("Question:")
    wanted = {w for w in _WORD.findall(question.lower()) if w not in _STOP}
    best, best_page, best_score = "", 1, 0
    # Pages are what lies between markers; lines inside a page are wrapped text.
    pieces = re.split(r"^--- page (\d+) ---$", doc, flags=re.MULTILINE)
    pages = [(1, pieces[0])] + [
        (int(n), t) for n, t in zip(pieces[1::2], pieces[2::2], strict=True)
    ]
    for page, text in pages:
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(text.split())):
            score = len(wanted & set(_WORD.findall(sentence.lower())))
            if score > best_score:
                best, best_page, best_score = sentence.strip(), page, score
    if not best:
        return "The document does not say."
    return f"{best} (p. {best_page})"


class FakeModel:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host  # another loopback address keeps it apart from the origin's
        self.chats: list[dict[str, Any]] = []
        self.embed_calls = 0
        self.embedded_texts = 0
        self.down = False
        self.replies: list[str] = []  # canned answers, used first (e.g. JSON for extraction)
        self.hold_embeddings = False
        self.hold_chat = False
        self.chat_arrived = threading.Event()
        self.chat_inflight = 0
        self.chat_max_inflight = 0
        self._released: asyncio.Event | None = None
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="fake-llm")
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def prompts(self) -> list[str]:
        return [m["content"] for c in self.chats for m in c["messages"]]

    def start(self) -> FakeModel:
        self._thread.start()
        self._ready.wait(10)
        return self

    def release(self) -> None:
        """Let every parked call go on (and stop parking new ones)."""
        self.hold_embeddings = self.hold_chat = False
        if self._released is not None:
            self.loop.call_soon_threadsafe(self._released.set)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._released = asyncio.Event()
        fake = self

        class Chat(tornado.web.RequestHandler):
            gone = False

            def on_connection_close(self) -> None:
                self.gone = True  # the client gave up (its timeout): answer nobody

            async def post(self) -> None:
                body = json.loads(self.request.body)
                fake.chats.append(body)
                fake.chat_inflight += 1
                fake.chat_max_inflight = max(fake.chat_max_inflight, fake.chat_inflight)
                fake.chat_arrived.set()
                try:
                    if fake.hold_chat:
                        assert fake._released is not None
                        await fake._released.wait()
                    if not self.gone:
                        self._answer(body)
                finally:
                    fake.chat_inflight -= 1

            def _answer(self, body: dict[str, Any]) -> None:
                if fake.down:
                    self.set_status(500)
                    self.finish({"error": {"message": "model is down"}})
                    return
                user = body["messages"][-1]["content"]
                text = fake.replies.pop(0) if fake.replies else fake_answer(user)
                self.finish(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "model": body.get("model", "fake"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": text},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": len(user) // 4,
                            "completion_tokens": len(text) // 4,
                        },
                    }
                )

        class Embeddings(tornado.web.RequestHandler):
            async def post(self) -> None:
                body = json.loads(self.request.body)
                if fake.hold_embeddings:
                    assert fake._released is not None
                    await fake._released.wait()
                fake.embed_calls += 1
                if fake.down:
                    self.set_status(500)
                    self.finish({"error": {"message": "model is down"}})
                    return
                texts = body["input"]
                fake.embedded_texts += len(texts)
                data = [
                    {"object": "embedding", "index": i, "embedding": fake_embedding(t)}
                    for i, t in enumerate(texts)
                ]
                self.finish({"object": "list", "data": data, "model": body.get("model", "")})

        app = tornado.web.Application(
            [(r"/v1/chat/completions", Chat), (r"/v1/embeddings", Embeddings)],
            log_function=lambda handler: None,  # its 500s are on purpose
        )
        self.server = tornado.httpserver.HTTPServer(app, max_body_size=64 * 1024 * 1024)
        sockets = tornado.netutil.bind_sockets(0, self.host)
        self.port = sockets[0].getsockname()[1]
        self.server.add_sockets(sockets)
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()

    def stop(self) -> None:
        self.release()

        async def shutdown() -> None:
            self.server.stop()
            await self.server.close_all_connections()

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    model = FakeModel().start()
    yield model
    model.stop()


def refused_url() -> str:
    """An endpoint on loopback where nothing listens: connections are refused at once."""
    [sock] = tornado.netutil.bind_sockets(0, "127.0.0.1")
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/v1"
