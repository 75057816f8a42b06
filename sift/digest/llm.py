"""An OpenAI-compatible client for chat completions and embeddings, on the event loop.

Requests go through Tornado's own (non-curl) async client, created per call: it never blocks
the loop, never reads proxy variables, and is tied to no loop beyond the call. The endpoints
are the operator's configuration, not user input, so the SSRF guard does not apply to them.
Nothing here logs a prompt, a question or an answer; errors say only what failed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import msgspec
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.simple_httpclient import SimpleAsyncHTTPClient

CHAT_BODY_CAP = 4 * 1024 * 1024
EMBED_BODY_CAP = 64 * 1024 * 1024


class ModelError(Exception):
    """The model endpoint failed; the message is safe to log and to show (no text in it)."""


class _Message(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    message: _Message


class _Usage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _ChatResponse(msgspec.Struct):
    choices: list[_Choice]
    model: str = ""
    usage: _Usage | None = None


class _Embedding(msgspec.Struct):
    embedding: list[float]
    index: int = 0


class _EmbedResponse(msgspec.Struct):
    data: list[_Embedding]


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int
    tokens_out: int


def url_for(endpoint: str, path: str) -> str:
    """`endpoint` may be the base (`…/v1`) or the full URL of the call (`…/v1/<path>`)."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/" + path) else f"{endpoint}/{path}"


def _headers(api_key_env: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    key = os.environ.get(api_key_env, "") if api_key_env else ""
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


async def _post(url: str, body: object, api_key_env: str, timeout: float, cap: int) -> bytes:
    client = SimpleAsyncHTTPClient(force_instance=True, max_body_size=cap)
    request = HTTPRequest(
        url,
        method="POST",
        headers=_headers(api_key_env),
        body=msgspec.json.encode(body),
        connect_timeout=min(timeout, 10.0),
        request_timeout=timeout,
        follow_redirects=False,
        decompress_response=True,
    )
    try:
        response = await client.fetch(request)
    except HTTPClientError as exc:
        if exc.code == 599:
            raise ModelError("timed out" if "Timeout" in str(exc) else "unreachable") from None
        raise ModelError(f"HTTP {exc.code}") from None
    except OSError as exc:
        raise ModelError(f"unreachable ({type(exc).__name__})") from None
    except ValueError:
        raise ModelError("endpoint is not a usable URL") from None
    finally:
        client.close()
    return response.body or b""


async def chat(
    endpoint: str,
    model: str,
    system: str,
    user: str,
    *,
    api_key_env: str = "",
    timeout: float = 60.0,
    max_tokens: int = 1024,
) -> Completion:
    """One chat completion at temperature 0; raises ModelError on any failure."""
    body: dict[str, object] = {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "temperature": 0,
        "max_tokens": max_tokens,
    }
    if model:
        body["model"] = model
    raw = await _post(
        url_for(endpoint, "chat/completions"), body, api_key_env, timeout, CHAT_BODY_CAP
    )
    try:
        resp = msgspec.json.decode(raw, type=_ChatResponse)
    except msgspec.DecodeError:
        raise ModelError("answer is not a chat completion") from None
    text = (resp.choices[0].message.content or "").strip() if resp.choices else ""
    if not text:
        raise ModelError("empty answer")
    usage = resp.usage or _Usage()
    return Completion(text, usage.prompt_tokens, usage.completion_tokens)


async def embed(
    endpoint: str, model: str, texts: list[str], *, api_key_env: str = "", timeout: float = 30.0
) -> list[list[float]]:
    """Embeddings of `texts`, in their order; raises ModelError on any failure."""
    body: dict[str, object] = {"input": texts}
    if model:
        body["model"] = model
    raw = await _post(url_for(endpoint, "embeddings"), body, api_key_env, timeout, EMBED_BODY_CAP)
    try:
        resp = msgspec.json.decode(raw, type=_EmbedResponse)
    except msgspec.DecodeError:
        raise ModelError("answer is not an embeddings response") from None
    if len(resp.data) != len(texts):
        raise ModelError(f"{len(resp.data)} embeddings for {len(texts)} inputs")
    ordered = sorted(resp.data, key=lambda e: e.index)
    dims = {len(e.embedding) for e in ordered}
    if len(dims) != 1 or 0 in dims:
        raise ModelError("embeddings of different or zero dimensions")
    return [e.embedding for e in ordered]
