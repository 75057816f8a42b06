"""A GET of an endpoint the operator configured (SearXNG), reached directly.

A caller's URL goes through the guard and the FetchActor. The operator's own endpoints are not
caller input: they are reached at exactly their configured scheme://host:port, without the
guard — opening `guard.allow_prefixes` for them would open that network to every caller — and
never beyond it: a redirect is answered as it is, not followed. Tornado's own client, created
per call: it never blocks the loop and never reads proxy variables (the model endpoints are
reached the same way, `sift.digest.llm`).
"""

from __future__ import annotations

from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.simple_httpclient import SimpleAsyncHTTPClient

from sift.core.errors import UpstreamError, UpstreamTimeout


async def get(
    url: str, what: str, *, timeout: float, cap: int, user_agent: str
) -> tuple[int, bytes]:
    """(status, body) of `url`, any status; a body over `cap` bytes is cut off. `what` names
    the endpoint in errors.

    Raises:
        UpstreamTimeout: no answer within `timeout` seconds.
        UpstreamError: unreachable, or the connection closed early (a body over `cap`).
    """
    client = SimpleAsyncHTTPClient(force_instance=True, max_body_size=cap)
    request = HTTPRequest(
        url,
        user_agent=user_agent,
        connect_timeout=min(timeout, 10.0),
        request_timeout=timeout,
        follow_redirects=False,
        decompress_response=True,
    )
    try:
        response = await client.fetch(request, raise_error=False)
    except HTTPClientError as exc:  # 599: the connection, not the endpoint, failed
        if "Timeout" in str(exc):
            raise UpstreamTimeout(f"{what}: no answer within {timeout:.0f} s") from None
        raise UpstreamError(
            f"{what}: the connection closed early (an answer over {cap} bytes is cut off)"
        ) from None
    except OSError as exc:
        raise UpstreamError(f"{what} is unreachable ({type(exc).__name__})") from None
    finally:
        client.close()
    return response.code, response.body or b""
